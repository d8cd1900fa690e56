package io.slipstream.server.control;

import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.EndCause;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.FaultTolerance;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.executor.Activity;
import io.slipstream.executor.testing.FakeExecutor;
import io.slipstream.model.InstanceRecord;
import io.slipstream.store.NodeDown;
import io.slipstream.model.EventType;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import io.slipstream.store.memory.InMemoryStore;
import io.slipstream.testing.TestingClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Restarts by policy, driven one control-loop cycle at a time over a real store, a scripted executor and a fake clock. */
class FaultToleranceTest {
    private final TestingClock clock = new TestingClock();
    private Store store;
    private FakeExecutor executor;
    private ControlLoop loop;

    @BeforeEach
    void setUp() {
        store = new InMemoryStore(); // the store itself is held to its contract elsewhere
        store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of("team-a", null), new WorkspaceSpec(List.of())), clock.instant()));
        executor = new FakeExecutor(clock, 2, 8);
        loop = new ControlLoop(LoopParts.of(store, executor, clock));
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    private static FaultTolerance policy(int maxRestarts, List<FaultTolerance.ExitCodeRange> codes, List<String> patterns, int sameErrorLimit,
                                         Duration hangTimeout, Duration exitHangTimeout) {
        return new FaultTolerance(FaultTolerance.RunType.Sync, maxRestarts, null, 1, 1, Duration.ofSeconds(10), Duration.ofSeconds(30), codes,
                patterns, List.of(), FaultTolerance.FailureAction.Fail, sameErrorLimit, hangTimeout, exitHangTimeout);
    }

    /** {@code retryOn: {reasons: ...}} and nothing else. */
    private static FaultTolerance retryingOn(List<EndCause> reasons) {
        return new FaultTolerance(FaultTolerance.RunType.Sync, 3, null, 1, 1, Duration.ofSeconds(10), Duration.ofSeconds(30), List.of(),
                List.of(), reasons, FaultTolerance.FailureAction.Fail, 0, null, null);
    }

    private RunId submit(JobSpec spec) {
        RunRecord run = RunRecord.queued(RunId.newFor("job"), "team-a", "job", 1, spec, clock.instant());
        clock.advance(Duration.ofSeconds(1));
        return store.write(tx -> tx.createRun(run, RunEvent.of(run.id(), run.createdAt(), EventType.StateChanged, "QUEUED", "Submitted", null, null))).id();
    }

    private RunRecord run(RunId id) {
        return store.runs().get(id).orElseThrow();
    }

    private RunRecord updated(RunRecord run) {
        return store.write(tx -> tx.updateRun(run));
    }

    /** Ends the current attempt's other instances as the executor would once told to stop. */
    private void confirmStopped(RunId id, int attempt, int... ranks) {
        for (int rank : ranks) {
            executor.confirmTerminated(new InstanceId(id, attempt, rank), 143);
        }
        loop.cycle();
    }

    @Test
    void aFailureNoRuleMatchesFailsTheRunAtOnce() {
        RunId id = submit(aJob("job").replicas(2).faultTolerance(policy(3, List.of(new FaultTolerance.ExitCodeRange(137, 137)), List.of(), 0,
                null, null)).spec());
        loop.cycle();
        executor.exit(new InstanceId(id, 1, 1), 3);
        loop.cycle();
        assertThat(run(id).state()).as("a second for the peers' failures to come in").isEqualTo(RunState.RUNNING);
        clock.advance(Duration.ofSeconds(1));
        loop.cycle();
        confirmStopped(id, 1, 0);

        RunRecord failed = run(id);
        assertThat(failed.state()).isEqualTo(RunState.FAILED);
        assertThat(failed.reason()).isEqualTo("InstanceFailed: main-1 (Exited with code 3); no retry rule matches");
        assertThat(failed.faults().failures()).isZero();
    }

    @Test
    void aMatchingErrorPatternRestartsTheWholeGangWithBackoffUntilTheBudgetIsSpent() {
        RunId id = submit(aJob("job").replicas(2).faultTolerance(policy(2, List.of(), List.of("NCCL error"), 0, null, null)).spec());
        loop.cycle();

        for (int a = 1; a <= 2; a++) {
            int attempt = a;
            InstanceId worker = new InstanceId(id, attempt, 1);
            executor.log(worker, "step 10\nRuntimeError: NCCL error in: all_reduce, unhandled system error\n");
            executor.exit(worker, 1);
            loop.cycle();
            clock.advance(Duration.ofSeconds(1));
            loop.cycle();
            RunRecord restarting = run(id);
            assertThat(restarting.state()).isEqualTo(RunState.TERMINATING);
            assertThat(restarting.reason()).startsWith("InstanceFailed: main-1 (Exited with code 1) (retryOn.errorPatterns 'NCCL error'); restarting in");
            assertThat(executor.terminated()).contains(new InstanceId(id, attempt, 0));
            confirmStopped(id, attempt, 0);

            RunRecord queued = run(id);
            assertThat(queued.state()).isEqualTo(RunState.QUEUED);
            assertThat(queued.attempt()).isEqualTo(attempt + 1);
            assertThat(queued.faults().failures()).isEqualTo(attempt);
            assertThat(queued.preemptions()).isZero();
            Duration backoff = Duration.ofSeconds(10L << (attempt - 1));
            assertThat(queued.faults().retryAt()).isEqualTo(clock.instant().plus(backoff));
            assertThat(store.runs().instancesOf(id).stream().filter(i -> i.id().attempt() == attempt))
                    .extracting(InstanceRecord::state).containsExactlyInAnyOrder(InstanceState.KILLED, InstanceState.FAILED);

            clock.advance(backoff.minusSeconds(1));
            loop.cycle();
            assertThat(run(id).state()).as("still backing off").isEqualTo(RunState.QUEUED);
            assertThat(loop.queueStatus().of(id).reason()).isEqualTo("BackingOff");
            clock.advance(Duration.ofSeconds(1));
            loop.cycle();
            assertThat(run(id).state()).isEqualTo(RunState.RUNNING);
            assertThat(executor.launched()).containsKey(new InstanceId(id, attempt + 1, 0));
            assertThat(executor.launched().get(new InstanceId(id, attempt + 1, 0)).env())
                    .containsEntry("TORCHELASTIC_RESTART_COUNT", Integer.toString(attempt)).containsEntry("SLIPSTREAM_ATTEMPT", Integer.toString(attempt + 1));
        }

        InstanceId worker = new InstanceId(id, 3, 1);
        executor.log(worker, "NCCL error again\n");
        executor.exit(worker, 1);
        loop.cycle();
        clock.advance(Duration.ofSeconds(1));
        loop.cycle();
        confirmStopped(id, 3, 0);
        RunRecord failed = run(id);
        assertThat(failed.state()).isEqualTo(RunState.FAILED);
        assertThat(failed.reason()).startsWith("RestartBudgetExhausted: restarted 2 time(s) for failures (faultTolerance.maxRestarts: 2)");
        assertThat(store.runs().events(id, 0, 1000)).extracting(RunEvent::reason)
                .filteredOn(r -> r != null && r.startsWith("Restarted: ")).hasSize(2);
    }

    @Test
    void anOomKillRestartsTheRunWhereRetryOnReasonsNamesItAndFailsItWithTheCauseWhereNot() {
        String oom = "OOMKilled: used more memory than its limit (exit code 137)";
        RunId retried = submit(aJob("job").replicas(2).faultTolerance(retryingOn(List.of(EndCause.OOMKilled))).spec());
        RunId plain = submit(aJob("job").replicas(2).spec());
        loop.cycle();
        executor.exit(new InstanceId(retried, 1, 1), 137, EndCause.OOMKilled);
        executor.exit(new InstanceId(plain, 1, 1), 137, EndCause.OOMKilled);
        loop.cycle();
        assertThat(store.runs().instance(new InstanceId(retried, 1, 1)).orElseThrow()).satisfies(i -> {
            assertThat(i.state()).isEqualTo(InstanceState.FAILED);
            assertThat(i.endCause()).isEqualTo(EndCause.OOMKilled);
            assertThat(i.reason()).isEqualTo(oom);
        });
        assertThat(store.runs().events(plain, 0, 1000)).filteredOn(e -> e.type() == EventType.InstanceExited).singleElement()
                .satisfies(e -> assertThat(e.reason()).isEqualTo(oom));
        clock.advance(Duration.ofSeconds(1));
        loop.cycle();
        confirmStopped(retried, 1, 0);
        confirmStopped(plain, 1, 0);

        RunRecord restarting = run(retried);
        assertThat(restarting.state()).isEqualTo(RunState.QUEUED);
        assertThat(restarting.attempt()).isEqualTo(2);
        assertThat(restarting.faults().lastError()).isEqualTo("exit code 137 (OOMKilled), retryOn.reasons OOMKilled");
        assertThat(store.runs().events(retried, 0, 1000)).extracting(RunEvent::reason)
                .anySatisfy(r -> assertThat(r)
                        .startsWith("Restarted: InstanceFailed: main-1 (" + oom + ") (retryOn.reasons OOMKilled); restarting in 10s"));
        RunRecord failed = run(plain);
        assertThat(failed.state()).isEqualTo(RunState.FAILED);
        assertThat(failed.reason()).isEqualTo("InstanceFailed: main-1 (" + oom + ")");
    }

    @Test
    void aRankKilledBySignalIsTheRootCauseEvenIfItsPeersFailureArrivedFirst() {
        RunId id = submit(aJob("job").replicas(3).faultTolerance(policy(3, List.of(new FaultTolerance.ExitCodeRange(137, 137)), List.of(), 0,
                null, null)).spec());
        loop.cycle();
        executor.log(new InstanceId(id, 1, 2), "train: lost a peer in the all-reduce of step 477\n");
        executor.exit(new InstanceId(id, 1, 2), 1);
        loop.cycle();
        clock.advance(Duration.ofMillis(30));
        executor.exit(new InstanceId(id, 1, 1), 137);
        loop.cycle();
        clock.advance(Duration.ofSeconds(1));
        loop.cycle();
        RunRecord restarting = run(id);
        assertThat(restarting.state()).isEqualTo(RunState.TERMINATING);
        assertThat(restarting.reason()).startsWith("InstanceFailed: main-1 (Exited with code 137) (retryOn.exitCodes 137); restarting");
    }

    @Test
    void theSameErrorTooOftenInARowStopsRetrying() {
        RunId id = submit(aJob("job").faultTolerance(policy(10, List.of(new FaultTolerance.ExitCodeRange(100, 199)), List.of(), 2, null, null))
                .spec());
        loop.cycle();
        executor.exit(new InstanceId(id, 1, 0), 101);
        loop.cycle();
        loop.cycle();
        clock.advance(Duration.ofSeconds(10));
        loop.cycle();
        executor.exit(new InstanceId(id, 2, 0), 101);
        loop.cycle();
        loop.cycle();

        RunRecord failed = run(id);
        assertThat(failed.state()).isEqualTo(RunState.FAILED);
        assertThat(failed.reason()).startsWith("SameErrorRepeated: exit code 101, retryOn.exitCodes 100-199 happened 2 times in a row");
    }

    @Test
    void preemptionsNeverUseUpTheFailureBudget() {
        RunId id = submit(aJob("job").faultTolerance(policy(1, List.of(new FaultTolerance.ExitCodeRange(1, 1)), List.of(), 0, null, null))
                .spec());
        for (int attempt = 1; attempt <= 5; attempt++) {
            loop.cycle();
            RunRecord running = run(id);
            assertThat(running.state()).isEqualTo(RunState.RUNNING);
            store.write(tx -> tx.updateRun(running.preempting(null, "ReclaimedByQuotaOwner: test")));
            loop.cycle();
            executor.confirmTerminated(new InstanceId(id, attempt, 0), 143);
            loop.cycle(); // requeued, and admitted again in the same cycle
            assertThat(run(id).attempt()).isEqualTo(attempt + 1);
        }
        RunRecord preempted = run(id);
        assertThat(preempted.preemptions()).isEqualTo(5);
        assertThat(preempted.faults().failures()).isZero();
        assertThat(preempted.faults().retryAt()).as("no backoff after a preemption").isNull();
        assertThat(preempted.state()).isEqualTo(RunState.RUNNING);

        executor.exit(new InstanceId(id, 6, 0), 1);
        loop.cycle();
        assertThat(run(id).state()).as("the one failure restart is still there").isEqualTo(RunState.QUEUED);
        assertThat(run(id).faults().failures()).isEqualTo(1);
    }

    @Test
    void aRunWithoutOutputOrProgressForTheHangTimeoutIsRestartedAsHung() {
        RunId id = submit(aJob("job").replicas(2).faultTolerance(policy(3, List.of(), List.of(), 0, Duration.ofMinutes(5), null)).spec());
        loop.cycle();
        Instant started = clock.instant();
        clock.advance(Duration.ofMinutes(3));
        executor.activity(new InstanceId(id, 1, 1), new Activity(clock.instant(), null)); // it printed something
        loop.cycle();
        clock.advance(Duration.ofMinutes(4));
        loop.cycle();
        assertThat(run(id).state()).as("7 minutes after the start, but only 4 after the last output").isEqualTo(RunState.RUNNING);

        executor.activity(new InstanceId(id, 1, 0), new Activity(null, new Activity.Progress(120, clock.instant(), null, null, Map.of())));
        clock.advance(Duration.ofMinutes(4));
        loop.cycle();
        assertThat(run(id).state()).as("progress counts as life too").isEqualTo(RunState.RUNNING);
        assertThat(run(id).faults().progressStep()).isEqualTo(120);

        clock.advance(Duration.ofMinutes(1));
        loop.cycle();
        RunRecord hung = run(id);
        assertThat(hung.state()).isEqualTo(RunState.TERMINATING);
        assertThat(hung.reason()).startsWith("Hung: no output and no progress from any instance for 5m");
        confirmStopped(id, 1, 0, 1);
        assertThat(run(id).state()).isEqualTo(RunState.QUEUED);
        assertThat(run(id).faults().hangs()).isEqualTo(1);
        assertThat(started).isBefore(clock.instant());
    }

    @Test
    void othersNotExitingAfterOneSucceededIsAnExitHang() {
        RunId id = submit(aJob("job").replicas(2).faultTolerance(policy(3, List.of(), List.of(), 0, null, Duration.ofMinutes(2))).spec());
        loop.cycle();
        executor.exit(new InstanceId(id, 1, 0), 0);
        loop.cycle();
        clock.advance(Duration.ofMinutes(2));
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.TERMINATING);
        assertThat(run(id).reason()).contains("exitHangTimeout");
    }

    @Test
    void instancesOnANodeDeclaredDownEndNodeLostAndTheRunRestartsElsewhere() {
        RunId id = submit(aJob("job").replicas(2).gpus(8).spec()); // one instance per node, both nodes used
        loop.cycle();
        InstanceRecord onNode2 = store.runs().instancesOf(id).stream().filter(i -> i.node().equals("node-2")).findFirst().orElseThrow();
        store.commit(tx -> tx.markNodeDown(new NodeDown("node-2", "disk failure", clock.instant())));
        loop.cycle();
        assertThat(executor.terminations().get(onNode2.id())).startsWith("NodeLost: node node-2 is down (disk failure) / PT0S");

        executor.confirmTerminated(onNode2.id(), 137);
        loop.cycle();
        assertThat(store.runs().instance(onNode2.id()).orElseThrow().state()).isEqualTo(InstanceState.NODE_LOST);
        assertThat(run(id).state()).isEqualTo(RunState.TERMINATING);
        assertThat(run(id).reason()).startsWith("NodeLost: main-" + onNode2.groupRank());
        confirmStopped(id, 1, 1 - onNode2.id().rank());

        RunRecord requeued = run(id);
        assertThat(requeued.state()).isEqualTo(RunState.QUEUED);
        assertThat(requeued.faults().nodeLost()).isEqualTo(1);
        loop.cycle();
        assertThat(run(id).state()).as("both instances need a whole node; only node-1 is up").isEqualTo(RunState.QUEUED);

        store.write(tx -> tx.markNodeUp("node-2"));
        loop.cycle();
        assertThat(run(id).state()).isEqualTo(RunState.RUNNING);
    }

    /** What the control loop does with a scheduler's move: the preemption it applies for any Preempt, reason Moved. */
    @Test
    void aMoveIsAPreemptionThatNeverUsesUpTheFailureBudget() {
        RunId id = submit(aJob("job").faultTolerance(policy(1, List.of(new FaultTolerance.ExitCodeRange(1, 1)), List.of(), 0, null, null))
                .spec());
        var move = new io.slipstream.scheduler.Decision.Preempt(id, new RunId("gang"), io.slipstream.scheduler.Decision.Preempt.MOVED,
                io.slipstream.scheduler.Decision.PreemptKind.Move);
        for (int attempt = 1; attempt <= 3; attempt++) {
            loop.cycle();
            RunRecord running = run(id);
            assertThat(running.state()).isEqualTo(RunState.RUNNING);
            store.write(tx -> tx.updateRun(running.preempting(null, move.reason())));
            assertThat(run(id).reason()).startsWith("Moved");
            loop.cycle();
            executor.confirmTerminated(new InstanceId(id, attempt, 0), 143);
            loop.cycle();
            assertThat(run(id).attempt()).isEqualTo(attempt + 1);
        }
        RunRecord moved = run(id);
        assertThat(moved.preemptions()).isEqualTo(3);
        assertThat(moved.faults().failures()).as("a move is not a failure").isZero();
        assertThat(moved.faults().retryAt()).as("no backoff after a move").isNull();
        assertThat(moved.state()).isEqualTo(RunState.RUNNING);
    }

    @Test
    void workLostCountsFromTheLastCheckpoint() {
        RunId id = submit(aJob("job").replicas(2).spec());
        loop.cycle();
        clock.advance(Duration.ofSeconds(60));
        Instant checkpoint = clock.instant();
        executor.activity(new InstanceId(id, 1, 0), new Activity(null, new Activity.Progress(600, checkpoint, 600L, checkpoint, Map.of())));
        clock.advance(Duration.ofSeconds(20));
        updated(run(id).preempting(null, "ReclaimedByQuotaOwner: test"));
        loop.cycle();
        confirmStopped(id, 1, 0, 1);

        RunRecord requeued = run(id);
        assertThat(requeued.faults().checkpointStep()).isEqualTo(600);
        assertThat(requeued.faults().workLostMillis()).as("2 instances x 20 s after the checkpoint").isEqualTo(40_000);
        assertThat(store.runs().events(id, 0, 1000)).extracting(RunEvent::message)
                .contains("attempt 1 lost 40.0 instance-seconds of work (since the checkpoint of step 600)");
    }
}
