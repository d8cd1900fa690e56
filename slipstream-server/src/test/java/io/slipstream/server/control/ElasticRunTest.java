package io.slipstream.server.control;

import static io.slipstream.model.testing.Runs.aRun;
import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.testing.FakeExecutor;
import io.slipstream.model.EventType;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.model.testing.Runs;
import io.slipstream.store.Store;
import io.slipstream.store.memory.InMemoryStore;
import io.slipstream.testing.TestingClock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An elastic run through the control loop, one cycle at a time, over an in-memory store and a steered executor: team
 * B's run (1 to 4 instances of one GPU, on idle capacity) grows onto 4 idle one-GPU nodes; team A's guaranteed run of
 * 2 reclaims 2 of them: B shrinks to 2 without going back to the queue, its survivors restarted in place in a world of
 * 2; A finishes: B grows back to 4 (docs/elastic.md).
 */
class ElasticRunTest {
    private final TestingClock clock = new TestingClock();
    private Store store;
    private FakeExecutor executor;
    private ControlLoop loop;

    @BeforeEach
    void setUp() {
        store = new InMemoryStore();
        executor = new FakeExecutor(clock, 4, 1).restartingInPlace();
        loop = new ControlLoop(LoopParts.of(store, executor, clock));
        quota("team-a", "gpu", 4);
        quota("team-b", "gpu", 0);
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    @Test
    void anElasticBorrowerShrinksForAReclaimAndGrowsBackWithoutLeavingItsAttempt() {
        RunId b = submitIn("team-b", aJob("train").replicas(4).minReplicas(1).gpus(1).cpu(1).memoryGi(8).quota("gpu").idle(IdleMode.OnlyIdle)
                .preemptionGrace(Duration.ofSeconds(20)).spec());
        loop.cycle();
        assertThat(run(b).state()).isEqualTo(RunState.RUNNING);
        assertThat(run(b).world().members()).as("admitted whole: 4 idle nodes").containsExactly(0, 1, 2, 3);
        assertThat(env(b, 3)).containsEntry("WORLD_SIZE", "4").containsEntry("RANK", "3").containsEntry("SLIPSTREAM_WORLD_VERSION", "1");

        RunId a = submitIn("team-a", aJob("owner").replicas(2).gpus(1).cpu(1).memoryGi(8).quota("gpu").spec());
        loop.cycle();
        RunRecord shrinking = run(b);
        assertThat(shrinking.state()).as("shrunk, not stopped").isEqualTo(RunState.RUNNING);
        assertThat(shrinking.attempt()).isEqualTo(1);
        assertThat(shrinking.world().members()).containsExactly(0, 1);
        assertThat(shrinking.world().changing()).isTrue();
        assertThat(executor.terminations().get(new InstanceId(b, 1, 3))).startsWith("Shrunk: ").endsWith("PT20S");
        assertThat(executor.terminations().get(new InstanceId(b, 1, 0))).startsWith("WorldChange: the run goes on with 2 instance(s) in world 2");
        assertThat(run(a).state()).as("waits for the capacity its reclaim frees").isEqualTo(RunState.QUEUED);

        executor.confirmTerminated(new InstanceId(b, 1, 2), 143);
        executor.confirmTerminated(new InstanceId(b, 1, 3), 143);
        loop.cycle();
        assertThat(run(a).state()).as("the shrunk instances are gone: the owner runs").isEqualTo(RunState.RUNNING);
        assertThat(run(b).world().changing()).as("its survivors still save").isTrue();

        executor.confirmTerminated(new InstanceId(b, 1, 0), 143);
        executor.confirmTerminated(new InstanceId(b, 1, 1), 143);
        loop.cycle();
        RunRecord shrunk = run(b);
        assertThat(shrunk.world().changing()).isFalse();
        assertThat(shrunk.faults().failures()).as("no failure").isZero();
        assertThat(shrunk.preemptions()).as("no preemption: it never left").isZero();
        assertThat(instances(b)).filteredOn(i -> i.id().rank() < 2).allSatisfy(i -> {
            assertThat(i.state()).isEqualTo(InstanceState.RUNNING);
            assertThat(i.restarts()).isEqualTo(1);
        });
        assertThat(env(b, 1)).containsEntry("WORLD_SIZE", "2").containsEntry("RANK", "1").containsEntry("SLIPSTREAM_WORLD_VERSION", "2");
        assertThat(executor.launched().get(new InstanceId(b, 1, 1)).metadata().instances()).hasSize(2);

        executor.exit(new InstanceId(a, 1, 0), 0);
        executor.exit(new InstanceId(a, 1, 1), 0);
        loop.cycle();
        assertThat(run(a).state()).isEqualTo(RunState.SUCCEEDED);
        assertThat(run(b).world().members()).as("grown back onto the freed nodes").containsExactly(0, 1, 2, 3);
        assertThat(run(b).world().version()).isEqualTo(3);
        assertThat(executor.terminations().get(new InstanceId(b, 1, 0))).startsWith("WorldChange: the run goes on with 4 instance(s) in world 3");
        executor.confirmTerminated(new InstanceId(b, 1, 0), 143);
        executor.confirmTerminated(new InstanceId(b, 1, 1), 143);
        loop.cycle();
        assertThat(instances(b)).extracting(InstanceRecord::state).containsOnly(InstanceState.RUNNING);
        assertThat(env(b, 3)).containsEntry("WORLD_SIZE", "4").containsEntry("RANK", "3").containsEntry("SLIPSTREAM_WORLD_VERSION", "3");
        assertThat(run(b).attempt()).isEqualTo(1);
        assertThat(run(b).state()).isEqualTo(RunState.RUNNING);
        assertThat(store.runs().events(b, 0, 100)).filteredOn(e -> e.type() == EventType.WorldChanged).extracting(RunEvent::reason)
                .containsExactly("Shrunk", "WorldStarted", "Grown", "WorldStarted");

        for (int rank = 0; rank < 4; rank++) {
            executor.exit(new InstanceId(b, 1, rank), 0);
        }
        loop.cycle();
        assertThat(run(b).state()).isEqualTo(RunState.SUCCEEDED);
    }

    @Test
    void aGuaranteedElasticRunsExtrasOnIdleCapacityStandOnTheirOwn() {
        quota("team-c", "small", 1);
        RunId c = submitIn("team-c", aJob("train").replicas(3).minReplicas(1).gpus(1).cpu(1).memoryGi(8).quota("small")
                .idle(IdleMode.Acceptable).spec());
        loop.cycle();
        RunRecord run = run(c);
        assertThat(run.realTimeResources()).isEqualTo(RealTimeResources.InQuota);
        assertThat(run.world().members()).containsExactly(0, 1, 2);
        assertThat(run.world().borrowed()).as("beyond its guarantee of one GPU").containsExactly(1, 2);
        assertThat(run.world().notInQuota(run.realTimeResources())).isEqualTo(2);
    }

    // --- what a hostile tenant (its workload, or a run of its own that it cancels) may try during a change of size ---

    private RunId borrowerOfFour() {
        return borrowerOfFour(1);
    }

    private RunId borrowerOfFour(int minimum) {
        RunId b = submitIn("team-b", aJob("train").replicas(4).minReplicas(minimum).gpus(1).cpu(1).memoryGi(8).quota("gpu").idle(IdleMode.OnlyIdle)
                .preemptionGrace(Duration.ofSeconds(20)).spec());
        loop.cycle();
        assertThat(run(b).world().members()).containsExactly(0, 1, 2, 3);
        return b;
    }

    @Test
    void aBorrowerOneOfWhoseMembersSucceededEarlyIsStillStoppedForAReclaim() {
        RunId b = borrowerOfFour();
        executor.exit(new InstanceId(b, 1, 3), 0); // done early on purpose: neither grown nor shrunk again from now on
        loop.cycle();
        assertThat(run(b).state()).isEqualTo(RunState.RUNNING);

        RunId a = submitIn("team-a", aJob("owner").replicas(2).gpus(1).cpu(1).memoryGi(8).quota("gpu").spec());
        loop.cycle();
        assertThat(run(b).state()).as("it cannot shrink, so it is stopped whole: borrowed nodes go back").isEqualTo(RunState.TERMINATING);
        for (int rank = 0; rank < 3; rank++) {
            executor.confirmTerminated(new InstanceId(b, 1, rank), 143);
        }
        loop.cycle();
        loop.cycle();
        assertThat(run(a).state()).as("the owner gets its guarantee back").isEqualTo(RunState.RUNNING);
    }

    @Test
    void aGuaranteedRunOneOfWhoseMembersSucceededStillCountsAgainstItsQuota() {
        quota("team-c", "small", 2);
        RunId c = submitIn("team-c", aJob("train").replicas(2).minReplicas(1).gpus(1).cpu(1).memoryGi(8).quota("small").idle(IdleMode.Disabled).spec());
        loop.cycle();
        assertThat(run(c).realTimeResources()).isEqualTo(RealTimeResources.InQuota);
        executor.exit(new InstanceId(c, 1, 1), 0);
        loop.cycle();

        RunId more = submitIn("team-c", aJob("more").replicas(2).gpus(1).cpu(1).memoryGi(8).quota("small").idle(IdleMode.Disabled).spec());
        loop.cycle();
        loop.cycle();
        assertThat(run(more).state()).as("its first run still holds one of the quota's 2 GPUs").isEqualTo(RunState.QUEUED);
    }

    @Test
    void aMemberThatSucceedsDuringAChangeKeepsItsGpuUntilItStartsAgainThere() {
        RunId b = borrowerOfFour(2);
        RunId a = submitIn("team-a", aJob("owner").replicas(2).gpus(1).cpu(1).memoryGi(8).quota("gpu").spec());
        loop.cycle();
        assertThat(run(b).world().changing()).isTrue();
        executor.exit(new InstanceId(b, 1, 0), 0); // it ended on its own before the notice reached it
        executor.confirmTerminated(new InstanceId(b, 1, 2), 143);
        executor.confirmTerminated(new InstanceId(b, 1, 3), 143);
        // Another borrower waits for idle capacity: the GPU of the member that ended is not idle, it starts again there.
        RunId other = submitIn("team-b", aJob("other").replicas(1).gpus(1).cpu(1).memoryGi(8).quota("gpu").idle(IdleMode.OnlyIdle).spec());
        loop.cycle();
        assertThat(run(a).state()).isEqualTo(RunState.RUNNING);
        assertThat(run(other).state()).as("nothing else is placed on the GPU its member starts again on").isEqualTo(RunState.QUEUED);
        executor.confirmTerminated(new InstanceId(b, 1, 1), 143);
        loop.cycle();
        loop.cycle();
        assertThat(run(b).world().changing()).isFalse();
        assertThat(run(b).world().members()).containsExactly(0, 1);
        assertThat(instance(b, 0).state()).as("started again in place, in the new world").isIn(InstanceState.PENDING, InstanceState.RUNNING);
        assertNoGpuHeldTwice();
        assertThat(run(other).state()).isEqualTo(RunState.QUEUED);
    }

    @Test
    void aGrowIsNotDecidedWhileAShrinksWorldChangeIsInFlight() {
        RunId b = borrowerOfFour();
        RunId a = submitIn("team-a", aJob("owner").replicas(2).gpus(1).cpu(1).memoryGi(8).quota("gpu").spec());
        loop.cycle();
        RunRecord owner = run(a);
        store.write(tx -> tx.updateRun(owner.withCancelRequestedAt(clock.instant()))); // the owner gives up: its capacity is idle again
        executor.confirmTerminated(new InstanceId(b, 1, 2), 143);
        executor.confirmTerminated(new InstanceId(b, 1, 3), 143);
        org.assertj.core.api.Assertions.assertThatCode(loop::cycle).as("the cycle, for every team").doesNotThrowAnyException();
        assertThat(run(a).state()).isEqualTo(RunState.CANCELLED);
        assertThat(run(b).world().members()).as("its survivors still save: not grown meanwhile").containsExactly(0, 1);
        assertThat(run(b).world().version()).isEqualTo(2);

        executor.confirmTerminated(new InstanceId(b, 1, 0), 143);
        executor.confirmTerminated(new InstanceId(b, 1, 1), 143);
        loop.cycle();
        loop.cycle();
        assertThat(run(b).world().members()).as("grown back once world 2 started").containsExactly(0, 1, 2, 3);
        assertThat(run(b).world().version()).isEqualTo(3);
    }

    @Test
    void aFailedMembersSlotIsNotGrownOverBeforeItsFailureIsJudged() {
        var policy = new io.slipstream.api.spec.FaultTolerance(io.slipstream.api.spec.FaultTolerance.RunType.Sync, 3, null, 3, 3,
                Duration.ofSeconds(10), Duration.ofMinutes(1), List.of(new io.slipstream.api.spec.FaultTolerance.ExitCodeRange(137, 137)), List.of(),
                List.of(), io.slipstream.api.spec.FaultTolerance.FailureAction.Fail, 0, null, null);
        RunId b = submitIn("team-b", aJob("train").replicas(4).minReplicas(1).gpus(1).cpu(1).memoryGi(8).quota("gpu").idle(IdleMode.OnlyIdle)
                .faultTolerance(policy).spec());
        loop.cycle();
        executor.exit(new InstanceId(b, 1, 3), 1); // a failure its rules do not retry
        loop.cycle(); // its peers may still fail too: judged a moment later
        clock.advance(Duration.ofSeconds(2));
        loop.cycle();
        assertThat(instance(b, 3).state()).as("the failure is not replaced by a new launch").isEqualTo(InstanceState.FAILED);
        assertThat(run(b).world().version()).as("not grown").isEqualTo(1);
        assertThat(run(b).outcome() == RunState.FAILED || run(b).state() == RunState.FAILED).as("judged: the run fails").isTrue();
    }

    @Test
    void aRestartOfTheServerDuringAChangeTellsTheInstancesTheSameNoticeAgain() {
        RunId b = borrowerOfFour();
        submitIn("team-a", aJob("owner").replicas(2).gpus(1).cpu(1).memoryGi(8).quota("gpu").spec());
        loop.cycle();
        assertThat(executor.terminations().get(new InstanceId(b, 1, 0))).startsWith("WorldChange: ");
        loop = new ControlLoop(LoopParts.of(store, executor, clock)); // a new server process over the same store and cluster
        loop.recover();
        assertThat(executor.terminations().get(new InstanceId(b, 1, 0))).as("a survivor").startsWith("WorldChange: ").endsWith(" / PT20S");
        assertThat(executor.terminations().get(new InstanceId(b, 1, 3))).as("a slot removed").startsWith("Shrunk: ").endsWith(" / PT20S");
    }

    @Test
    void whatAShrinkFreesGoesToTheRunItWasShrunkForWhileTheSurvivorsStillSave() {
        quota("team-c", "small", 2);
        RunId b = borrowerOfFour();
        RunId a = submitIn("team-a", aJob("owner").replicas(2).gpus(1).cpu(1).memoryGi(8).quota("gpu").spec());
        loop.cycle();
        executor.confirmTerminated(new InstanceId(b, 1, 2), 143);
        executor.confirmTerminated(new InstanceId(b, 1, 3), 143);
        // A run of higher priority comes in now: the capacity freed is the owner's, as a stopped victim's is.
        RunId late = submitIn("team-c", aJob("late").replicas(2).gpus(1).cpu(1).memoryGi(8).quota("small").priority(10)
                .idle(IdleMode.Disabled).spec());
        loop.cycle();
        assertThat(run(b).world().changing()).as("its survivors still save").isTrue();
        assertThat(run(a).state()).as("the run B was shrunk for gets what B gave back").isEqualTo(RunState.RUNNING);
        assertThat(run(late).state()).isEqualTo(RunState.QUEUED);
    }

    private InstanceRecord instance(RunId id, int rank) {
        return instances(id).stream().filter(i -> i.id().rank() == rank && i.id().attempt() == run(id).attempt()).findFirst().orElseThrow();
    }

    /** No GPU of a node is held by two instances that have not ended. */
    private void assertNoGpuHeldTwice() {
        Map<String, Integer> held = new java.util.HashMap<>();
        for (InstanceRecord i : store.runs().instancesOfActiveRuns()) {
            if (!i.state().isFinal()) {
                for (int gpu : i.gpus()) {
                    assertThat(held.merge(i.node() + "/" + gpu, 1, Integer::sum)).as(i.node() + " GPU " + gpu + " (" + i.id() + ")").isEqualTo(1);
                }
            }
        }
    }

    /** Data no check should have let through (a minimum of none) never stops the cycle for the other teams' runs. */
    @Test
    void aRunWhoseMinimumTheCoreRefusesIsScheduledRigidAndTheOthersAreNotHeldUp() {
        RunId bad = submitIn("team-b", aJob("bad").replicas(2).minReplicas(0).gpus(1).cpu(1).memoryGi(8).quota("gpu").idle(IdleMode.OnlyIdle).spec());
        RunId good = submitIn("team-a", aJob("good").replicas(1).gpus(1).cpu(1).memoryGi(8).quota("gpu").spec());
        loop.cycle();
        assertThat(run(good).state()).isEqualTo(RunState.RUNNING);
        assertThat(run(bad).state()).isEqualTo(RunState.RUNNING);
        assertThat(instances(bad)).as("placed whole, as a rigid run").hasSize(2);
    }

    private Map<String, String> env(RunId id, int rank) {
        LaunchSpec spec = executor.launched().get(new InstanceId(id, 1, rank));
        return spec.env();
    }

    private void quota(String workspace, String name, int gpus) {
        if (store.documents().get(io.slipstream.api.spec.Kind.Workspace, null, workspace).isEmpty()) {
            store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of(workspace, null), new WorkspaceSpec(List.of())), clock.instant()));
        }
        var min = new io.slipstream.api.spec.Resources(gpus * 4000L, gpus * (32L << 30), gpus, "sim-gpu");
        store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of(name, workspace),
                new io.slipstream.api.spec.QuotaSpec(io.slipstream.api.spec.QuotaType.Dedicated, min, null, null)), clock.instant()));
    }

    private RunId submitIn(String workspace, JobSpec spec) {
        RunRecord run = aRun().workspace(workspace).spec(spec).createdAt(clock.instant()).build();
        clock.advance(Duration.ofSeconds(1));
        return store.write(tx -> tx.createRun(run, Runs.created(run))).id();
    }

    private RunRecord run(RunId id) {
        return store.runs().get(id).orElseThrow();
    }

    private List<InstanceRecord> instances(RunId id) {
        return store.runs().instancesOf(id);
    }
}
