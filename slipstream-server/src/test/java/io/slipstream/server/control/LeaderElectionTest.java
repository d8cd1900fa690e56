package io.slipstream.server.control;

import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.executor.testing.FakeExecutor;
import io.slipstream.model.EventType;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.store.memory.InMemoryStore;
import io.slipstream.testing.TestingClock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two replicas over one store and one cluster: one leads, the other waits; a leader that stops renewing (paused) is
 * replaced once its lease expires, and when it wakes up its loop is fenced (it stops by itself) and it stands by.
 * The run submitted meanwhile is launched once, by the new leader.
 */
class LeaderElectionTest {
    private static final Duration LEASE = Duration.ofSeconds(10);

    private final TestingClock clock = new TestingClock();
    private final InMemoryStore store = new InMemoryStore();
    private final FakeExecutor.Cluster cluster = new FakeExecutor.Cluster(2, 8);
    private final List<AutoCloseable> closing = new java.util.ArrayList<>();

    private LeaderElection replica(String name) {
        return replica(name, store -> store);
    }

    /** @param storeOfLoop what each term's loop sees of its fenced store */
    private LeaderElection replica(String name, java.util.function.UnaryOperator<io.slipstream.store.Store> storeOfLoop) {
        FakeExecutor executor = new FakeExecutor(cluster, clock, FakeExecutor.Mode.LIFELIKE);
        LeaderElection election = new LeaderElection(store, executor, clock, LEASE, name,
                (fenced, progress, queue) -> new ControlLoop(LoopParts.of(storeOfLoop.apply(fenced), executor, clock).withTick(Duration.ofMillis(50))
                        .withShared(progress, queue)));
        closing.add(election);
        closing.add(executor);
        return election;
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : closing) {
            c.close();
        }
    }

    @Test
    void aPausedLeaderIsReplacedAndFencedWhenItWakes() {
        store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of("team-a", null), new WorkspaceSpec(List.of())), clock.instant()));
        LeaderElection a = replica("a");
        LeaderElection b = replica("b");
        a.tick();
        b.tick();
        assertThat(a.status().role()).isEqualTo(LeaderElection.Role.LEADER);
        assertThat(b.status().role()).isEqualTo(LeaderElection.Role.STANDBY);
        assertThat(b.status().lease().holder()).isEqualTo("a");

        clock.advance(LEASE.plusSeconds(1)); // a is "paused": it renews nothing
        b.tick();
        assertThat(b.status().role()).isEqualTo(LeaderElection.Role.LEADER);
        assertThat(store.leases().current().orElseThrow().epoch()).isEqualTo(2);

        RunId run = submit("job");
        await().atMost(Duration.ofSeconds(30)).until(() -> store.runs().get(run).map(RunRecord::state).orElseThrow() == RunState.RUNNING);

        // a wakes up: its loop's next write is fenced and it stops; its next claim finds b leading
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            a.tick();
            assertThat(a.status().role()).isEqualTo(LeaderElection.Role.STANDBY);
        });
        assertThat(a.status().lease().holder()).isEqualTo("b");
        assertThat(store.leases().current().orElseThrow().epoch()).as("a did not take it back").isEqualTo(2);
        assertThat(store.runs().get(run).orElseThrow().attempt()).isEqualTo(1);
    }

    @Test
    void aStandbyClaimsAgainRightWhenTheLeaseItSawEnds() {
        LeaderElection a = replica("a");
        LeaderElection b = replica("b");
        a.tick();
        assertThat(a.nextClaimIn(clock.instant())).as("a leader renews every third of the lease").isEqualTo(LEASE.dividedBy(3));
        clock.advance(Duration.ofSeconds(8));
        b.tick();
        assertThat(b.nextClaimIn(clock.instant())).as("2 s are left of a's lease").isEqualTo(Duration.ofMillis(2020));
        clock.advance(Duration.ofSeconds(1));
        b.tick();
        assertThat(b.nextClaimIn(clock.instant())).isEqualTo(Duration.ofMillis(1020));
    }

    /**
     * A term's loop stuck in a call outlives its close; leading again in this process would let it act at the new
     * epoch (the executor is fenced per process). So the lease goes back until that thread has ended.
     */
    @Test
    void noNewTermWhileTheLastTermsLoopIsStillStuck() throws Exception {
        java.util.concurrent.CountDownLatch unstick = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch stuck = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean sticky = new java.util.concurrent.atomic.AtomicBoolean();
        LeaderElection a = replica("a", fenced -> new io.slipstream.store.InterceptedStore(fenced, (operation, args, proceed) -> {
            if (sticky.get() && operation.equals("runs.active")) {
                stuck.countDown();
                unstick.await(); // a call that does not come back (a hung NFS read, say)
            }
            return proceed.call();
        }));
        LeaderElection b = replica("b");
        a.tick();
        sticky.set(true);
        assertThat(stuck.await(30, java.util.concurrent.TimeUnit.SECONDS)).as("a's loop is stuck").isTrue();
        clock.advance(LEASE.plusSeconds(1));
        b.tick(); // b takes over
        a.tick(); // a steps down; its loop's thread does not end
        b.close(); // b hands the lease back
        a.tick();
        assertThat(a.status().role()).as("a does not lead while its last loop is stuck").isEqualTo(LeaderElection.Role.STANDBY);
        assertThat(store.leases().current().orElseThrow().expiredAt(clock.instant())).as("and hands the lease back").isTrue();

        sticky.set(false);
        unstick.countDown();
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            a.tick();
            assertThat(a.status().role()).isEqualTo(LeaderElection.Role.LEADER);
        });
    }

    /** A database restored from a dump has an older epoch than the executor saw: the leader moves past it at once. */
    @Test
    void aStoreBehindTheExecutorsEpochIsMovedPastIt() {
        FakeExecutor elsewhere = new FakeExecutor(cluster, clock, FakeExecutor.Mode.LIFELIKE);
        closing.add(elsewhere);
        elsewhere.fence(40); // what the executor side saw before the store was restored
        LeaderElection a = replica("a");
        a.tick();
        assertThat(a.status().role()).isEqualTo(LeaderElection.Role.LEADER);
        assertThat(store.leases().current().orElseThrow().epoch()).isEqualTo(41);
    }

    @Test
    void aCleanStopHandsTheLeaseOverAtOnce() {
        LeaderElection a = replica("a");
        LeaderElection b = replica("b");
        a.tick();
        b.tick();
        a.close();
        b.tick(); // no waiting for the lease: a released it
        assertThat(b.status().role()).isEqualTo(LeaderElection.Role.LEADER);
        assertThat(store.leases().current().orElseThrow().epoch()).isEqualTo(2);
    }

    @Test
    void aLeaderThatCannotRenewForAWholeLeaseStepsDown() {
        LeaderElection a = replica("a");
        a.tick();
        store.simulateOutage(true);
        clock.advance(Duration.ofSeconds(5));
        a.tick();
        assertThat(a.status().role()).as("half a lease without renewing: still leads").isEqualTo(LeaderElection.Role.LEADER);
        clock.advance(Duration.ofSeconds(6));
        a.tick();
        assertThat(a.status().role()).isEqualTo(LeaderElection.Role.STANDBY);
        store.simulateOutage(false);
        a.tick();
        assertThat(a.status().role()).as("it leads again, at a new epoch").isEqualTo(LeaderElection.Role.LEADER);
        assertThat(store.leases().current().orElseThrow().epoch()).isEqualTo(2);
    }

    /**
     * Two replicas in containers that share the machine's host name (Kubernetes hostNetwork pods, docker --network
     * host) but not its pids: to each, the other's pid runs nowhere, so its name reads as "a replica of this host
     * that is gone". A live leader's fresh lease must still be waited out; taking it at once fenced a healthy leader
     * at every claim of the other, and the other back (leadership flapped every third of a lease, forever).
     */
    @Test
    void aLiveLeaderInAnotherPidNamespaceWithTheSameHostNameKeepsItsLease() throws Exception {
        String sharedHostName = bareHostName();
        LeaderElection a = replica(sharedHostName + ":" + endedPid() + ":aaaaaa");
        LeaderElection b = replica(sharedHostName + ":" + endedPid() + ":bbbbbb");
        a.tick();
        assertThat(a.status().role()).isEqualTo(LeaderElection.Role.LEADER);
        clock.advance(Duration.ofSeconds(1));
        b.tick();
        clock.advance(Duration.ofSeconds(1));
        a.tick();
        assertThat(b.status().role()).as("a's lease is fresh and a renews it").isEqualTo(LeaderElection.Role.STANDBY);
        assertThat(a.status().role()).isEqualTo(LeaderElection.Role.LEADER);
        assertThat(store.leases().current().orElseThrow().epoch()).as("no change of leader").isEqualTo(1);
    }

    /** The host name as a replica in another container with this host's name reads it (its pid namespace is its own). */
    private static String bareHostName() throws java.io.IOException {
        String host = System.getenv("HOSTNAME");
        if (host == null || host.isBlank()) {
            host = java.nio.file.Files.readString(java.nio.file.Path.of("/etc/hostname")).trim();
        }
        return host.replace(':', '_');
    }

    private static long endedPid() throws Exception {
        Process ended = new ProcessBuilder("true").start();
        ended.waitFor();
        return ended.pid();
    }

    private RunId submit(String job) {
        RunRecord run = RunRecord.queued(RunId.newFor(job), "team-a", job, 1, aJob(job).workspace("team-a").spec(), clock.instant());
        store.write(tx -> tx.createRun(run, RunEvent.of(run.id(), run.createdAt(), EventType.StateChanged, "QUEUED", "Submitted", null, null)));
        return run.id();
    }
}
