package io.slipstream.model.lifecycle;

import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.FaultTolerance;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.model.FaultState;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The run lifecycle as a table: a run, its instances and what was observed in; the step, the state it leads to and
 * why out. No store, no executor, no clock: each row takes microseconds.
 */
class RunLifecycleTest {
    private static final Instant T0 = Instant.parse("2026-03-01T08:00:00Z");
    private static final LifecycleLimits LIMITS = new LifecycleLimits(Duration.ofSeconds(30), Duration.ofDays(30));
    private static final RunLifecycle LIFECYCLE = new RunLifecycle(LIMITS);

    private static final JobSpec TWO_WORKERS = aJob("job").replicas(2).spec();
    private static final JobSpec RETRY_KILLED = aJob("job").replicas(2).faultTolerance(policy(List.of(new FaultTolerance.ExitCodeRange(128, 255)),
            FaultTolerance.FailureAction.Fail, null, null)).spec();
    private static final JobSpec IN_ORDER = aJob("job").inOrder().group("a").replicas(1).andGroup("b").replicas(1).spec();
    private static final JobSpec IN_ORDER_PROBED = aJob("job").inOrder().group("a").replicas(1).probe("true").andGroup("b").replicas(1).spec();

    // --- the table ---

    record Row(String name, RunRecord run, List<InstanceRecord> instances, Observation seen, Class<? extends Step> step, RunState state,
               String reason) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Row> rows() {
        RunRecord starting = admitted(TWO_WORKERS);
        RunRecord running = started(TWO_WORKERS);
        RunRecord retrying = started(RETRY_KILLED);
        RunRecord hourLong = started(aJob("job").replicas(2).maxRuntime(Duration.ofHours(1)).spec());
        RunRecord groupLimited = started(aJob("job").replicas(2).groupMaxRuntime(Duration.ofMinutes(5)).spec());
        RunRecord oneSuffices = started(aJob("job").replicas(2).minSuccess(1).spec());
        return Stream.of(
                new Row("a queued run waits for the scheduler", queued(TWO_WORKERS), List.of(), at(0), Step.Stay.class, RunState.QUEUED, "Submitted"),
                new Row("a queued run cancelled ends at once", queued(TWO_WORKERS).withCancelRequestedAt(T0), List.of(), at(0),
                        Step.Transition.class, RunState.CANCELLED, "Cancelled before it started"),
                new Row("placed instances start together", starting, instances(starting, pending(), pending()), at(1), Step.Launch.class,
                        RunState.STARTING, null),
                new Row("once all run, the run is RUNNING", starting, instances(starting, live(), live()), at(2), Step.Transition.class,
                        RunState.RUNNING, "AllInstancesRunning"),
                new Row("all succeeded: SUCCEEDED", running, instances(running, succeeded(), succeeded()), at(60), Step.Transition.class,
                        RunState.SUCCEEDED, "AllInstancesSucceeded"),
                new Row("succeeded before anyone saw it run: SUCCEEDED too", starting, instances(starting, succeeded(), succeeded()), at(60),
                        Step.Transition.class, RunState.SUCCEEDED, "AllInstancesSucceeded"),
                new Row("a cancel stops what runs", running.withCancelRequestedAt(T0), instances(running, live(), live()), at(5),
                        Step.Terminate.class, RunState.TERMINATING, "CancelRequested"),
                new Row("a failure without retry rules fails the run", running, instances(running, exited(1, 30), live()), at(31),
                        Step.Terminate.class, RunState.TERMINATING, "InstanceFailed: main-0 (Exited with code 1)"),
                new Row("a retryable failure waits a moment for its peers' failures", retrying, instances(retrying, exited(1, 30), live()),
                        atMillis(30_500), Step.Stay.class, RunState.RUNNING, null),
                new Row("then the root cause (killed by a signal) is judged, not the first report", retrying,
                        instances(retrying, exited(1, 30), exitedAt(137, 30_200)), atMillis(31_100), Step.Terminate.class, RunState.TERMINATING,
                        "InstanceFailed: main-1 (Exited with code 137) (retryOn.exitCodes 128-255); restarting in 10s"),
                new Row("a lost node restarts the run elsewhere", running, instances(running, nodeLost(), live()), at(40), Step.Terminate.class,
                        RunState.TERMINATING, "NodeLost: main-0 (NodeLost: node node-1 is down); restarting elsewhere"),
                new Row("a failed startup probe fails the run", running, instances(running, probeFailed("exit code 3"), live()), at(40),
                        Step.Terminate.class, RunState.TERMINATING, "StartupProbeFailed: main-0 (exit code 3)"),
                new Row("past maxRuntime: TIMED_OUT", hourLong, instances(hourLong, live(), live()), at(3600),
                        Step.Terminate.class, RunState.TERMINATING, "Timeout: ran 1h, longer than its maxRuntime of 1h"),
                new Row("not while an adopted instance is unheard of since a restart", hourLong, instances(hourLong, live(), live()),
                        at(3600).withUnconfirmed(java.util.Set.of(new InstanceId(new RunId("job-r1"), 1, 0))), Step.Stay.class, RunState.RUNNING,
                        null),
                new Row("a node group's own maxRuntime ends the whole run", groupLimited, instances(groupLimited, live(), live()), at(301), Step.Terminate.class, RunState.TERMINATING,
                        "Timeout: main-0 ran longer than node group main's maxRuntime of 5m"),
                new Row("a minimum of successes reached stops the rest and succeeds", oneSuffices, instances(oneSuffices, succeeded(), live()), at(60), Step.Terminate.class, RunState.TERMINATING, "MinSuccessReplicasReached"),
                new Row("a drain of its node moves the run off as a preemption", running, instances(running, live(), live()),
                        at(20).withDrainingNode("node-1", "by admin: kernel upgrade"), Step.Terminate.class, RunState.TERMINATING,
                        "NodeDrain: node node-1 is drained (by admin: kernel upgrade)"),
                new Row("a drain of another node leaves it running", running, instances(running, live(), live()),
                        at(20).withDrainingNode("node-2", "by admin"), Step.Stay.class, RunState.RUNNING, null),
                new Row("a starting run placed there is moved too", starting, instances(starting, live(), pending()),
                        at(2).withDrainingNode("node-1", ""), Step.Terminate.class, RunState.TERMINATING, "NodeDrain: node node-1 is drained"),
                new Row("a cancel comes before a drain", running.withCancelRequestedAt(T0), instances(running, live(), live()),
                        at(20).withDrainingNode("node-1", "by admin"), Step.Terminate.class, RunState.TERMINATING, "CancelRequested"),
                new Row("in order: the first group starts alone", admitted(IN_ORDER), instances(admitted(IN_ORDER), pending(), pending()), at(1),
                        Step.Launch.class, RunState.STARTING, null),
                new Row("in order: the next starts once the first runs (no probe)", admitted(IN_ORDER), instances(admitted(IN_ORDER), live(), pending()),
                        at(2), Step.Launch.class, RunState.STARTING, null),
                new Row("in order: with a probe, the next waits for readiness", admitted(IN_ORDER_PROBED),
                        instances(admitted(IN_ORDER_PROBED), live(), pending()), at(2), Step.Stay.class, RunState.STARTING, null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void decides(Row row) {
        Step step = LIFECYCLE.next(row.run(), row.instances(), row.seen());
        assertThat(step).as(row.name()).isInstanceOf(row.step());
        RunRecord next = nextRun(step, row.run());
        assertThat(next.state()).as(row.name()).isEqualTo(row.state());
        if (row.reason() != null) {
            assertThat(next.reason()).as(row.name()).isEqualTo(row.reason());
        }
    }

    // --- steps that need more than a row ---

    @Test
    void aTerminateStopsEveryLiveInstanceOnceWithTheGraceItsCauseGets() {
        RunRecord preempted = started(aJob("job").replicas(3).preemptionGrace(Duration.ofMinutes(2)).spec())
                .preempting(new RunId("owner-r1"), "Reclaimed by owner-r1");
        List<InstanceRecord> instances = instances(preempted, live(), i -> live().apply(i).stopRequested(T0.plusSeconds(5)), succeeded());
        Step.Terminate step = (Step.Terminate) LIFECYCLE.next(preempted, instances, at(10));
        assertThat(step.next()).isEqualTo(preempted);
        assertThat(step.stops()).extracting(s -> s.instance().id().rank()).as("the one told before is not told again").containsExactly(0);
        assertThat(step.stops()).extracting(Step.Stop::grace).containsExactly(Duration.ofMinutes(2));

        List<InstanceRecord> allTold = instances(preempted, i -> live().apply(i).stopRequested(T0), i -> live().apply(i).stopRequested(T0),
                succeeded());
        assertThat(LIFECYCLE.next(preempted, allTold, at(10))).as("waiting for them to be gone").isInstanceOf(Step.Stay.class);
    }

    @Test
    void aPreemptedRunWhoseInstancesAreGoneIsQueuedAgainWithTheWorkItLost() {
        RunRecord preempted = started(TWO_WORKERS).preempting(new RunId("owner-r1"), "Reclaimed by owner-r1");
        List<InstanceRecord> gone = instances(preempted, preemptedAt(70), preemptedAt(70));
        Step.Requeue step = (Step.Requeue) LIFECYCLE.next(preempted, gone, at(75).withActivities(Map.of(
                gone.get(0).id(), new InstanceActivity(T0.plusSeconds(60), 400L, T0.plusSeconds(60), 300L, T0.plusSeconds(50)))));
        assertThat(step.next().state()).isEqualTo(RunState.QUEUED);
        assertThat(step.next().attempt()).isEqualTo(2);
        assertThat(step.next().preemptions()).isEqualTo(1);
        assertThat(step.next().reason()).isEqualTo("Preempted: Reclaimed by owner-r1");
        assertThat(step.next().reclaimFor()).as("its owner now holds the claim (RunRecord.capacityReclaimed)").isNull();
        assertThat(step.next().faults().retryAt()).as("no backoff after a preemption").isNull();
        assertThat(step.next().faults().checkpointStep()).isEqualTo(300L);
        // Both ran from 0 s (started at admission + 0) to 70 s; the checkpoint at 50 s saves the first 50 s of each.
        assertThat(step.workLost().instanceMillis()).isEqualTo(2 * 20_000);
        assertThat(step.workLost().message()).isEqualTo("attempt 1 lost 40.0 instance-seconds of work (since the checkpoint of step 300)");
    }

    @Test
    void aRunPreemptedMoreOftenThanItsBudgetAllowsFailsInsteadOfQueueingAgain() {
        JobSpec spec = aJob("job").replicas(1).faultTolerance(policy(List.of(), FaultTolerance.FailureAction.Fail, 2, null)).spec();
        RunRecord run = started(spec);
        for (int i = 0; i < 2; i++) {
            run = run.preempting(new RunId("owner-r1"), "Reclaimed").requeued("Preempted", T0).admitted(RealTimeResources.NotInQuota, "Admitted", T0)
                    .moveTo(RunState.RUNNING, "AllInstancesRunning", T0);
        }
        RunRecord third = run.preempting(new RunId("owner-r1"), "Reclaimed by owner-r1");
        Step step = LIFECYCLE.next(third, instances(third, preemptedAt(70)), at(75));
        assertThat(step).isInstanceOf(Step.End.class);
        assertThat(((Step.End) step).next().reason())
                .isEqualTo("PreemptionBudgetExhausted: preempted 2 time(s) before (faultTolerance.maxPreemptions: 2); last: Reclaimed by owner-r1");
    }

    @Test
    void aRestartAfterAFailureWaitsItsBackoffAndCountsTheFailure() {
        JobSpec spec = aJob("job").replicas(1).faultTolerance(policy(List.of(), FaultTolerance.FailureAction.Retry, null, null)).spec();
        RunRecord run = started(spec);
        Step.Terminate restart = (Step.Terminate) LIFECYCLE.next(run, instances(run, exited(1, 30)), at(40));
        assertThat(restart.next().restartCause()).isEqualTo(FaultState.RestartCause.FAILURE);
        assertThat(restart.stops()).isEmpty();
        Step.Requeue requeue = (Step.Requeue) LIFECYCLE.next(restart.next(), instances(run, exited(1, 30)), at(40));
        assertThat(requeue.next().faults().failures()).isEqualTo(1);
        assertThat(requeue.next().faults().retryAt()).isEqualTo(T0.plusSeconds(50));
        assertThat(requeue.next().reason()).isEqualTo("Restarted: InstanceFailed: main-0 (Exited with code 1); restarting in 10s");
    }

    @Test
    void aCancelWhileBeingPreemptedEndsTheRunCancelled() {
        RunRecord preempted = started(TWO_WORKERS).preempting(new RunId("owner-r1"), "Reclaimed by owner-r1").withCancelRequestedAt(T0.plusSeconds(9));
        List<InstanceRecord> told = instances(preempted, i -> live().apply(i).stopRequested(T0), i -> live().apply(i).stopRequested(T0));
        Step.Terminate cancel = (Step.Terminate) LIFECYCLE.next(preempted, told, at(10));
        assertThat(cancel.next().outcome()).isEqualTo(RunState.CANCELLED);
        assertThat(cancel.stops()).as("already told to stop").isEmpty();
        Step.End end = (Step.End) LIFECYCLE.next(cancel.next(), instances(preempted, preemptedAt(12), preemptedAt(12)), at(12));
        assertThat(end.next().state()).isEqualTo(RunState.CANCELLED);
        assertThat(end.next().reason()).isEqualTo("Cancelled: every instance stopped");
        assertThat(end.workLost()).as("a cancelled run loses nothing it meant to keep").isNull();
    }

    @Test
    void onADownNodeWhatRunsIsKilledAtOnceAndWhatNeverLaunchedIsLost() {
        RunRecord run = started(TWO_WORKERS);
        Observation down = at(20).withDownNode("node-1", "disk failed");
        Step.Terminate kill = (Step.Terminate) LIFECYCLE.next(run, instances(run, live(), live()), down);
        assertThat(kill.next()).as("the run itself does not change yet").isEqualTo(run);
        assertThat(kill.stops()).extracting(Step.Stop::grace).containsOnly(Duration.ZERO);
        assertThat(kill.stops()).extracting(Step.Stop::reason).containsOnly("NodeLost: node node-1 is down (disk failed)");

        RunRecord admitted = admitted(TWO_WORKERS);
        Step.LoseInstances lost = (Step.LoseInstances) LIFECYCLE.next(admitted, instances(admitted, pending(), pending()), down);
        assertThat(lost.lost()).extracting(InstanceRecord::state).containsOnly(InstanceState.NODE_LOST);
    }

    @Test
    void aDrainGivesNoticeAndGraceThenQueuesTheRunAgainAsAPreemptionNotAFailure() {
        RunRecord run = started(aJob("job").replicas(2).preemptionGrace(Duration.ofMinutes(2)).spec());
        Observation draining = at(20).withDrainingNode("node-1", "by admin");
        Step.Terminate drain = (Step.Terminate) LIFECYCLE.next(run, instances(run, live(), live()), draining);
        assertThat(drain.next().restartCause()).isEqualTo(FaultState.RestartCause.PREEMPTION);
        assertThat(drain.next().reclaimFor()).as("its resources go to no run in particular").isNull();
        assertThat(drain.stops()).extracting(Step.Stop::grace).containsOnly(Duration.ofMinutes(2));
        assertThat(drain.stops()).extracting(Step.Stop::reason).containsOnly("NodeDrain: node node-1 is drained (by admin)");

        Step.Requeue requeue = (Step.Requeue) LIFECYCLE.next(drain.next(), instances(run, preemptedAt(90), preemptedAt(90)), draining);
        assertThat(requeue.next().state()).isEqualTo(RunState.QUEUED);
        assertThat(requeue.next().reason()).isEqualTo("Preempted: NodeDrain: node node-1 is drained (by admin)");
        assertThat(requeue.next().preemptions()).isEqualTo(1);
        assertThat(requeue.next().faults().failures()).as("a drain is no failure").isZero();
        assertThat(requeue.next().faults().retryAt()).as("no backoff after a preemption").isNull();
    }

    @Test
    void reportedProgressIsRecordedThenAHangRestartsTheRun() {
        JobSpec spec = aJob("job").replicas(1).faultTolerance(policy(List.of(), FaultTolerance.FailureAction.Fail, null, Duration.ofMinutes(10)))
                .spec();
        RunRecord run = started(spec);
        List<InstanceRecord> instances = instances(run, live());
        Map<InstanceId, InstanceActivity> quiet = Map.of(instances.get(0).id(),
                new InstanceActivity(T0.plusSeconds(60), 10L, T0.plusSeconds(60), 10L, T0.plusSeconds(60)));
        Step.RecordProgress progress = (Step.RecordProgress) LIFECYCLE.next(run, instances, at(120).withActivities(quiet));
        assertThat(progress.next().faults().checkpointStep()).isEqualTo(10L);
        assertThat(LIFECYCLE.next(progress.next(), instances, at(120).withActivities(quiet))).as("nothing new").isInstanceOf(Step.Stay.class);
        Step.Terminate hung = (Step.Terminate) LIFECYCLE.next(progress.next(), instances, at(60 + 600).withActivities(quiet));
        assertThat(hung.next().restartCause()).isEqualTo(FaultState.RestartCause.HANG);
        assertThat(hung.next().reason()).startsWith("Hung: no output and no progress from any instance for 10m (hangTimeout 10m)");
    }

    @Test
    void whatANextDecisionWantsToSeeIsAskedForOnlyWhenItMatters() {
        RunRecord run = started(aJob("job").replicas(2).faultTolerance(new FaultTolerance(FaultTolerance.RunType.Sync, 3, null, 3, 3,
                Duration.ofSeconds(10), Duration.ofMinutes(1), List.of(), List.of("CUDA error"), List.of(), FaultTolerance.FailureAction.Fail, 0,
                null, null)).spec());
        assertThat(RunLifecycle.wants(run, instances(run, live(), live())).activities()).isTrue();
        RunLifecycle.Wants failed = RunLifecycle.wants(run, instances(run, exited(1, 30), exitedAt(139, 30_100)));
        assertThat(failed.logsOf().id().rank()).as("the root cause's log, for the retry patterns").isEqualTo(1);
        assertThat(failed.activities()).isFalse();
        RunRecord cancelled = run.terminating(RunState.CANCELLED, "CancelRequested");
        assertThat(RunLifecycle.wants(cancelled, instances(run, exited(143, 40), exited(143, 40))))
                .as("a cancelled run counts no work lost").isEqualTo(RunLifecycle.Wants.NOTHING);
    }

    // --- fixtures ---

    private static FaultTolerance policy(List<FaultTolerance.ExitCodeRange> codes, FaultTolerance.FailureAction other, Integer maxPreemptions,
                                         Duration hangTimeout) {
        return new FaultTolerance(FaultTolerance.RunType.Sync, 3, maxPreemptions, 3, 3, Duration.ofSeconds(10), Duration.ofMinutes(1), codes,
                List.of(), List.of(), other, 0, hangTimeout, null);
    }

    private static Observation at(long seconds) {
        return Observation.at(T0.plusSeconds(seconds));
    }

    private static Observation atMillis(long millis) {
        return Observation.at(T0.plusMillis(millis));
    }

    private static RunRecord queued(JobSpec spec) {
        return RunRecord.queued(new RunId("job-r1"), "team-a", "job", 1, spec, T0.minusSeconds(60));
    }

    private static RunRecord admitted(JobSpec spec) {
        return queued(spec).admitted(RealTimeResources.InQuota, "Admitted InQuota on 1 node(s)", T0);
    }

    private static RunRecord started(JobSpec spec) {
        return admitted(spec).moveTo(RunState.RUNNING, "AllInstancesRunning", T0);
    }

    /** One instance per rank of the run's current attempt, each made by the next function from its placed record. */
    @SafeVarargs
    private static List<InstanceRecord> instances(RunRecord run, Function<InstanceRecord, InstanceRecord>... states) {
        List<InstanceRecord> instances = new ArrayList<>();
        int rank = 0;
        for (var group : run.spec().nodeGroups()) {
            for (int i = 0; i < group.replicas() && rank < states.length; i++, rank++) {
                InstanceRecord placed = InstanceRecord.pending(new InstanceId(run.id(), run.attempt(), rank), group.name(), i, "node-1", List.of());
                instances.add(states[rank].apply(placed));
            }
        }
        return instances;
    }

    private static Function<InstanceRecord, InstanceRecord> pending() {
        return i -> i;
    }

    private static Function<InstanceRecord, InstanceRecord> live() {
        return i -> i.running(Map.of("pid", "1" + i.id().rank()), T0);
    }

    private static Function<InstanceRecord, InstanceRecord> succeeded() {
        return i -> live().apply(i).finished(InstanceState.SUCCEEDED, 0, "Completed", T0.plusSeconds(50));
    }

    private static Function<InstanceRecord, InstanceRecord> exited(int code, long atSeconds) {
        return exitedAt(code, atSeconds * 1000);
    }

    private static Function<InstanceRecord, InstanceRecord> exitedAt(int code, long atMillis) {
        return i -> live().apply(i).finished(InstanceState.FAILED, code, "Exited with code " + code, T0.plusMillis(atMillis));
    }

    private static Function<InstanceRecord, InstanceRecord> nodeLost() {
        return i -> live().apply(i).finished(InstanceState.NODE_LOST, null, "NodeLost: node node-1 is down", T0.plusSeconds(35));
    }

    private static Function<InstanceRecord, InstanceRecord> preemptedAt(long seconds) {
        return i -> live().apply(i).finished(InstanceState.RESOURCE_PREEMPTED, 143, "Preempted (exit code 143)", T0.plusSeconds(seconds));
    }

    private static Function<InstanceRecord, InstanceRecord> probeFailed(String why) {
        return i -> live().apply(i).probeFailed(why);
    }

    private static RunRecord nextRun(Step step, RunRecord before) {
        return step.accept(new Step.Handler<>() {
            @Override
            public RunRecord stay(Step.Stay s) {
                return before;
            }

            @Override
            public RunRecord transition(Step.Transition s) {
                return s.next();
            }

            @Override
            public RunRecord recordProgress(Step.RecordProgress s) {
                return s.next();
            }

            @Override
            public RunRecord terminate(Step.Terminate s) {
                return s.next();
            }

            @Override
            public RunRecord loseInstances(Step.LoseInstances s) {
                return before;
            }

            @Override
            public RunRecord launch(Step.Launch s) {
                return before;
            }

            @Override
            public RunRecord restartInstance(Step.RestartInstance s) {
                return s.next();
            }

            @Override
            public RunRecord changeWorld(Step.ChangeWorld s) {
                return s.next();
            }

            @Override
            public RunRecord requeue(Step.Requeue s) {
                return s.next();
            }

            @Override
            public RunRecord end(Step.End s) {
                return s.next();
            }
        });
    }
}
