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
import io.slipstream.model.ElasticWorld;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An elastic run's world changing, as a table: a run of 4 slots (trainer-0..3, minReplicas 1) whose world a shrink or a
 * grow left changing, its instances in some state; which step follows, which instances it stops (and with which
 * notice), and what starts after. Then the steps of whole changes, one after the other.
 */
class WorldChangeTest {
    private static final Instant T0 = Instant.parse("2026-03-01T08:00:00Z");
    private static final RunLifecycle LIFECYCLE = new RunLifecycle(new LifecycleLimits(Duration.ofSeconds(30), Duration.ofDays(30)));
    private static final JobSpec ELASTIC = aJob("job").group("trainer").replicas(4).minReplicas(1).faultTolerance(policy())
            .preemptionGrace(Duration.ofSeconds(20)).spec();
    private static final RunId OWNER = new RunId("owner-r1");

    /** {@code stopped}: rank to the notice's first word; {@code launched}: the ranks launched. */
    record Row(String name, RunRecord run, List<InstanceRecord> instances, Class<? extends Step> step, RunState state, RunState outcome,
               Map<Integer, String> stopped, List<Integer> launched) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Row> rows() {
        RunRecord shrinking = shrinking();
        RunRecord growing = growing();
        RunRecord shrunk = shrinking.withWorld(shrinking.world().changed());
        return Stream.of(
                new Row("a shrink: the members get the world change's notice, the slots leaving theirs", shrinking,
                        instances(shrinking, live(), live(), live(), live()), Step.Terminate.class, RunState.RUNNING, null,
                        Map.of(0, "WorldChange", 1, "WorldChange", 2, "Shrunk", 3, "Shrunk"), List.of()),
                new Row("told, not gone yet: it waits (told once)", shrinking, instances(shrinking, told(), told(), told(), told()), Step.Stay.class,
                        RunState.RUNNING, null, Map.of(), List.of()),
                new Row("one told after a restart of the server, the others before", shrinking, instances(shrinking, told(), live(), gone(), told()),
                        Step.Terminate.class, RunState.RUNNING, null, Map.of(1, "WorldChange"), List.of()),
                new Row("every one gone (one killed after its grace, ignoring the notice): the new world starts", shrinking,
                        instances(shrinking, gone(), killedAfterGrace(), gone(), gone()), Step.ChangeWorld.class, RunState.RUNNING, null, Map.of(),
                        List.of()),
                new Row("the new world: its members launched, the slots removed are history, no failure", shrunk,
                        instances(shrunk, restarted(), restarted(), gone(), gone()), Step.Launch.class, RunState.RUNNING, null, Map.of(),
                        List.of(0, 1)),
                new Row("a grow: the running members are told, the new ones wait unlaunched", growing,
                        instances(growing, live(), live(), placed(), placed()), Step.Terminate.class, RunState.RUNNING, null,
                        Map.of(0, "WorldChange", 1, "WorldChange"), List.of()),
                new Row("a grow: nothing launches while the world before stops", growing, instances(growing, told(), gone(), placed(), placed()),
                        Step.Stay.class, RunState.RUNNING, null, Map.of(), List.of()),
                new Row("a member that fails during the change: judged by the restart rules, the run restarts whole", shrinking,
                        instances(shrinking, told(), failed(137), told(), told()), Step.Terminate.class, RunState.TERMINATING, RunState.QUEUED,
                        Map.of(), List.of()),
                new Row("a member that fails for good during the change: the run fails", shrinking,
                        instances(shrinking, live(), failed(1), told(), told()), Step.Terminate.class, RunState.TERMINATING, RunState.FAILED,
                        Map.of(0, "InstanceFailed"), List.of()),
                new Row("a slot leaving that fails while it goes: no failure of the run", shrinking,
                        instances(shrinking, told(), told(), failed(1), told()), Step.Stay.class, RunState.RUNNING, null, Map.of(), List.of()),
                new Row("a cancel during the change stops every live instance", shrinking.withCancelRequestedAt(T0.plusSeconds(5)),
                        instances(shrinking, told(), live(), told(), live()), Step.Terminate.class, RunState.TERMINATING, RunState.CANCELLED,
                        Map.of(1, "CancelRequested", 3, "CancelRequested"), List.of()),
                new Row("a run of the new world whose members all succeeded succeeds (2 of its 4 replicas)", shrunk,
                        instances(shrunk, succeeded(), succeeded(), gone(), gone()), Step.Transition.class, RunState.SUCCEEDED, null, Map.of(),
                        List.of()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void decides(Row row) {
        Step step = LIFECYCLE.next(row.run(), row.instances(), Observation.at(T0.plusSeconds(40)));
        assertThat(step).as(row.name()).isInstanceOf(row.step());
        RunRecord next = step instanceof Step.Terminate terminate ? terminate.next()
                : step instanceof Step.Transition transition ? transition.next()
                : step instanceof Step.ChangeWorld change ? change.next() : row.run();
        assertThat(next.state()).as(row.name()).isEqualTo(row.state());
        assertThat(next.outcome()).as(row.name()).isEqualTo(row.outcome());
        Map<Integer, String> stopped = new java.util.TreeMap<>();
        if (step instanceof Step.Terminate terminate) {
            terminate.stops().forEach(s -> stopped.put(s.instance().id().rank(), s.reason().split(":")[0]));
        }
        assertThat(stopped).as(row.name() + ": stopped").isEqualTo(row.stopped());
        List<Integer> launched = step instanceof Step.Launch launch ? launch.instances().stream().map(i -> i.id().rank()).toList() : List.of();
        assertThat(launched).as(row.name() + ": launched").isEqualTo(row.launched());
    }

    @Test
    void theNoticesSayWhatComesAndTheGraceIsTheRunsPreemptionGrace() {
        RunRecord run = shrinking();
        Step.Terminate step = (Step.Terminate) LIFECYCLE.next(run, instances(run, live(), live(), live(), live()), Observation.at(T0));
        assertThat(step.stops()).allMatch(s -> s.grace().equals(Duration.ofSeconds(20)));
        assertThat(step.stops().get(0).reason()).isEqualTo(
                "WorldChange: the run goes on with 2 instance(s) in world 2; save, exit, and start again in it");
        assertThat(step.stops().get(2).reason()).isEqualTo("Shrunk: capacity reclaimed");
    }

    @Test
    void afterARestartOfTheServerTheInstancesToldAreToldTheSameNoticeAgain() {
        RunRecord run = shrinking();
        List<InstanceRecord> instances = instances(run, told(), told(), told(), told());
        Step.Stop member = LIFECYCLE.stopAgain(run, instances.get(0));
        assertThat(member.reason()).isEqualTo("WorldChange: the run goes on with 2 instance(s) in world 2; save, exit, and start again in it");
        assertThat(member.grace()).as("the change's grace, not the default").isEqualTo(Duration.ofSeconds(20));
        Step.Stop leaving = LIFECYCLE.stopAgain(run, instances.get(3));
        assertThat(leaving.reason()).isEqualTo("Shrunk: capacity reclaimed");
        assertThat(leaving.grace()).isEqualTo(Duration.ofSeconds(20));
        RunRecord cancelled = run.terminating(RunState.CANCELLED, "CancelRequested");
        assertThat(LIFECYCLE.stopAgain(cancelled, instances.get(0)).reason()).as("a run stopping whole: its own reason").isEqualTo("CancelRequested");
    }

    @Test
    void theNewWorldRestartsItsMembersInPlaceAndForgetsWhatLeft() {
        RunRecord run = shrinking();
        List<InstanceRecord> instances = instances(run, gone(), gone(), gone(), gone());
        Step.ChangeWorld step = (Step.ChangeWorld) LIFECYCLE.next(run, instances, Observation.at(T0.plusSeconds(40)));
        assertThat(step.restarted()).extracting(i -> i.id().rank()).containsExactly(0, 1);
        assertThat(step.restarted()).allSatisfy(i -> {
            assertThat(i.state()).isEqualTo(InstanceState.PENDING);
            assertThat(i.restarts()).as("a new launch of the same slot").isEqualTo(1);
            assertThat(i.node()).as("in place").isEqualTo(instances.get(i.id().rank()).node());
            assertThat(i.id().attempt()).as("the same attempt").isEqualTo(1);
        });
        assertThat(step.next().world().changing()).isFalse();
        assertThat(step.next().world().leaving()).isEmpty();
        assertThat(step.next().world().version()).isEqualTo(2);
        assertThat(step.next().faults().failures()).as("a change of size is no failure").isZero();
        assertThat(step.message()).isEqualTo("world 2 starts with 2 instance(s)");
    }

    @Test
    void aWholeShrinkThenAWholeGrowEndWithEveryMemberRunningInTheLatestWorld() {
        RunRecord run = shrinking();
        List<InstanceRecord> instances = new ArrayList<>(instances(run, live(), live(), live(), live()));
        run = settle(run, instances);
        assertThat(run.world().members()).containsExactly(0, 1);
        assertThat(instances).filteredOn(i -> i.id().rank() < 2).allMatch(i -> i.state() == InstanceState.RUNNING && i.restarts() == 1);
        assertThat(instances).filteredOn(i -> i.id().rank() >= 2).allMatch(i -> i.state() == InstanceState.KILLED);

        run = run.withWorld(run.world().grown(List.of(2, 3), Set.of(2, 3)));
        instances.set(2, instances.get(2).restartedInPlace()); // what the control loop does for a slot grown again
        instances.set(3, instances.get(3).restartedInPlace());
        run = settle(run, instances);
        assertThat(run.world().version()).isEqualTo(3);
        assertThat(run.world().changing()).isFalse();
        assertThat(instances).allMatch(i -> i.state() == InstanceState.RUNNING);
        assertThat(instances).extracting(InstanceRecord::restarts).containsExactly(2, 2, 1, 1);
    }

    /** Takes the steps until the run stays, each instance told to stop ending as told. */
    private static RunRecord settle(RunRecord run, List<InstanceRecord> instances) {
        for (int i = 0; i < 20; i++) {
            Step step = LIFECYCLE.next(run, instances, Observation.at(T0.plusSeconds(40 + i)));
            if (step instanceof Step.Terminate terminate) {
                terminate.stops().forEach(s -> instances.set(s.instance().id().rank(),
                        s.instance().stopRequested(T0).finished(InstanceState.KILLED, 143, "Terminated", T0.plusSeconds(41))));
            } else if (step instanceof Step.ChangeWorld change) {
                change.restarted().forEach(r -> instances.set(r.id().rank(), r));
                run = change.next();
            } else if (step instanceof Step.Launch launch) {
                launch.instances().forEach(l -> instances.set(l.id().rank(), l.running(Map.of("pid", "2"), T0)));
            } else if (step instanceof Step.Stay) {
                return run;
            } else {
                throw new AssertionError("unexpected " + step);
            }
        }
        throw new AssertionError("still changing");
    }

    private static FaultTolerance policy() {
        return new FaultTolerance(FaultTolerance.RunType.Sync, 3, null, 3, 3, Duration.ofSeconds(10), Duration.ofMinutes(1),
                List.of(new FaultTolerance.ExitCodeRange(137, 137)), List.of(), List.of(), FaultTolerance.FailureAction.Fail, 0, null, null);
    }

    private static RunRecord running() {
        return RunRecord.queued(new RunId("job-r1"), "team-b", "job", 1, ELASTIC, T0.minusSeconds(60))
                .admitted(RealTimeResources.InQuota, "Admitted", T0).moveTo(RunState.RUNNING, "AllInstancesRunning", T0)
                .withWorld(ElasticWorld.admitted(List.of(0, 1, 2, 3), Set.of(2, 3)));
    }

    /** Slots 2 and 3 removed for the owner's run: world 2 of slots 0 and 1, changing. */
    private static RunRecord shrinking() {
        RunRecord run = running();
        return run.withWorld(run.world().shrunk(List.of(
                new ElasticWorld.Leaving(2, OWNER, RealTimeResources.NotInQuota, "Shrunk: capacity reclaimed"),
                new ElasticWorld.Leaving(3, OWNER, RealTimeResources.NotInQuota, "Shrunk: capacity reclaimed"))));
    }

    /** World 1 of slots 0 and 1, grown by 2 and 3 into world 2, changing. */
    private static RunRecord growing() {
        RunRecord run = running().withWorld(ElasticWorld.admitted(List.of(0, 1), Set.of()));
        return run.withWorld(run.world().grown(List.of(2, 3), Set.of(2, 3)));
    }

    @SafeVarargs
    private static List<InstanceRecord> instances(RunRecord run, Function<InstanceRecord, InstanceRecord>... states) {
        List<InstanceRecord> instances = new ArrayList<>();
        for (int rank = 0; rank < 4; rank++) {
            InstanceRecord placed = InstanceRecord.pending(new InstanceId(run.id(), run.attempt(), rank), "trainer", rank, "node-" + rank,
                    List.of(0));
            instances.add(states[rank].apply(placed));
        }
        return instances;
    }

    private static Function<InstanceRecord, InstanceRecord> placed() {
        return i -> i;
    }

    private static Function<InstanceRecord, InstanceRecord> live() {
        return i -> i.running(Map.of("pid", "1" + i.id().rank()), T0);
    }

    private static Function<InstanceRecord, InstanceRecord> told() {
        return i -> live().apply(i).stopRequested(T0.plusSeconds(1));
    }

    private static Function<InstanceRecord, InstanceRecord> gone() {
        return i -> told().apply(i).finished(InstanceState.KILLED, 0, "Terminated (exit code 0)", T0.plusSeconds(3));
    }

    private static Function<InstanceRecord, InstanceRecord> killedAfterGrace() {
        return i -> told().apply(i).finished(InstanceState.KILLED, 137, "Terminated (exit code 137)", T0.plusSeconds(21));
    }

    private static Function<InstanceRecord, InstanceRecord> restarted() {
        return i -> gone().apply(i).restartedInPlace();
    }

    private static Function<InstanceRecord, InstanceRecord> succeeded() {
        return i -> restarted().apply(i).running(Map.of("pid", "2"), T0).finished(InstanceState.SUCCEEDED, 0, "Completed", T0.plusSeconds(30));
    }

    private static Function<InstanceRecord, InstanceRecord> failed(int code) {
        return i -> live().apply(i).finished(InstanceState.FAILED, code, "Exited with code " + code, T0.plusSeconds(30));
    }
}
