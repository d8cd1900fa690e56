package io.slipstream.server.control;

import static io.slipstream.model.testing.Runs.aRun;
import static io.slipstream.model.testing.Runs.anInstance;
import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.executor.InstanceReport;
import io.slipstream.server.config.RunLimits;
import io.slipstream.executor.testing.FakeExecutor;
import io.slipstream.model.testing.Runs;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.EventType;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import io.slipstream.store.memory.InMemoryStore;
import io.slipstream.testing.TestingClock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The control loop driven one cycle at a time, over an in-memory store (held to the store contract) and a scripted executor. */
class ControlLoopTest {
    private final TestingClock clock = new TestingClock();
    private Store store;
    private FakeExecutor executor;
    private ControlLoop loop;
    private RunLimits limits = RunLimits.DEFAULTS;

    @BeforeEach
    void setUp() {
        store = new InMemoryStore(); // the store itself is held to its contract elsewhere
        store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of("team-a", null), new WorkspaceSpec(List.of())), clock.instant()));
        executor = new FakeExecutor(clock, 2, 8);
        loop = newLoop();
    }

    private ControlLoop newLoop() {
        return new ControlLoop(LoopParts.of(store, executor, clock).withLimits(limits));
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    private RunId submit(JobSpec spec) {
        return submitIn("team-a", spec);
    }

    private RunRecord run(RunId id) {
        return store.runs().get(id).orElseThrow();
    }

    private RunRecord updated(RunRecord run) {
        return store.write(tx -> tx.updateRun(run));
    }

    private List<InstanceRecord> instances(RunId id) {
        return store.runs().instancesOf(id);
    }

    @Test
    void admitsLaunchesAndFinishesARun() {
        RunId id = submit(aJob("job").replicas(2).gpus(4).env("LR", "0.1").spec());
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.RUNNING);
        assertThat(instances(id)).extracting(InstanceRecord::state).containsOnly(InstanceState.RUNNING);
        assertThat(executor.launched()).hasSize(2);
        var env = executor.launched().get(new InstanceId(id, 1, 1)).env();
        assertThat(env).containsEntry("LR", "0.1").containsEntry("SLIPSTREAM_RANK", "1").containsEntry("WORLD_SIZE", "2")
                .containsEntry("SLIPSTREAM_RUN_ID", id.value());

        executor.exit(new InstanceId(id, 1, 0), 0);
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.RUNNING);
        executor.exit(new InstanceId(id, 1, 1), 0);
        loop.cycle();
        RunRecord done = run(id);
        assertThat(done.state()).isEqualTo(RunState.SUCCEEDED);
        assertThat(done.finishedAt()).isEqualTo(clock.instant());
        assertThat(store.runs().events(id, 0, 100)).extracting(RunEvent::state)
                .containsSubsequence("QUEUED", "STARTING", "RUNNING", "SUCCEEDED");
    }

    /** The executor is told each group's memory limit; the scheduler counts the request only (a burst is not guaranteed). */
    @Test
    void eachInstanceIsLaunchedWithItsGroupsMemoryLimit() {
        executor = new FakeExecutor(clock, 1, 8);
        loop = newLoop();
        long nodeMemory = executor.nodes().get(0).capacity().memoryBytes();
        RunId id = submit(aJob("job").memoryGi(1).memoryLimitGi(nodeMemory >> 30).andGroup("plain").memoryGi(1).spec());
        RunId beside = submit(aJob("beside").memoryGi(1).spec());
        loop.cycle();
        assertThat(executor.launched().get(new InstanceId(id, 1, 0)).memoryLimit()).isEqualTo(nodeMemory);
        assertThat(executor.launched().get(new InstanceId(id, 1, 1)).memoryLimit()).as("no limits: its request").isEqualTo(1L << 30);
        assertThat(run(beside).state()).as("the limit is not placed: a run fits beside it").isEqualTo(RunState.RUNNING);
    }

    /**
     * An executor that cannot start an instance yet (its image is being pulled) neither fails it nor holds the cycle:
     * the run stays STARTING with nothing recorded, each cycle tries once, and the launch happens once it is ready.
     */
    @Test
    void aLaunchThatCannotStartYetIsTriedAgainAtTheNextCycleWithoutAFailure() {
        executor.notReady();
        RunId id = submit(aJob("job").replicas(2).spec());
        loop.cycle();
        assertThat(executor.notReadyLaunches()).as("each instance tried once this cycle: no busy loop").isEqualTo(2);
        assertThat(run(id).state()).isEqualTo(RunState.STARTING);
        assertThat(instances(id)).extracting(InstanceRecord::state).containsOnly(InstanceState.PENDING);
        assertThat(run(id).attempt()).isEqualTo(1);
        loop.cycle();
        assertThat(executor.notReadyLaunches()).isEqualTo(4);

        executor.ready();
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.RUNNING);
        assertThat(instances(id)).extracting(InstanceRecord::state).containsOnly(InstanceState.RUNNING);
        assertThat(store.runs().events(id, 0, 100)).extracting(RunEvent::type).doesNotContain(io.slipstream.model.EventType.InstanceExited);
    }

    /**
     * An outage that starts after each possible number of store calls of a cycle: the cycle stops there, nothing is
     * launched or stopped that is not recorded first, and once the store is back the run goes on as if nothing had
     * happened (one launch per instance, its exit recorded).
     */
    @Test
    void aStoreOutageAtAnyPointOfACyclePausesTheLoopAndLosesNothing() {
        for (int calls = 0; calls < 60; calls++) {
            setUp();
            InMemoryStore memory = (InMemoryStore) store;
            RunId id = submit(aJob("job").replicas(2).spec());
            memory.simulateOutageAfter(calls);
            boolean failed = false;
            try {
                loop.cycle();
            } catch (io.slipstream.store.StoreUnavailableException e) {
                failed = true;
            }
            memory.simulateOutage(false);
            for (InstanceId launched : executor.launched().keySet()) {
                assertThat(store.runs().instance(launched)).as("outage after %d calls: %s launched but not recorded", calls, launched).isPresent();
            }
            if (!failed) {
                break; // the cycle needed fewer calls than that: every earlier point was tried
            }
            loop.cycle();
            loop.cycle();
            assertThat(run(id).state()).as("outage after %d calls", calls).isEqualTo(RunState.RUNNING);
            assertThat(executor.launched()).hasSize(2);
            executor.exit(new InstanceId(id, 1, 0), 0);
            memory.simulateOutage(true);
            for (int i = 0; i < 3; i++) {
                try {
                    loop.cycle();
                } catch (io.slipstream.store.StoreUnavailableException expected) {
                    // paused
                }
            }
            memory.simulateOutage(false);
            executor.exit(new InstanceId(id, 1, 1), 0);
            loop.cycle();
            assertThat(run(id).state()).as("outage after %d calls: the exits reported during the outage are kept", calls).isEqualTo(RunState.SUCCEEDED);
            tearDown();
        }
    }

    @Test
    void aHugeRunIsLaunchedOverSeveralCyclesSoThatOthersDoNotWaitForAllOfIt() {
        int replicas = Launcher.LAUNCHES_PER_CYCLE * 2 + 10;
        RunId huge = submit(aJob("huge").replicas(replicas).cpu(0.1).memoryGi(1).spec());
        loop.cycle();
        assertThat(executor.launched()).hasSize(Launcher.LAUNCHES_PER_CYCLE);
        RunId small = submit(aJob("small").spec());
        loop.cycle();
        assertThat(executor.launched()).as("the small run started with the next part of the huge one")
                .containsKey(new InstanceId(small, 1, 0)).hasSize(2 * Launcher.LAUNCHES_PER_CYCLE + 1);
        loop.cycle();
        loop.cycle();
        assertThat(executor.launched().keySet().stream().filter(id -> id.runId().equals(huge))).hasSize(replicas);
        assertThat(run(huge).state()).isEqualTo(RunState.RUNNING);
    }

    @Test
    void oneFailedInstanceStopsTheOthersAndFailsTheRunOnceTheyAreGone() {
        RunId id = submit(aJob("job").replicas(3).spec());
        loop.cycle();
        executor.exit(new InstanceId(id, 1, 1), 3);
        loop.cycle();
        RunRecord terminating = run(id);
        assertThat(terminating.state()).isEqualTo(RunState.TERMINATING);
        assertThat(terminating.reason()).isEqualTo("InstanceFailed: main-1 (Exited with code 3)");
        assertThat(executor.terminated()).containsExactlyInAnyOrder(new InstanceId(id, 1, 0), new InstanceId(id, 1, 2));

        loop.cycle(); // nothing new: still waiting, and the stop signal is not sent twice
        assertThat(executor.terminated()).hasSize(2);
        executor.confirmTerminated(new InstanceId(id, 1, 0), 143);
        executor.confirmTerminated(new InstanceId(id, 1, 2), 143);
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.FAILED);
        assertThat(run(id).reason()).contains("main-1 (Exited with code 3)");
        assertThat(instances(id)).extracting(InstanceRecord::state)
                .containsExactly(InstanceState.KILLED, InstanceState.FAILED, InstanceState.KILLED);
    }

    @Test
    void cancellingAQueuedRunEndsItAtOnce() {
        executor = new FakeExecutor(clock, 1, 0);
        loop = newLoop();
        RunId id = submit(aJob("job").gpus(1).spec()); // no node has GPUs: it waits
        loop.cycle();
        assertThat(loop.queueStatus().of(id).reason()).isEqualTo("NoNodeFits");
        updated(run(id).withCancelRequestedAt(clock.instant()));
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.CANCELLED);
        assertThat(executor.launched()).isEmpty();
    }

    @Test
    void cancellingARunningRunWaitsUntilEveryInstanceIsConfirmedGone() {
        RunId id = submit(aJob("job").replicas(2).spec());
        loop.cycle();
        updated(run(id).withCancelRequestedAt(clock.instant()));
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.TERMINATING);
        executor.confirmTerminated(new InstanceId(id, 1, 0), 143);
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.TERMINATING);
        executor.confirmTerminated(new InstanceId(id, 1, 1), 0);
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.CANCELLED);
        assertThat(instances(id)).extracting(InstanceRecord::state).containsOnly(InstanceState.KILLED);
    }

    /** A run whose step fails (its stop cannot be sent) is taken on next cycle, and the other runs are scheduled meanwhile. */
    @Test
    void aRunWhoseStepFailsDoesNotHoldUpTheOthers() {
        RunId cancelled = submit(aJob("job").spec());
        loop.cycle();
        updated(run(cancelled).withCancelRequestedAt(clock.instant()));
        RunId next = submit(aJob("next").spec());
        executor.failNextTerminates(1);
        loop.cycle();
        assertThat(run(next).state()).as("scheduled although another run's step failed").isEqualTo(RunState.RUNNING);
        loop.cycle();
        assertThat(executor.terminated()).as("the stop is sent at the next cycle").contains(new InstanceId(cancelled, 1, 0));
    }

    @Test
    void aLaunchFailureFailsTheRunAndStopsWhatDidStart() {
        executor.refuseLaunchesOn("node-2");
        RunId id = submit(aJob("job").replicas(2).gpus(8).spec()); // one instance per node
        loop.cycle();
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.TERMINATING);
        assertThat(run(id).reason()).contains("LaunchFailed").contains("node-2");
        executor.confirmTerminated(new InstanceId(id, 1, 0), 143);
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.FAILED);
    }

    @Test
    void runsWaitWithAReasonAndStartWhenCapacityFrees() {
        RunId first = submit(aJob("job").replicas(2).gpus(8).spec());
        RunId second = submit(aJob("job").gpus(8).spec());
        loop.cycle();
        assertThat(run(first).state()).isEqualTo(RunState.RUNNING);
        assertThat(run(second).state()).isEqualTo(RunState.QUEUED);
        assertThat(loop.queueStatus().of(second).reason()).isEqualTo("WaitingForIdleCapacity");
        assertThat(loop.queueStatus().of(second).position()).isEqualTo(1);
        executor.exit(new InstanceId(first, 1, 0), 0);
        executor.exit(new InstanceId(first, 1, 1), 0);
        loop.cycle();
        assertThat(run(first).state()).isEqualTo(RunState.SUCCEEDED);
        assertThat(run(second).state()).isEqualTo(RunState.RUNNING);
        assertThat(loop.queueStatus().of(second)).isNull();
    }

    @Test
    void gpusOfRunningInstancesAreNotGivenTwice() {
        RunId first = submit(aJob("job").gpus(3).spec());
        RunId second = submit(aJob("job").gpus(3).spec());
        loop.cycle();
        List<Integer> a = instances(first).get(0).gpus();
        List<Integer> b = instances(second).get(0).gpus();
        assertThat(a).hasSize(3).doesNotContainAnyElementsOf(instances(second).get(0).node().equals(instances(first).get(0).node()) ? b : List.of());
    }

    @Test
    void afterARestartRunningInstancesAreAdoptedAndPlacedOnesAreLaunchedOnce() {
        RunId id = submit(aJob("job").replicas(2).spec());
        loop.cycle();
        // A new server process: it re-attaches before doing anything else.
        loop = newLoop();
        loop.recover();
        assertThat(executor.adoptions()).singleElement().satisfies(handles -> assertThat(handles).hasSize(2));
        executor.report(new InstanceReport.Exited(new InstanceId(id, 1, 0), 0, false, clock.instant()));
        executor.report(new InstanceReport.Exited(new InstanceId(id, 1, 1), 5, false, clock.instant()));
        loop.cycle();
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.FAILED);
        assertThat(instances(id)).extracting(InstanceRecord::exitCode).containsExactly(0, 5);
    }

    @Test
    void aCancelAcceptedBeforeACrashIsFinishedAfterIt() {
        RunId id = submit(aJob("job").spec());
        loop.cycle();
        updated(run(id).withCancelRequestedAt(clock.instant()));
        loop = newLoop(); // crash before any cycle saw the cancel
        loop.recover();
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.TERMINATING);
        assertThat(executor.terminated()).containsExactly(new InstanceId(id, 1, 0));
        executor.confirmTerminated(new InstanceId(id, 1, 0), 143);
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.CANCELLED);
    }

    /**
     * A running run the scheduler cannot be shown (its stored group has no resources: data no check should let through)
     * never stops the cycle for the others, and the node it holds is not given to them.
     */
    @Test
    void aRunTheSchedulerCannotBeShownKeepsItsNodeAndTheOthersAreStillScheduled() {
        executor = new FakeExecutor(clock, 2, 8);
        loop = newLoop();
        JobSpec unresolved = new JobSpec(0, List.of(new io.slipstream.api.spec.NodeGroupSpec("w", 1, "gone-shape", null, List.of("x"), Map.of(),
                null, null, null)));
        RunRecord broken = aRun().workspace("team-a").spec(unresolved).createdAt(clock.instant()).admitted(
                io.slipstream.api.run.RealTimeResources.InQuota, clock.instant()).running(clock.instant()).build();
        store.write(tx -> tx.createRun(broken, Runs.created(broken)));
        store.write(tx -> tx.createInstances(List.of(anInstance(broken).group("w", 0).node("node-1").gpus(0).running(Map.of("pid", "1"), clock.instant()).build())));
        RunId first = submit(aJob("whole").gpus(8).spec());
        RunId second = submit(aJob("whole").gpus(8).spec());
        loop.cycle();
        assertThat(run(first).state()).isEqualTo(RunState.RUNNING);
        assertThat(instances(first).get(0).node()).as("not on the node the broken run holds").isEqualTo("node-2");
        assertThat(run(second).state()).isEqualTo(RunState.QUEUED);
    }

    private void quota(String workspace, String name, int gpus) {
        if (store.documents().get(io.slipstream.api.spec.Kind.Workspace, null, workspace).isEmpty()) {
            store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of(workspace, null), new WorkspaceSpec(List.of())), clock.instant()));
        }
        // Dedicated quotas of one GPU model share their idle capacity with each other.
        var min = new io.slipstream.api.spec.Resources(gpus * 4000L, gpus * (32L << 30), gpus, "sim-gpu");
        store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of(name, workspace),
                new io.slipstream.api.spec.QuotaSpec(io.slipstream.api.spec.QuotaType.Dedicated, min, null, null)), clock.instant()));
    }

    private RunId submitIn(String workspace, JobSpec spec) {
        RunRecord run = aRun().workspace(workspace).spec(spec).createdAt(clock.instant()).build();
        clock.advance(Duration.ofSeconds(1));
        return store.write(tx -> tx.createRun(run, Runs.created(run))).id();
    }

    @Test
    void aGuaranteedRunReclaimsItsCapacityAndTheBorrowerIsRequeuedAndRunsAgain() {
        executor = new FakeExecutor(clock, 1, 8);
        loop = newLoop();
        quota("team-a", "gpu", 8);
        quota("team-b", "gpu", 0);
        RunId borrower = submitIn("team-b", aJob("job").gpus(8).cpu(4).memoryGi(32).quota("gpu").idle(io.slipstream.api.spec.IdleMode.OnlyIdle).spec());
        loop.cycle();
        assertThat(run(borrower).state()).isEqualTo(RunState.RUNNING);
        assertThat(run(borrower).realTimeResources()).isEqualTo(io.slipstream.api.run.RealTimeResources.NotInQuota);

        JobSpec guaranteed = aJob("job").gpus(8).cpu(4).memoryGi(32).quota("gpu").spec();
        RunId owner = submitIn("team-a", guaranteed);
        loop.cycle();
        RunRecord preempting = run(borrower);
        assertThat(preempting.state()).isEqualTo(RunState.TERMINATING);
        assertThat(preempting.reclaimFor()).isEqualTo(owner);
        assertThat(executor.terminations().get(new InstanceId(borrower, 1, 0))).contains("Reclaimed").contains("PT30S");
        assertThat(loop.queueStatus().of(owner).reason()).isEqualTo("WaitingForReclaim");

        executor.confirmTerminated(new InstanceId(borrower, 1, 0), 143);
        loop.cycle();
        RunRecord requeued = run(borrower);
        assertThat(requeued.state()).isEqualTo(RunState.QUEUED);
        assertThat(requeued.attempt()).isEqualTo(2);
        assertThat(requeued.preemptions()).isEqualTo(1);
        assertThat(instances(borrower)).extracting(InstanceRecord::state).containsExactly(InstanceState.RESOURCE_PREEMPTED);
        assertThat(run(owner).state()).as("owner, queue status %s", loop.queueStatus().of(owner)).isEqualTo(RunState.RUNNING);
        assertThat(run(owner).realTimeResources()).isEqualTo(io.slipstream.api.run.RealTimeResources.InQuota);
        assertThat(loop.queueStatus().of(borrower).reason()).isEqualTo("WaitingForIdleCapacity");

        executor.exit(new InstanceId(owner, 1, 0), 0);
        loop.cycle();
        loop.cycle();
        assertThat(run(borrower).state()).isEqualTo(RunState.RUNNING);
        assertThat(instances(borrower)).extracting(i -> i.id().attempt()).containsExactly(1, 2);
    }

    @Test
    void theCapacityAReclaimFreesGoesToTheRunItWasReclaimedForNotToAHigherPriorityLatecomer() {
        executor = new FakeExecutor(clock, 1, 8);
        loop = newLoop();
        quota("team-a", "gpu", 4);
        quota("team-c", "gpu", 6);
        quota("team-b", "gpu", 0);
        RunId cRunning = submitIn("team-c", aJob("job").gpus(2).cpu(1).memoryGi(8).quota("gpu").spec());
        RunId borrower = submitIn("team-b", aJob("job").gpus(6).cpu(1).memoryGi(8).quota("gpu").idle(io.slipstream.api.spec.IdleMode.OnlyIdle).spec());
        loop.cycle();
        assertThat(run(cRunning).state()).isEqualTo(RunState.RUNNING);
        assertThat(run(borrower).state()).isEqualTo(RunState.RUNNING);

        RunId owner = submitIn("team-a", aJob("job").gpus(4).cpu(1).memoryGi(8).quota("gpu").spec());
        loop.cycle();
        assertThat(run(borrower).reclaimFor()).isEqualTo(owner);
        // While the borrower stops, team-c asks for 4 GPUs at a higher priority: its guarantee has room, the node none.
        RunId latecomer = submitIn("team-c", aJob("job").gpus(4).cpu(1).memoryGi(8).quota("gpu").priority(10).spec());
        loop.cycle();
        assertThat(run(latecomer).state()).isEqualTo(RunState.QUEUED);

        executor.confirmTerminated(new InstanceId(borrower, 1, 0), 143);
        loop.cycle();
        // Six GPUs are free: by priority the latecomer would take four and the owner would have to reclaim again.
        assertThat(run(owner).state()).isEqualTo(RunState.RUNNING);
        assertThat(run(latecomer).state()).isEqualTo(RunState.QUEUED);
    }

    @Test
    void anAcceptableRunOnIdleCapacityIsPromotedWhenItsQuotaFrees() {
        quota("team-a", "gpu", 8);
        RunId first = submitIn("team-a", aJob("job").gpus(8).cpu(4).memoryGi(32).quota("gpu").spec());
        RunId second = submitIn("team-a", aJob("job").gpus(8).cpu(4).memoryGi(32).quota("gpu").idle(io.slipstream.api.spec.IdleMode.Acceptable).spec());
        loop.cycle();
        assertThat(run(first).realTimeResources()).isEqualTo(io.slipstream.api.run.RealTimeResources.InQuota);
        assertThat(run(second).realTimeResources()).isEqualTo(io.slipstream.api.run.RealTimeResources.NotInQuota);
        executor.exit(new InstanceId(first, 1, 0), 0);
        loop.cycle();
        loop.cycle();
        assertThat(run(second).realTimeResources()).isEqualTo(io.slipstream.api.run.RealTimeResources.InQuota);
        assertThat(store.runs().events(second, 0, 100)).extracting(RunEvent::type).contains(EventType.Promoted);
    }

    @Test
    void aCancelWhileBeingPreemptedEndsTheRunCancelled() {
        executor = new FakeExecutor(clock, 1, 8);
        loop = newLoop();
        quota("team-a", "gpu", 8);
        quota("team-b", "gpu", 0);
        RunId borrower = submitIn("team-b", aJob("job").gpus(8).cpu(4).memoryGi(32).quota("gpu").idle(io.slipstream.api.spec.IdleMode.OnlyIdle).spec());
        loop.cycle();
        submitIn("team-a", aJob("job").gpus(8).cpu(4).memoryGi(32).quota("gpu").spec());
        loop.cycle();
        RunId owner = run(borrower).reclaimFor();
        updated(run(borrower).withCancelRequestedAt(clock.instant()));
        loop.cycle();
        assertThat(run(borrower).outcome()).isEqualTo(RunState.CANCELLED);
        assertThat(run(borrower).reclaimFor()).as("its resources still go to the owner").isEqualTo(owner);
        executor.confirmTerminated(new InstanceId(borrower, 1, 0), 143);
        loop.cycle();
        assertThat(run(borrower).state()).isEqualTo(RunState.CANCELLED);
    }

    @Test
    void duplicateAndLateReportsAreHarmless() {
        RunId id = submit(aJob("job").spec());
        loop.cycle();
        InstanceId instance = new InstanceId(id, 1, 0);
        executor.exit(instance, 0);
        executor.exit(instance, 1);
        executor.report(new InstanceReport.Running(instance, Map.of("fake", "x"), clock.instant()));
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.SUCCEEDED);
        assertThat(instances(id).get(0).exitCode()).isZero();
    }

    @Test
    void aCancelWhileStartingStopsWhatWasLaunchedAndForgetsWhatWasNot() {
        // A server crashed after admitting a run (STARTING, instances PENDING) and launching only its first instance.
        RunId id = submit(aJob("job").replicas(2).spec());
        RunRecord starting = updated(run(id).admitted(io.slipstream.api.run.RealTimeResources.NotInQuota, "Admitted", clock.instant()));
        store.write(tx -> tx.createInstances(anInstance(starting).gang(2)));
        executor.pretendLaunched(new io.slipstream.executor.LaunchSpec(new InstanceId(id, 1, 0), "main-0", "node-1", List.of(), List.of("true"),
                Map.of(), null, null));
        store.write(tx -> tx.updateRun(starting.withCancelRequestedAt(clock.instant())));

        loop = newLoop();
        loop.recover();
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.TERMINATING);
        assertThat(executor.terminated()).containsExactly(new InstanceId(id, 1, 0));
        assertThat(instances(id).get(1).reason()).isEqualTo("Never started");
        executor.confirmTerminated(new InstanceId(id, 1, 0), 143);
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.CANCELLED);
        assertThat(executor.launched()).as("the unlaunched instance was never started").hasSize(1);
    }

    // --- timeouts ---

    @Test
    void aRunThatOutlivesItsMaxRuntimeIsStoppedAndEndsTimedOutAndQueuedTimeDoesNotCount() {
        executor = new FakeExecutor(clock, 1, 8);
        loop = newLoop();
        RunId blocker = submit(aJob("job").gpus(8).spec());
        RunId limited = submit(aJob("job").gpus(8).maxRuntime(Duration.ofMinutes(10)).spec());
        loop.cycle();
        clock.advance(Duration.ofHours(1)); // waits an hour in the queue
        executor.exit(new InstanceId(blocker, 1, 0), 0);
        loop.cycle();
        loop.cycle();
        assertThat(run(limited).state()).isEqualTo(RunState.RUNNING);

        clock.advance(Duration.ofMinutes(9).plusSeconds(59));
        loop.cycle();
        assertThat(run(limited).state()).isEqualTo(RunState.RUNNING);
        clock.advance(Duration.ofSeconds(1));
        loop.cycle();
        RunRecord stopping = run(limited);
        assertThat(stopping.state()).isEqualTo(RunState.TERMINATING);
        assertThat(stopping.outcome()).isEqualTo(RunState.TIMED_OUT);
        assertThat(executor.terminations().get(new InstanceId(limited, 1, 0))).contains("Timeout").contains("PT30S");

        executor.confirmTerminated(new InstanceId(limited, 1, 0), 137);
        loop.cycle();
        RunRecord timedOut = run(limited);
        assertThat(timedOut.state()).isEqualTo(RunState.TIMED_OUT);
        assertThat(timedOut.reason()).isEqualTo("Timeout: ran 10m, longer than its maxRuntime of 10m");
    }

    @Test
    void aRunWhoseInstancesAllSucceededIsNotTimedOutWhenItsEndIsSeenLate() {
        RunId id = submit(aJob("job").maxRuntime(Duration.ofMinutes(10)).spec());
        loop.cycle();
        clock.advance(Duration.ofMinutes(9).plusSeconds(59));
        executor.exit(new InstanceId(id, 1, 0), 0);
        clock.advance(Duration.ofSeconds(2)); // the cycle that sees the exit comes after the limit
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.SUCCEEDED);
    }

    @Test
    void afterARestartARunIsNotTimedOutBeforeItsAdoptedInstancesHaveReported() {
        RunId id = submit(aJob("job").maxRuntime(Duration.ofMinutes(10)).spec());
        loop.cycle();
        clock.advance(Duration.ofHours(1)); // the server was down; the instance finished meanwhile, in time
        loop = newLoop();
        loop.recover();
        loop.cycle();
        assertThat(run(id).state()).as("its exit is not known yet").isEqualTo(RunState.RUNNING);
        executor.exit(new InstanceId(id, 1, 0), 0);
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.SUCCEEDED);

        RunId silent = submit(aJob("job").maxRuntime(Duration.ofMinutes(10)).spec());
        loop.cycle();
        loop = newLoop();
        loop.recover();
        clock.advance(Duration.ofMinutes(11)); // an executor that never reports does not hold timeouts forever
        loop.cycle();
        clock.advance(Duration.ofMinutes(2));
        loop.cycle();
        assertThat(run(silent).outcome()).isEqualTo(RunState.TIMED_OUT);
    }

    @Test
    void withoutItsOwnLimitARunGetsTheInstallationsMaximum() {
        limits = new RunLimits(Duration.ofSeconds(30), Duration.ofMinutes(10), Duration.ofHours(2), Duration.ofDays(30));
        loop = newLoop();
        RunId id = submit(aJob("job").spec());
        loop.cycle();
        clock.advance(Duration.ofHours(2));
        loop.cycle();
        assertThat(run(id).outcome()).isEqualTo(RunState.TIMED_OUT);
        assertThat(run(id).reason()).contains("maxRuntime of 2h");
    }

    @Test
    void aNodeGroupsOwnLimitEndsTheWholeRun() {
        RunId id = submit(aJob("job").group("train").andGroup("eval").groupMaxRuntime(Duration.ofMinutes(5)).spec());
        loop.cycle();
        clock.advance(Duration.ofMinutes(5));
        loop.cycle();
        assertThat(run(id).outcome()).isEqualTo(RunState.TIMED_OUT);
        assertThat(run(id).reason()).isEqualTo("Timeout: eval-0 ran longer than node group eval's maxRuntime of 5m");
    }

    @Test
    void timeRunBeforeAPreemptionCountsUnlessTheLimitIsPerAttempt() {
        for (boolean perAttempt : new boolean[] {false, true}) {
            executor = new FakeExecutor(clock, 1, 8);
            loop = newLoop();
            String workspace = perAttempt ? "team-c" : "team-b";
            quota("owner-of-" + workspace, "gpu", 8);
            quota(workspace, "gpu", 0);
            var borrowing = aJob("job").gpus(8).cpu(4).memoryGi(32).quota("gpu").idle(io.slipstream.api.spec.IdleMode.OnlyIdle)
                    .maxRuntime(Duration.ofMinutes(10));
            RunId borrower = submitIn(workspace, (perAttempt ? borrowing.maxRuntimePerAttempt() : borrowing).spec());
            loop.cycle();
            clock.advance(Duration.ofMinutes(6));
            RunId owner = submitIn("owner-of-" + workspace, aJob("job").gpus(8).cpu(4).memoryGi(32).quota("gpu").spec());
            loop.cycle();
            executor.confirmTerminated(new InstanceId(borrower, 1, 0), 143);
            loop.cycle();
            clock.advance(Duration.ofHours(1)); // queued again while the owner runs: does not count
            executor.exit(new InstanceId(owner, 1, 0), 0);
            loop.cycle();
            loop.cycle();
            assertThat(run(borrower).attempt()).isEqualTo(2);
            assertThat(run(borrower).state()).isEqualTo(RunState.RUNNING);
            clock.advance(Duration.ofMinutes(4).plusSeconds(10));
            loop.cycle();
            assertThat(run(borrower).state()).as("per attempt: %s", perAttempt).isEqualTo(perAttempt ? RunState.RUNNING : RunState.TERMINATING);
            executor.confirmTerminated(new InstanceId(borrower, 2, 0), 143);
            updated(run(borrower).withCancelRequestedAt(clock.instant()));
            loop.cycle();
            loop.cycle();
            assertThat(run(borrower).state()).isIn(RunState.TIMED_OUT, RunState.CANCELLED);
        }
    }

    // --- schedules ---

    private List<RunRecord> runsOf(String job) {
        return store.runs().list(new io.slipstream.store.RunQuery(null, "team-a", job, java.util.Set.of(), 100, null));
    }

    private void applyJob(Document<JobSpec> job) {
        store.write(tx -> tx.createDocument(job, clock.instant()));
    }

    private void at(String instant) {
        clock.set(java.time.Instant.parse(instant));
        loop.cycle();
    }

    @Test
    void aScheduleStartsOneRunPerDueTimeAndForbidSkipsWhileTheLastOneIsActive() {
        clock.set(java.time.Instant.parse("2026-06-01T09:59:30Z"));
        applyJob(aJob("every-minute").schedule("* * * * *", "UTC", io.slipstream.api.spec.ConcurrencyPolicy.Forbid).build());
        loop.cycle();
        assertThat(runsOf("every-minute")).as("times before the schedule was seen do not run").isEmpty();

        at("2026-06-01T10:00:00.200Z");
        at("2026-06-01T10:00:01.400Z");
        assertThat(runsOf("every-minute")).singleElement().satisfies(run -> {
            assertThat(run.origin().scheduleTime()).isEqualTo(java.time.Instant.parse("2026-06-01T10:00:00Z"));
            assertThat(run.state()).isEqualTo(RunState.RUNNING);
            assertThat(run.reason()).isEqualTo("AllInstancesRunning");
        });
        RunId first = runsOf("every-minute").get(0).id();

        at("2026-06-01T10:01:00.200Z");
        assertThat(runsOf("every-minute")).as("Forbid: 10:01 is skipped while the 10:00 run is active").hasSize(1);

        executor.exit(new InstanceId(first, 1, 0), 0);
        at("2026-06-01T10:01:30Z");
        at("2026-06-01T10:02:00.300Z");
        assertThat(runsOf("every-minute")).hasSize(2).first()
                .satisfies(run -> assertThat(run.origin().scheduleTime()).isEqualTo(java.time.Instant.parse("2026-06-01T10:02:00Z")));
    }

    @Test
    void aScheduledRunGetsItsJobsLabels() {
        clock.set(java.time.Instant.parse("2026-06-01T09:59:30Z"));
        Document<JobSpec> job = aJob("labelled").schedule("* * * * *", "UTC", io.slipstream.api.spec.ConcurrencyPolicy.Forbid).build();
        var meta = job.metadata();
        applyJob(new Document<>(new io.slipstream.api.spec.ObjectMeta(meta.name(), meta.workspace(), null, java.util.Map.of("team", "nlp", "tier", "gold")),
                job.spec()));
        loop.cycle();
        at("2026-06-01T10:00:00.200Z");
        assertThat(runsOf("labelled")).singleElement()
                .satisfies(run -> assertThat(run.origin().labels()).isEqualTo(java.util.Map.of("team", "nlp", "tier", "gold")));
    }

    @Test
    void replaceCancelsTheActiveRunAndStartsTheNewOne() {
        clock.set(java.time.Instant.parse("2026-06-01T09:59:30Z"));
        applyJob(aJob("replacing").schedule("* * * * *", "UTC", io.slipstream.api.spec.ConcurrencyPolicy.Replace).build());
        loop.cycle();
        at("2026-06-01T10:00:00.100Z");
        RunId first = runsOf("replacing").get(0).id();
        at("2026-06-01T10:01:00.100Z");
        assertThat(runsOf("replacing")).hasSize(2);
        assertThat(run(first).state()).isEqualTo(RunState.TERMINATING);
        assertThat(run(first).outcome()).isEqualTo(RunState.CANCELLED);
        assertThat(store.runs().events(first, 0, 100)).extracting(RunEvent::reason).contains("ReplacedBySchedule");
        assertThat(executor.terminated()).contains(new InstanceId(first, 1, 0));
        RunRecord second = runsOf("replacing").get(0);
        assertThat(second.id()).isNotEqualTo(first);
        assertThat(second.state()).isEqualTo(RunState.RUNNING);
    }

    @Test
    void aDueTimeFiresExactlyOnceAcrossARestartAtThatMoment() {
        clock.set(java.time.Instant.parse("2026-06-01T09:59:30Z"));
        applyJob(aJob("allow").schedule("* * * * *", "UTC", io.slipstream.api.spec.ConcurrencyPolicy.Allow).build());
        loop.cycle();
        at("2026-06-01T10:00:00Z");
        loop = newLoop(); // a restart at the same instant
        loop.recover();
        loop.cycle();
        at("2026-06-01T10:00:00.900Z");
        assertThat(runsOf("allow")).hasSize(1);
        at("2026-06-01T10:03:10Z"); // down for three due times: one late run, not three
        assertThat(runsOf("allow")).hasSize(2);
        assertThat(runsOf("allow").get(0).origin().scheduleTime()).isEqualTo(java.time.Instant.parse("2026-06-01T10:03:00Z"));
    }

    // --- retention ---

    @Test
    void retentionRemovesRunsThatFinishedLongAgoAndNeverAnActiveOne() {
        limits = RunLimits.DEFAULTS.withRetention(Duration.ofDays(7));
        loop = newLoop();
        RunId finished = submit(aJob("job").spec());
        RunId running = submit(aJob("job").spec());
        loop.cycle();
        executor.exit(new InstanceId(finished, 1, 0), 0);
        loop.cycle();
        assertThat(run(finished).state()).isEqualTo(RunState.SUCCEEDED);

        clock.advance(Duration.ofDays(6));
        loop.cycle();
        assertThat(store.runs().get(finished)).isPresent();
        clock.advance(Duration.ofDays(1).plusMinutes(1));
        loop.cycle();
        assertThat(store.runs().get(finished)).isEmpty();
        assertThat(store.runs().events(finished, 0, 10)).isEmpty();
        assertThat(executor.forgotten()).containsExactly(finished);
        assertThat(run(running).state()).isEqualTo(RunState.RUNNING);
    }

    // --- distributed runs ---

    @Test
    void everyInstanceGetsTheWholeRunsMetadataWithDistinctPortsBeforeItStarts() {
        RunId id = submit(aJob("job").group("coordinator").andGroup("worker").replicas(3).gpus(4).storage("out", io.slipstream.api.spec.StorageScope.job)
                .spec());
        loop.cycle();
        var launched = executor.launched();
        assertThat(launched).hasSize(4);
        var metadata = launched.get(new InstanceId(id, 1, 2)).metadata();
        assertThat(metadata.instances()).extracting(i -> i.nodeGroup() + "-" + i.groupRank() + "@" + i.rank())
                .containsExactly("coordinator-0@0", "worker-0@1", "worker-1@2", "worker-2@3");
        assertThat(metadata.instances()).allSatisfy(i -> assertThat(i.started()).isTrue());
        assertThat(metadata.instances().stream().flatMap(i -> i.ports().stream()).distinct()).hasSize(4);
        assertThat(metadata.storage()).singleElement().satisfies(s -> assertThat(s.mountPath()).isEqualTo("/mnt/out"));
        var env = launched.get(new InstanceId(id, 1, 3)).env();
        var master = metadata.instances().get(0);
        assertThat(env).containsEntry("MASTER_ADDR", master.ip()).containsEntry("MASTER_PORT", master.ports().get(0).toString())
                .containsEntry("SLIPSTREAM_PORT", metadata.instances().get(3).ports().get(0).toString())
                .containsEntry("WORLD_SIZE", "4").containsEntry("NNODES", "4");
        // What torchrun gives a worker: worker-2 is global rank 3, a "node" of its own, rank 2 of the 3 in its role.
        assertThat(env).containsEntry("RANK", "3").containsEntry("LOCAL_RANK", "0").containsEntry("LOCAL_WORLD_SIZE", "1")
                .containsEntry("GROUP_RANK", "3").containsEntry("GROUP_WORLD_SIZE", "4").containsEntry("ROLE_NAME", "worker")
                .containsEntry("ROLE_RANK", "2").containsEntry("ROLE_WORLD_SIZE", "3").containsEntry("TORCHELASTIC_RUN_ID", id.value())
                .containsEntry("TORCHELASTIC_RESTART_COUNT", "0").containsEntry("SLIPSTREAM_RESTART_COUNT", "0")
                .doesNotContainKey("TORCHELASTIC_USE_AGENT_STORE"); // set, it would make rank 0 a store client with no server
        assertThat(instances(id)).allSatisfy(i -> assertThat(i.endpoint()).isNotNull());
    }

    @Test
    void inOrderStartsAGroupOnlyOnceTheOneBeforeIsReady() {
        RunId id = submit(aJob("job").inOrder().group("coordinator").probe("test", "-f", "up").andGroup("worker").replicas(2).spec());
        loop.cycle();
        assertThat(executor.launched()).containsOnlyKeys(new InstanceId(id, 1, 0));
        assertThat(run(id).state()).isEqualTo(RunState.STARTING);
        assertThat(executor.launched().get(new InstanceId(id, 1, 0)).metadata().instances())
                .extracting(io.slipstream.api.run.ClusterMetadata.Instance::started).containsExactly(true, false, false);
        loop.cycle();
        assertThat(executor.launched()).as("still not ready").hasSize(1);

        executor.report(new InstanceReport.Ready(new InstanceId(id, 1, 0), clock.instant()));
        loop.cycle();
        assertThat(executor.launched()).hasSize(3);
        assertThat(run(id).state()).isEqualTo(RunState.RUNNING);
        assertThat(instances(id).get(0).readyAt()).isNotNull();
        assertThat(store.runs().events(id, 0, 100)).extracting(RunEvent::type).contains(EventType.InstanceReady);
    }

    @Test
    void inOrderGroupsWithoutProbesStartOneAfterTheOtherInOneCycle() {
        RunId id = submit(aJob("job").inOrder().group("a").andGroup("b").andGroup("c").spec());
        loop.cycle();
        assertThat(executor.launched()).hasSize(3);
        assertThat(run(id).state()).isEqualTo(RunState.RUNNING);
    }

    @Test
    void aFailedStartupProbeFailsTheRunAndStopsItsInstances() {
        RunId id = submit(aJob("job").group("server").probe("false").andGroup("client").spec());
        loop.cycle();
        executor.report(new InstanceReport.ProbeFailed(new InstanceId(id, 1, 0), "startup probe failed 3 time(s) in a row (last exit code 1)",
                clock.instant()));
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.TERMINATING);
        assertThat(run(id).reason()).isEqualTo("StartupProbeFailed: server-0 (startup probe failed 3 time(s) in a row (last exit code 1))");
        assertThat(executor.terminated()).containsExactlyInAnyOrder(new InstanceId(id, 1, 0), new InstanceId(id, 1, 1));
        executor.confirmTerminated(new InstanceId(id, 1, 0), 143);
        executor.confirmTerminated(new InstanceId(id, 1, 1), 143);
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.FAILED);
    }

    @Test
    void aRunSucceedsOnceEveryGroupHasItsMinimumOfSuccessesAndTheRestIsStopped() {
        RunId id = submit(aJob("job").group("ps").minSuccess(0).andGroup("worker").replicas(3).minSuccess(2).spec());
        loop.cycle();
        executor.exit(new InstanceId(id, 1, 1), 0);
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.RUNNING);
        executor.exit(new InstanceId(id, 1, 2), 0);
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.TERMINATING);
        assertThat(run(id).outcome()).isEqualTo(RunState.SUCCEEDED);
        assertThat(executor.terminated()).containsExactlyInAnyOrder(new InstanceId(id, 1, 0), new InstanceId(id, 1, 3));
        executor.confirmTerminated(new InstanceId(id, 1, 0), 143);
        executor.confirmTerminated(new InstanceId(id, 1, 3), 143);
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.SUCCEEDED);
        assertThat(run(id).reason()).startsWith("MinSuccessReplicasReached");
    }
}
