package io.slipstream.model.usage;

import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.model.RunOrigin;
import io.slipstream.model.RunRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class UsageChangesTest {
    private static final Instant T0 = Instant.parse("2026-03-01T10:00:00Z");
    private static final Instant T1 = T0.plus(Duration.ofMinutes(5));
    private static final Instant T2 = T0.plus(Duration.ofMinutes(65));
    /** Two groups: 2 x 4 GPUs and 1 x 0 GPUs, 3 instances of 1 core each. */
    private static final JobSpec SPEC = aJob("train").workspace("team-a").quota("q").group("worker").replicas(2).gpus(4).cpu(1)
            .andGroup("ps").replicas(1).gpus(0).cpu(1).spec();

    private static RunRecord queued() {
        return RunRecord.queued(new RunId("train-0001abcd"), "team-a", "train", 1, SPEC, new RunOrigin(Map.of(), null, null, "alice"), T0);
    }

    private static UsageChange.Opened opened(UsageKind kind, Instant at) {
        return new UsageChange.Opened(new RunId("train-0001abcd"), kind, "team-a", "q", "alice", "train", 8, 3000, at);
    }

    private static UsageChange.Closed closed(Instant at, long lostGpu, long lostCpu) {
        return new UsageChange.Closed(new RunId("train-0001abcd"), at, lostGpu, lostCpu);
    }

    @Test
    void aNewRunOpensItsQueuedSegmentAtItsCreation() {
        assertThat(UsageChanges.between(null, queued(), T1)).containsExactly(opened(UsageKind.QUEUED, T0));
    }

    @Test
    void eachMoveBetweenQueuedInQuotaBorrowedAndDoneClosesOneSegmentAndOpensTheNext() {
        RunRecord queued = queued();
        RunRecord inQuota = queued.admitted(RealTimeResources.InQuota, "Admitted", T1);
        RunRecord borrowed = queued.admitted(RealTimeResources.NotInQuota, "Admitted", T1);
        RunRecord running = borrowed.moveTo(RunState.RUNNING, "Started", T1);
        RunRecord promoted = running.promoted();
        RunRecord succeeded = promoted.moveTo(RunState.SUCCEEDED, "Done", T2);
        RunRecord cancelledInQueue = queued.moveTo(RunState.CANCELLED, "Cancelled", T2);
        record Row(String what, RunRecord before, RunRecord after, List<UsageChange> expected) {
        }
        List<Row> table = List.of(
                new Row("admitted on its quota", queued, inQuota, List.of(closed(T2, 0, 0), opened(UsageKind.IN_QUOTA, T2))),
                new Row("admitted on idle capacity", queued, borrowed, List.of(closed(T2, 0, 0), opened(UsageKind.BORROWED, T2))),
                new Row("started: same segment", borrowed, running, List.of()),
                new Row("promoted: from borrowed to its quota", running, promoted, List.of(closed(T2, 0, 0), opened(UsageKind.IN_QUOTA, T2))),
                new Row("ended", promoted, succeeded, List.of(closed(T2, 0, 0))),
                new Row("cancelled while queued", queued, cancelledInQueue, List.of(closed(T2, 0, 0))),
                new Row("progress only", running, running.withFaults(running.faults().progressed(5L, T1, null, null)), List.of()),
                new Row("already done", succeeded, succeeded, List.of()));
        for (Row row : table) {
            assertThat(UsageChanges.between(row.before(), row.after(), T2)).as(row.what()).isEqualTo(row.expected());
        }
    }

    @Test
    void anInstancesMeasuredUsageIsChargedAsWhatItsRunHolds() {
        io.slipstream.api.run.InstanceUsage usage = new io.slipstream.api.run.InstanceUsage(1L << 30, 90_000_400_000L);
        RunRecord inQuota = queued().admitted(RealTimeResources.InQuota, "Admitted", T1).moveTo(RunState.RUNNING, "Started", T1);
        RunRecord borrowed = queued().admitted(RealTimeResources.NotInQuota, "Admitted", T1).moveTo(RunState.RUNNING, "Started", T1);
        assertThat(UsageChanges.measured(inQuota, usage, T2))
                .isEqualTo(new UsageChange.Measured(inQuota.id(), UsageKind.IN_QUOTA, "team-a", "q", "alice", "train", usage, T2));
        assertThat(UsageChanges.measured(borrowed, usage, T2).kind()).isEqualTo(UsageKind.BORROWED);
        assertThat(UsageChanges.measured(borrowed, usage, T2).cpuMillis()).isEqualTo(90_000);
        assertThat(UsageChanges.measured(borrowed, io.slipstream.api.run.InstanceUsage.of(1L << 30, -1), T2).cpuMillis()).as("not measured").isZero();
        assertThat(UsageChanges.measured(borrowed, null, T2)).as("nothing measured, nothing recorded").isNull();
    }

    @Test
    void aPreemptionsLostWorkIsChargedAtWhatAnInstanceHoldsOnAverageAndTheRunQueuesAgain() {
        RunRecord running = queued().admitted(RealTimeResources.NotInQuota, "Admitted", T1).moveTo(RunState.RUNNING, "Started", T1);
        RunRecord stopping = running.preempting(new RunId("owner-0001abcd"), "Preempted");
        // 3 instances lost 60 s each since the last checkpoint: 180 instance-seconds at 8/3 GPUs and 1 core per instance.
        RunRecord lost = stopping.withFaults(stopping.faults().lost(180_000));
        RunRecord requeued = lost.requeued("Preempted: queued again", T2);
        assertThat(UsageChanges.between(stopping, requeued, T2))
                .containsExactly(closed(T2, 180_000L * 8 / 3, 180_000L * 3000 / 3), opened(UsageKind.QUEUED, T2));
    }

    @Test
    void workLostToOtherStopsIsNotChargedToPreemption() {
        RunRecord running = queued().admitted(RealTimeResources.InQuota, "Admitted", T1).moveTo(RunState.RUNNING, "Started", T1);
        RunRecord cancelling = running.terminating(RunState.CANCELLED, "CancelRequested");
        RunRecord cancelled = cancelling.withFaults(cancelling.faults().lost(60_000)).moveTo(RunState.CANCELLED, "Cancelled", T2);
        assertThat(UsageChanges.between(cancelling, cancelled, T2)).containsExactly(closed(T2, 0, 0));
    }

    @Test
    void aHoldingRunThatNeverSaidWhereItsResourcesCameFromBorrowedThem() {
        RunRecord admitted = queued().admitted(null, "Admitted", T1);
        assertThat(UsageChanges.kindOf(admitted)).isEqualTo(UsageKind.BORROWED);
        assertThat(UsageChanges.kindOf(queued())).isEqualTo(UsageKind.QUEUED);
    }

    /**
     * An elastic run of 1 to 4 instances of 4 GPUs and 1 core: guaranteed, with 2 of its 4 instances on idle capacity,
     * it holds an IN_QUOTA segment of 2 and a BORROWED one of 2 beside it; a shrink of the borrowed two closes both and
     * opens one of 2; the measured usage of an instance is charged as that instance stands.
     */
    @Test
    void anElasticRunsInstancesAreChargedAsEachStandsAndEachChangeOfSizeIsANewSegment() {
        JobSpec elastic = aJob("train").workspace("team-a").quota("q").group("worker").replicas(4).minReplicas(1).gpus(4).cpu(1).spec();
        RunId id = new RunId("train-0001abcd");
        RunRecord queued = RunRecord.queued(id, "team-a", "train", 1, elastic, new RunOrigin(Map.of(), null, null, "alice"), T0);
        RunRecord admitted = queued.admitted(RealTimeResources.InQuota, "Admitted", T1)
                .withWorld(io.slipstream.model.ElasticWorld.admitted(List.of(0, 1, 2, 3), java.util.Set.of(2, 3)));
        assertThat(UsageChanges.between(queued, admitted, T1)).containsExactly(
                new UsageChange.Closed(id, T1, 0, 0),
                new UsageChange.Opened(id, UsageKind.IN_QUOTA, "team-a", "q", "alice", "train", 8, 2000, T1, false),
                new UsageChange.Opened(id, UsageKind.BORROWED, "team-a", "q", "alice", "train", 8, 2000, T1, true));

        RunRecord shrunk = admitted.withWorld(admitted.world().shrunk(List.of(
                new io.slipstream.model.ElasticWorld.Leaving(2, null, RealTimeResources.NotInQuota, "Shrunk: x"),
                new io.slipstream.model.ElasticWorld.Leaving(3, null, RealTimeResources.NotInQuota, "Shrunk: x"))));
        assertThat(UsageChanges.between(admitted, shrunk, T2)).containsExactly(
                new UsageChange.Closed(id, T2, 0, 0),
                new UsageChange.Opened(id, UsageKind.IN_QUOTA, "team-a", "q", "alice", "train", 8, 2000, T2, false));
        assertThat(UsageChanges.between(shrunk, shrunk.withWorld(shrunk.world().changed()), T2)).as("the same size: the same segment").isEmpty();

        io.slipstream.api.run.InstanceUsage usage = io.slipstream.api.run.InstanceUsage.of(1L << 30, 90_000_000_000L);
        assertThat(UsageChanges.measured(admitted, 3, usage, T2).kind()).isEqualTo(UsageKind.BORROWED);
        assertThat(UsageChanges.measured(admitted, 0, usage, T2).kind()).isEqualTo(UsageKind.IN_QUOTA);
    }
}
