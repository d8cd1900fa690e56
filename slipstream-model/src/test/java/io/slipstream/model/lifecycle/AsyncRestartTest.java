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
 * {@code runType: Async} as a table: a parameter-server run (ps-0 and worker-0..2, ranks 0..3) in which something
 * happens; which step follows, which instances it touches, and why.
 */
class AsyncRestartTest {
    private static final Instant T0 = Instant.parse("2026-03-01T08:00:00Z");
    private static final RunLifecycle LIFECYCLE = new RunLifecycle(new LifecycleLimits(Duration.ofSeconds(30), Duration.ofDays(30)));
    private static final JobSpec ASYNC = psJob(FaultTolerance.RunType.Async, 3);
    private static final JobSpec SYNC = psJob(FaultTolerance.RunType.Sync, 3);

    /** {@code stopped}: the ranks the step tells to stop; {@code restarted}: the rank it restarts in place ({@code null}: none). */
    record Row(String name, RunRecord run, List<InstanceRecord> instances, Observation seen, Class<? extends Step> step, RunState state,
               RunState outcome, String reason, List<Integer> stopped, Integer restarted) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Row> rows() {
        RunRecord running = started(ASYNC);
        RunRecord spent = running.withFaults(FaultState.NONE.restartedInstance(null).restartedInstance(null).restartedInstance(null));
        return Stream.of(
                new Row("a retryable failure restarts that rank alone", running, instances(running, live(), live(), exited(137), live()), at(31),
                        Step.RestartInstance.class, RunState.RUNNING, null, null, List.of(), 2),
                new Row("while its peers may still fail, the failure is not judged yet", running,
                        instances(running, live(), live(), exited(137), live()), atMillis(30_500), Step.Stay.class, RunState.RUNNING, null, null,
                        List.of(), null),
                new Row("the budget spent: the run fails and the others are stopped", spent, instances(spent, live(), live(), exited(137), live()),
                        at(31), Step.Terminate.class, RunState.TERMINATING, RunState.FAILED,
                        "RestartBudgetExhausted: restarted 3 time(s) for failures (faultTolerance.maxRestarts: 3); last: worker-1 (Exited with code 137)"
                                + " (retryOn.exitCodes 137)", List.of(0, 1, 3), null),
                new Row("a failure no rule retries fails the run", running, instances(running, live(), live(), exited(1), live()), at(31),
                        Step.Terminate.class, RunState.TERMINATING, RunState.FAILED, "InstanceFailed: worker-1 (Exited with code 1); no retry rule matches",
                        List.of(0, 1, 3), null),
                new Row("a lost node restarts the whole run, as Sync does", running, instances(running, live(), live(), nodeLost(), live()), at(40),
                        Step.Terminate.class, RunState.TERMINATING, RunState.QUEUED,
                        "NodeLost: worker-1 (NodeLost: node node-1 is down); restarting elsewhere", List.of(0, 1, 3), null),
                new Row("a preemption stops every instance", running.preempting(new RunId("owner-r1"), "Reclaimed by owner-r1"),
                        instances(running, live(), live(), live(), live()), at(40), Step.Terminate.class, RunState.TERMINATING, RunState.QUEUED,
                        "Reclaimed by owner-r1", List.of(0, 1, 2, 3), null),
                new Row("a cancel stops every instance", running.withCancelRequestedAt(T0), instances(running, live(), live(), live(), live()), at(40),
                        Step.Terminate.class, RunState.TERMINATING, RunState.CANCELLED, "CancelRequested", List.of(0, 1, 2, 3), null),
                new Row("Sync: the same failure restarts the whole gang", started(SYNC), instances(started(SYNC), live(), live(), exited(137), live()),
                        at(31), Step.Terminate.class, RunState.TERMINATING, RunState.QUEUED,
                        "InstanceFailed: worker-1 (Exited with code 137) (retryOn.exitCodes 137); restarting in 10s", List.of(0, 1, 3), null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void decides(Row row) {
        Step step = LIFECYCLE.next(row.run(), row.instances(), row.seen());
        assertThat(step).as(row.name()).isInstanceOf(row.step());
        RunRecord next = step instanceof Step.RestartInstance restart ? restart.next()
                : step instanceof Step.Terminate terminate ? terminate.next() : row.run();
        assertThat(next.state()).as(row.name()).isEqualTo(row.state());
        if (row.outcome() != null) {
            assertThat(next.outcome()).as(row.name()).isEqualTo(row.outcome());
        }
        if (row.reason() != null) {
            assertThat(next.reason()).as(row.name()).isEqualTo(row.reason());
        }
        List<Integer> stopped = step instanceof Step.Terminate terminate ? terminate.stops().stream().map(s -> s.instance().id().rank()).toList()
                : List.of();
        assertThat(stopped).as(row.name() + ": stopped").isEqualTo(row.stopped());
        Integer restarted = step instanceof Step.RestartInstance restart ? restart.instance().id().rank() : null;
        assertThat(restarted).as(row.name() + ": restarted").isEqualTo(row.restarted());
    }

    @Test
    void theRestartedRankKeepsItsPlaceCountsTheRestartAndSaysSo() {
        RunRecord run = started(ASYNC);
        List<InstanceRecord> instances = instances(run, live(), live(), exited(137), live());
        Step.RestartInstance step = (Step.RestartInstance) LIFECYCLE.next(run, instances, at(31));
        InstanceRecord failed = instances.get(2);
        assertThat(step.instance().state()).isEqualTo(InstanceState.PENDING);
        assertThat(step.instance().id()).as("same attempt, same rank").isEqualTo(failed.id());
        assertThat(step.instance().restarts()).isEqualTo(1);
        assertThat(step.instance().node()).isEqualTo(failed.node());
        assertThat(step.instance().gpus()).isEqualTo(failed.gpus());
        assertThat(step.instance().handle()).as("nothing of the dead process").isEmpty();
        assertThat(step.instance().exitCode()).isNull();
        assertThat(step.next().attempt()).as("no new attempt").isEqualTo(1);
        assertThat(step.next().faults().failures()).as("counted against maxRestarts").isEqualTo(1);
        assertThat(step.next().faults().retryAt()).isEqualTo(T0.plusSeconds(41));
        assertThat(step.message()).isEqualTo("worker-1 (rank 2) restarted after exit code 137 (restart 1 of 3); starts in 10s");
    }

    @Test
    void theRestartedRankStartsAloneOnceItsBackoffIsOver() {
        RunRecord run = started(ASYNC);
        List<InstanceRecord> instances = new ArrayList<>(instances(run, live(), live(), exited(137), live()));
        Step.RestartInstance restart = (Step.RestartInstance) LIFECYCLE.next(run, instances, at(31));
        instances.set(2, restart.instance());
        assertThat(LIFECYCLE.next(restart.next(), instances, at(40))).as("backing off").isInstanceOf(Step.Stay.class);
        Step.Launch launch = (Step.Launch) LIFECYCLE.next(restart.next(), instances, at(41));
        assertThat(launch.instances()).extracting(i -> i.id().rank()).containsExactly(2);
    }

    @Test
    void aSecondFailureOfTheSameRankCountsAgainAndTheBackoffDoubles() {
        RunRecord run = started(ASYNC);
        List<InstanceRecord> instances = new ArrayList<>(instances(run, live(), live(), exited(137), live()));
        Step.RestartInstance first = (Step.RestartInstance) LIFECYCLE.next(run, instances, at(31));
        InstanceRecord again = first.instance().running(Map.of("pid", "99"), T0.plusSeconds(41))
                .finished(InstanceState.FAILED, 137, "Exited with code 137", T0.plusSeconds(50));
        instances.set(2, again);
        Step.RestartInstance second = (Step.RestartInstance) LIFECYCLE.next(first.next(), instances, at(52));
        assertThat(second.instance().restarts()).isEqualTo(2);
        assertThat(second.next().faults().failures()).isEqualTo(2);
        assertThat(second.next().faults().retryAt()).isEqualTo(T0.plusSeconds(72));
        assertThat(second.message()).isEqualTo("worker-1 (rank 2) restarted after exit code 137 (restart 2 of 3); starts in 20s");
    }

    @Test
    void aPreemptedAsyncRunIsQueuedAgainAsAWhole() {
        RunRecord preempted = started(ASYNC).preempting(new RunId("owner-r1"), "Reclaimed by owner-r1");
        Function<InstanceRecord, InstanceRecord> gone = i -> live().apply(i).finished(InstanceState.RESOURCE_PREEMPTED, 143, "Preempted", T0.plusSeconds(45));
        Step.Requeue requeue = (Step.Requeue) LIFECYCLE.next(preempted, instances(preempted, gone, gone, gone, gone), at(46));
        assertThat(requeue.next().state()).isEqualTo(RunState.QUEUED);
        assertThat(requeue.next().attempt()).isEqualTo(2);
    }

    private static JobSpec psJob(FaultTolerance.RunType type, int maxRestarts) {
        FaultTolerance policy = new FaultTolerance(type, maxRestarts, null, 3, 3, Duration.ofSeconds(10), Duration.ofMinutes(1),
                List.of(new FaultTolerance.ExitCodeRange(137, 137)), List.of(), List.of(), FaultTolerance.FailureAction.Fail, 0, null,
                null);
        return aJob("job").group("ps").replicas(1).andGroup("worker").replicas(3).faultTolerance(policy).spec();
    }

    private static RunRecord started(JobSpec spec) {
        return RunRecord.queued(new RunId("job-r1"), "team-a", "job", 1, spec, T0.minusSeconds(60))
                .admitted(RealTimeResources.InQuota, "Admitted", T0).moveTo(RunState.RUNNING, "AllInstancesRunning", T0);
    }

    @SafeVarargs
    private static List<InstanceRecord> instances(RunRecord run, Function<InstanceRecord, InstanceRecord>... states) {
        List<InstanceRecord> instances = new ArrayList<>();
        int rank = 0;
        for (var group : run.spec().nodeGroups()) {
            for (int i = 0; i < group.replicas(); i++, rank++) {
                InstanceRecord placed = InstanceRecord.pending(new InstanceId(run.id(), run.attempt(), rank), group.name(), i, "node-1",
                        List.of(rank));
                instances.add(states[rank].apply(placed));
            }
        }
        return instances;
    }

    private static Function<InstanceRecord, InstanceRecord> live() {
        return i -> i.running(Map.of("pid", "1" + i.id().rank()), T0);
    }

    private static Function<InstanceRecord, InstanceRecord> exited(int code) {
        return i -> live().apply(i).finished(InstanceState.FAILED, code, "Exited with code " + code, T0.plusSeconds(30));
    }

    private static Function<InstanceRecord, InstanceRecord> nodeLost() {
        return i -> live().apply(i).finished(InstanceState.NODE_LOST, null, "NodeLost: node node-1 is down", T0.plusSeconds(35));
    }

    private static Observation at(long seconds) {
        return Observation.at(T0.plusSeconds(seconds));
    }

    private static Observation atMillis(long millis) {
        return Observation.at(T0.plusMillis(millis));
    }
}
