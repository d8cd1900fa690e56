package io.slipstream.server.control;

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
import io.slipstream.scheduler.Scheduler;
import io.slipstream.server.support.FakeExecutor;
import io.slipstream.store.InstanceRecord;
import io.slipstream.store.RunEvent;
import io.slipstream.store.RunRecord;
import io.slipstream.store.Store;
import io.slipstream.store.jdbc.JdbcStore;
import io.slipstream.testing.TestingClock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The control loop driven one cycle at a time, over a real store and a scripted executor. */
class ControlLoopTest {
    @TempDir
    Path dataDir;

    private final TestingClock clock = new TestingClock();
    private Store store;
    private FakeExecutor executor;
    private ControlLoop loop;

    @BeforeEach
    void setUp() {
        store = JdbcStore.openH2(dataDir);
        store.createDocument(new Document<>(ObjectMeta.of("team-a", null), new WorkspaceSpec(List.of())), clock.instant());
        executor = new FakeExecutor(clock, 2, 8);
        loop = newLoop();
    }

    private ControlLoop newLoop() {
        return new ControlLoop(store, executor, new Scheduler(), clock, Duration.ofSeconds(30), Duration.ofSeconds(1));
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    private RunId submit(JobSpec spec) {
        RunRecord run = RunRecord.queued(RunId.newFor("job"), "team-a", "job", 1, spec, clock.instant());
        clock.advance(Duration.ofSeconds(1));
        return store.createRun(run, RunEvent.of(run.id(), run.createdAt(), "StateChanged", "QUEUED", "Submitted", null, null)).id();
    }

    private RunRecord run(RunId id) {
        return store.getRun(id).orElseThrow();
    }

    private List<InstanceRecord> instances(RunId id) {
        return store.instancesOf(id);
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
        assertThat(store.eventsOf(id, 0, 100)).extracting(RunEvent::state)
                .containsSubsequence("QUEUED", "STARTING", "RUNNING", "SUCCEEDED");
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
        store.updateRun(run(id).withCancelRequestedAt(clock.instant()));
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.CANCELLED);
        assertThat(executor.launched()).isEmpty();
    }

    @Test
    void cancellingARunningRunWaitsUntilEveryInstanceIsConfirmedGone() {
        RunId id = submit(aJob("job").replicas(2).spec());
        loop.cycle();
        store.updateRun(run(id).withCancelRequestedAt(clock.instant()));
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
        store.updateRun(run(id).withCancelRequestedAt(clock.instant()));
        loop = newLoop(); // crash before any cycle saw the cancel
        loop.recover();
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.TERMINATING);
        assertThat(executor.terminated()).containsExactly(new InstanceId(id, 1, 0));
        executor.confirmTerminated(new InstanceId(id, 1, 0), 143);
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.CANCELLED);
    }

    private void quota(String workspace, String name, int gpus) {
        if (store.getDocument(io.slipstream.api.spec.Kind.Workspace, null, workspace).isEmpty()) {
            store.createDocument(new Document<>(ObjectMeta.of(workspace, null), new WorkspaceSpec(List.of())), clock.instant());
        }
        // Dedicated quotas of one GPU model share their idle capacity with each other.
        var min = new io.slipstream.api.spec.Resources(gpus * 4000L, gpus * (32L << 30), gpus, "sim-gpu");
        store.createDocument(new Document<>(ObjectMeta.of(name, workspace),
                new io.slipstream.api.spec.QuotaSpec(io.slipstream.api.spec.QuotaType.Dedicated, min, null, null)), clock.instant());
    }

    private RunId submitIn(String workspace, JobSpec spec) {
        RunRecord run = RunRecord.queued(RunId.newFor("job"), workspace, "job", 1, spec, clock.instant());
        clock.advance(Duration.ofSeconds(1));
        return store.createRun(run, RunEvent.of(run.id(), run.createdAt(), "StateChanged", "QUEUED", "Submitted", null, null)).id();
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
        assertThat(store.eventsOf(second, 0, 100)).extracting(RunEvent::type).contains("Promoted");
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
        store.updateRun(run(borrower).withCancelRequestedAt(clock.instant()));
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
}
