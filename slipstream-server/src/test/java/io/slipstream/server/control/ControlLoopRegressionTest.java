package io.slipstream.server.control;

import static io.slipstream.model.testing.Runs.aRun;
import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.FaultTolerance;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.testing.FakeExecutor;
import io.slipstream.model.RunRecord;
import io.slipstream.model.testing.Runs;
import io.slipstream.store.Store;
import io.slipstream.store.memory.InMemoryStore;
import io.slipstream.testing.TestingClock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Behaviour of the control loop before the lifecycle rewrite (7c4d738) that the rewrite must keep. */
class ControlLoopRegressionTest {
    private final TestingClock clock = new TestingClock();
    private Store store;
    private FakeExecutor executor;
    private ControlLoop loop;

    @BeforeEach
    void setUp() {
        store = new InMemoryStore();
        store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of("team-a", null), new WorkspaceSpec(List.of())), clock.instant()));
        executor = new FakeExecutor(clock, 1, 8);
        loop = newLoop();
    }

    private ControlLoop newLoop() {
        return new ControlLoop(LoopParts.of(store, executor, clock));
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    private RunRecord run(RunId id) {
        return store.runs().get(id).orElseThrow();
    }

    private RunRecord updated(RunRecord run) {
        return store.write(tx -> tx.updateRun(run));
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

    private static FaultTolerance maxPreemptions(int max) {
        FaultTolerance d = FaultTolerance.DEFAULT;
        return new FaultTolerance(d.runType(), d.maxRestarts(), max, d.maxNodeLost(), d.maxHangs(), d.backoffBase(), d.backoffCap(),
                d.retryExitCodes(), d.retryPatterns(), d.retryReasons(), d.otherFailures(), d.sameErrorLimit(), d.hangTimeout(), d.exitHangTimeout());
    }

    /**
     * The setup of ControlLoopTest's latecomer case: an owner reclaims 4 GPUs from a borrower of 6; while the
     * borrower stops, a higher-priority latecomer of another quota waits for 4 GPUs; then the borrower is gone.
     */
    private record Reclaim(RunId owner, RunId borrower, RunId latecomer) {
    }

    private Reclaim reclaimWithLatecomer(FaultTolerance borrowerPolicy) {
        quota("team-a", "gpu", 4);
        quota("team-c", "gpu", 6);
        quota("team-b", "gpu", 0);
        RunId cRunning = submitIn("team-c", aJob("job").gpus(2).cpu(1).memoryGi(8).quota("gpu").spec());
        RunId borrower = submitIn("team-b", aJob("job").gpus(6).cpu(1).memoryGi(8).quota("gpu").idle(IdleMode.OnlyIdle)
                .faultTolerance(borrowerPolicy).spec());
        loop.cycle();
        assertThat(run(cRunning).state()).isEqualTo(RunState.RUNNING);
        assertThat(run(borrower).state()).isEqualTo(RunState.RUNNING);
        RunId owner = submitIn("team-a", aJob("job").gpus(4).cpu(1).memoryGi(8).quota("gpu").spec());
        loop.cycle();
        assertThat(run(borrower).reclaimFor()).isEqualTo(owner);
        RunId latecomer = submitIn("team-c", aJob("job").gpus(4).cpu(1).memoryGi(8).quota("gpu").priority(10).spec());
        loop.cycle();
        assertThat(run(latecomer).state()).isEqualTo(RunState.QUEUED);
        executor.confirmTerminated(new InstanceId(borrower, 1, 0), 143);
        loop.cycle();
        return new Reclaim(owner, borrower, latecomer);
    }

    /**
     * The old loop forgot a reclaimed owner as soon as it was admitted. Now the queued borrower keeps naming it
     * ({@code reclaimFor}) until the borrower itself is admitted again, so when the owner is queued again later (a
     * restart after a lost node), it is still "reclaimed" and jumps ahead of a higher-priority run it reclaimed
     * nothing for.
     */
    @Test

    void anOwnerOnceAdmittedHasNoReclaimPriorityWhenItIsQueuedAgainLater() {
        Reclaim r = reclaimWithLatecomer(FaultTolerance.DEFAULT);
        assertThat(run(r.owner()).state()).isEqualTo(RunState.RUNNING);
        assertThat(run(r.latecomer()).state()).isEqualTo(RunState.QUEUED);
        assertThat(run(r.borrower()).state()).isEqualTo(RunState.QUEUED);
        loop.cycle(); // the owner runs on

        // The owner's node is lost: it is queued again at once (no backoff after a lost node).
        executor.report(new InstanceReport.Lost(new InstanceId(r.owner(), 1, 0), "gone", true, clock.instant()));
        loop.cycle();
        assertThat(run(r.owner()).attempt()).isEqualTo(2);
        // Six GPUs are free; by priority the latecomer goes first: nothing was reclaimed for the owner this time.
        assertThat(run(r.latecomer()).state()).as("latecomer; borrower's reclaimFor: %s", run(r.borrower()).reclaimFor())
                .isEqualTo(RunState.RUNNING);
        assertThat(run(r.owner()).state()).isEqualTo(RunState.QUEUED);
    }

    /**
     * The old loop made the owner "reclaimed" once its victim's instances were gone, whether the victim was queued
     * again or failed for its preemption budget. Now the owner is derived from a queued victim's reclaimFor, which a
     * victim that ends FAILED no longer has: the capacity it gave back goes to the higher-priority latecomer.
     */
    @Test

    void theCapacityAVictimOutOfPreemptionsGivesBackStillGoesToTheRunItWasReclaimedFor() {
        Reclaim r = reclaimWithLatecomer(maxPreemptions(0));
        assertThat(run(r.borrower()).state()).isEqualTo(RunState.FAILED);
        assertThat(run(r.borrower()).reason()).startsWith("PreemptionBudgetExhausted");
        assertThat(run(r.owner()).state()).as("owner, queue status %s", loop.queueStatus().of(r.owner())).isEqualTo(RunState.RUNNING);
        assertThat(run(r.latecomer()).state()).isEqualTo(RunState.QUEUED);
    }

    /** An executor whose next {@code terminate} calls fail (a Kubernetes API that is briefly unreachable, say). */
    private static final class FlakyStops implements io.slipstream.executor.Executor {
        private final FakeExecutor fake;
        int failuresLeft;
        InstanceId alwaysFailing;
        int calls;
        int sent;

        FlakyStops(FakeExecutor fake) {
            this.fake = fake;
        }

        @Override
        public List<io.slipstream.executor.NodeInfo> nodes() {
            return fake.nodes();
        }

        @Override
        public io.slipstream.api.run.Endpoint endpoint(InstanceId id, String workspace, String name, String node, int ports,
                                                       java.util.Set<Integer> taken) {
            return fake.endpoint(id, workspace, name, node, ports, taken);
        }

        @Override
        public void fence(long epoch) {
            fake.fence(epoch);
        }

        @Override
        public void setListener(java.util.function.Consumer<InstanceReport> listener) {
            fake.setListener(listener);
        }

        @Override
        public java.util.Map<String, String> launch(io.slipstream.executor.LaunchSpec spec) {
            return fake.launch(spec);
        }

        @Override
        public java.util.Optional<java.util.Map<String, String>> find(InstanceId id) {
            return fake.find(id);
        }

        @Override
        public void adopt(java.util.Map<InstanceId, java.util.Map<String, String>> handles) {
            fake.adopt(handles);
        }

        @Override
        public void terminate(InstanceId id, java.util.Map<String, String> handle, Duration gracePeriod, String reason) {
            calls++;
            if (id.equals(alwaysFailing)) {
                throw new io.slipstream.executor.ExecutorException("node of " + id + " unreachable");
            }
            if (failuresLeft > 0) {
                failuresLeft--;
                throw new io.slipstream.executor.ExecutorException("executor unreachable");
            }
            fake.terminate(id, handle, gracePeriod, reason);
            sent++;
        }

        @Override
        public boolean deliversIdentity() {
            return true;
        }

        @Override
        public boolean refreshIdentity(InstanceId id, java.util.Map<String, String> handle, List<io.slipstream.executor.IdentityToken> tokens) {
            return fake.refreshIdentity(id, handle, tokens);
        }

        @Override
        public io.slipstream.executor.Activity activity(InstanceId id, java.util.Map<String, String> handle) {
            return fake.activity(id, handle);
        }

        @Override
        public io.slipstream.executor.LogChunk readLog(InstanceId id, java.util.Map<String, String> handle, io.slipstream.executor.LogStream stream,
                                                       long offset, int maxBytes) {
            return fake.readLog(id, handle, stream, offset, maxBytes);
        }

        @Override
        public io.slipstream.executor.LogChunk readLogTail(InstanceId id, java.util.Map<String, String> handle,
                                                           io.slipstream.executor.LogStream stream, int maxBytes) {
            return fake.readLogTail(id, handle, stream, maxBytes);
        }

        @Override
        public void forget(RunId runId) {
            fake.forget(runId);
        }

        @Override
        public void close() {
            fake.close();
        }
    }

    /**
     * After a restart the old loop sent every stop again from its cycles (its memory of stops sent was gone), and a
     * stop that failed failed the cycle, which was tried again. Now the stops recorded as sent are sent again once,
     * in {@code recover()}, and a failure there is only logged: the instance is never told to stop again, and if the
     * previous process died before its grace period ended (nothing left to SIGKILL it), the run stays TERMINATING.
     * (Failed at 8937412; passes since d007f66, which clears stopRequestedAt so that the run's next cycle sends it.)
     */
    @Test
    void aStopThatCannotBeSentAgainAfterARestartIsTriedAgainByTheCycles() {
        FlakyStops flaky = new FlakyStops(executor);
        RunId id = submitIn("team-a", aJob("job").spec());
        ControlLoop first = new ControlLoop(LoopParts.of(store, flaky, clock));
        first.cycle();
        updated(run(id).withCancelRequestedAt(clock.instant()));
        first.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.TERMINATING);
        assertThat(store.runs().instancesOf(id).get(0).stopRequestedAt()).isNotNull();
        assertThat(flaky.sent).isEqualTo(1);

        // The server restarts; its first attempt to tell the instance again fails.
        ControlLoop second = new ControlLoop(LoopParts.of(store, flaky, clock));
        flaky.failuresLeft = 1;
        second.recover();
        for (int i = 0; i < 3; i++) {
            clock.advance(Duration.ofSeconds(1));
            try {
                second.cycle();
            } catch (RuntimeException e) {
                // the loop logs it and goes on
            }
        }
        assertThat(flaky.calls).isGreaterThanOrEqualTo(2);
        assertThat(flaky.sent).as("the stop reached the executor again after the failed attempt").isEqualTo(2);
    }

    /**
     * As above, and the store cannot record that the stop is to be sent again either: recovery used to log that and
     * go on, so the stop was neither sent nor left to a cycle, and the run waited for its instance forever
     * (ControlLoopChaosTest found it, seeds 22 and 40). Now recovery fails, and is tried again whole, as its runner
     * tries it until it is done.
     */
    @Test
    void aStopThatCannotBeSentAgainNorRecordedAsUnsentAfterARestartIsSentWhenRecoveryIsTriedAgain() {
        FlakyStops flaky = new FlakyStops(executor);
        RunId id = submitIn("team-a", aJob("job").spec());
        ControlLoop first = new ControlLoop(LoopParts.of(store, flaky, clock));
        first.cycle();
        updated(run(id).withCancelRequestedAt(clock.instant()));
        first.cycle();
        assertThat(flaky.sent).isEqualTo(1);

        ControlLoop second = new ControlLoop(LoopParts.of(store, flaky, clock));
        InMemoryStore memory = (InMemoryStore) store;
        flaky.failuresLeft = 1;
        memory.simulateOutageAfter(3); // its active instances, the nodes down and the run; then the record of the resend fails
        int tries = 0;
        while (true) { // as the runner does
            tries++;
            try {
                second.recover();
                break;
            } catch (io.slipstream.store.StoreUnavailableException e) {
                memory.simulateOutage(false);
            }
        }
        assertThat(tries).as("recovery failed once, then was done").isEqualTo(2);
        assertThat(flaky.sent).as("the stop reached the executor again when recovery was tried again").isEqualTo(2);
    }

    /**
     * The old loop remembered each stop as soon as it was sent. Now the stops of one step are recorded together after
     * the last is sent: when one of them cannot be sent, those that were are not recorded either and go out again
     * every cycle (each resets the grace period's deadline of a local instance: it is never killed while the other
     * one keeps failing).
     */
    @Test
    void aStopThatWasSentIsNotSentAgainWhenAnotherOfTheSameStepFails() {
        FlakyStops flaky = new FlakyStops(executor);
        ControlLoop loop = new ControlLoop(LoopParts.of(store, flaky, clock));
        RunId id = submitIn("team-a", aJob("job").replicas(2).spec());
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.RUNNING);
        flaky.alwaysFailing = new InstanceId(id, 1, 1);
        updated(run(id).withCancelRequestedAt(clock.instant()));
        for (int i = 0; i < 3; i++) {
            clock.advance(Duration.ofSeconds(1));
            try {
                loop.cycle();
            } catch (RuntimeException e) {
                // the loop logs it and goes on
            }
        }
        assertThat(executor.terminated()).as("rank 0 was told once").containsExactly(new InstanceId(id, 1, 0));
    }

    /**
     * InOrder groups without a probe all start in one cycle (ControlLoopTest has three). A job may have 64 node
     * groups; each group's launch is one step of RunSteps, whose bound of 32 steps a run that behaves "never reaches".
     */
    @Test
    void fortyInOrderGroupsWithoutProbesStartInOneCycleLikeThree() {
        var job = aJob("job").inOrder().cpu(0.5).group("g0");
        for (int g = 1; g < 40; g++) {
            job = job.andGroup("g" + g);
        }
        RunId id = submitIn("team-a", job.spec());
        loop.cycle();
        assertThat(executor.launched().size()).isEqualTo(40);
        assertThat(run(id).state()).isEqualTo(RunState.RUNNING);
    }

    /**
     * Upgrade: an instance of a TERMINATING run stored before V7 has no stopRequestedAt although its stop was sent.
     * After the restart it is told again once (as the old loop did after any restart), not every cycle.
     */
    @Test
    void aStopSentBeforeTheUpgradeIsSentAgainOnceAfterIt() {
        RunId id = submitIn("team-a", aJob("job").spec());
        loop.cycle();
        updated(run(id).terminating(RunState.CANCELLED, "CancelRequested")); // as the old server left it
        assertThat(store.runs().instancesOf(id).get(0).stopRequestedAt()).isNull();
        loop = newLoop();
        loop.recover();
        for (int i = 0; i < 3; i++) {
            clock.advance(Duration.ofSeconds(1));
            loop.cycle();
        }
        assertThat(executor.terminated()).containsExactly(new InstanceId(id, 1, 0));
        executor.confirmTerminated(new InstanceId(id, 1, 0), 143);
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.CANCELLED);
    }

    /**
     * A run of more than 64 instances is launched over several cycles. Its instances start InParallel: the metadata
     * file of each says every instance is started (docs/distributed.md: only InOrder lists instances of groups not
     * started yet with "started": false). The old launcher passed the whole startable set to the metadata; now only
     * the instances launched in this cycle count as started.
     */
    @Test
    void inParallelEveryInstanceOfAHugeRunIsListedAsStartedInTheFirstInstancesMetadata() {
        executor = new FakeExecutor(clock, 2, 8);
        loop = newLoop();
        int replicas = Launcher.LAUNCHES_PER_CYCLE + 10;
        RunId id = submitIn("team-a", aJob("huge").replicas(replicas).cpu(0.1).memoryGi(1).spec());
        loop.cycle();
        var metadata = executor.launched().get(new InstanceId(id, 1, 0)).metadata();
        assertThat(metadata.instances().stream().filter(i -> !i.started()).map(i -> i.rank()).toList())
                .as("ranks listed as not started").isEmpty();
    }

    /**
     * A crash between an instance's launch and its record leaves it started but PENDING in the store; the next
     * server launches it again, and that launch fails (the executor unreachable for a moment). The run used to fail
     * with the instance recorded as never launched while its process lived on (ControlLoopChaosTest found it, seed
     * 7): now a failed launch asks the executor whether the instance had started, and takes it as launched if so.
     */
    @Test
    void aLaunchThatFailsForAnInstanceACrashLeftStartedTakesItAsLaunched() {
        InMemoryStore memory = (InMemoryStore) store;
        RunId id = null;
        for (int calls = 0; calls < 40; calls++) { // the store call after the launch: its record fails there
            setUp();
            memory = (InMemoryStore) store;
            id = submitIn("team-a", aJob("job").spec());
            memory.simulateOutageAfter(calls);
            try {
                loop.cycle();
            } catch (io.slipstream.store.StoreUnavailableException e) {
                // the server dies here
            }
            memory.simulateOutage(false);
            if (!executor.live().isEmpty() && store.runs().instancesOf(id).get(0).state() == io.slipstream.api.run.InstanceState.PENDING) {
                break;
            }
        }
        assertThat(executor.live()).as("launched, not recorded").containsOnlyKeys(new InstanceId(id, 1, 0));
        loop = newLoop();
        loop.recover();
        executor.failNextLaunches(1);
        loop.cycle();

        assertThat(run(id).state()).isEqualTo(RunState.RUNNING);
        assertThat(store.runs().instancesOf(id)).singleElement().satisfies(instance -> {
            assertThat(instance.state()).isEqualTo(io.slipstream.api.run.InstanceState.RUNNING);
            assertThat(instance.handle()).isEqualTo(executor.find(instance.id()).orElseThrow());
        });
    }
}
