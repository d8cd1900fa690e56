package io.slipstream.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import io.slipstream.model.usage.UsageChange;
import io.slipstream.model.usage.UsageKind;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** What every {@link Store} must do with usage segments: mixed into {@link BaseStoreContractTest}. */
interface UsageContract {
    Instant T = Instant.parse("2026-03-02T00:00:00Z");

    Store store();

    /** {@code hours} after T (a UTC midnight): windows are whole hours. */
    private static Instant at(long hours) {
        return T.plus(Duration.ofHours(hours));
    }

    private static UsageChange.Opened open(String run, UsageKind kind, String workspace, String quota, String user, String job, long gpu, long minute) {
        return new UsageChange.Opened(new RunId(run), kind, workspace, quota, user, job, gpu, gpu * 1000, at(minute));
    }

    private static UsageChange.Closed close(String run, long hour, long lostGpuMinutes) {
        return new UsageChange.Closed(new RunId(run), at(hour), lostGpuMinutes * 60_000, lostGpuMinutes * 60_000 * 1000);
    }

    private static UsageQuery window(UsageGrouping by, long fromMinute, long untilMinute, long nowMinute, Set<String> workspaces) {
        return new UsageQuery(workspaces, by, at(fromMinute), at(untilMinute), at(nowMinute));
    }

    private static double gpuHours(List<UsageTotal> totals, UsageTotal.Key key, UsageKind kind) {
        return totals.stream().filter(t -> t.key().equals(key) && t.kind() == kind).mapToDouble(t -> t.gpuMillis() / 3_600_000).sum();
    }

    /** Hours after T. Run a (alice, quota q): queued 0-10, in quota 10-40, 3 GPU-minutes lost. Run b (bob, no quota): queued 5-20, borrowed 20-open. */
    private void twoRuns() {
        store().commit(tx -> tx.recordUsage(List.of(open("a", UsageKind.QUEUED, "team-a", "q", "alice", "train", 2, 0))));
        store().commit(tx -> tx.recordUsage(List.of(open("b", UsageKind.QUEUED, "team-b", null, "bob", "eval", 4, 5))));
        store().commit(tx -> tx.recordUsage(List.of(close("a", 10, 0), open("a", UsageKind.IN_QUOTA, "team-a", "q", "alice", "train", 2, 10))));
        store().commit(tx -> tx.recordUsage(List.of(close("b", 20, 0), open("b", UsageKind.BORROWED, "team-b", null, "bob", "eval", 4, 20))));
        store().commit(tx -> tx.recordUsage(List.of(close("a", 40, 3))));
    }

    @Test
    default void usageAddsUpEachSegmentsPartInsideTheWindowAndAnOpenOneUntilNow() {
        twoRuns();
        List<UsageTotal> all = store().usage().totals(window(UsageGrouping.WORKSPACE, 0, 120, 60, null));
        UsageTotal.Key a = new UsageTotal.Key("team-a", null, null, null);
        UsageTotal.Key b = new UsageTotal.Key("team-b", null, null, null);
        assertThat(gpuHours(all, a, UsageKind.QUEUED)).isEqualTo(2 * 10.0);
        assertThat(gpuHours(all, a, UsageKind.IN_QUOTA)).isEqualTo(2 * 30.0);
        assertThat(gpuHours(all, b, UsageKind.QUEUED)).isEqualTo(4 * 15.0);
        assertThat(gpuHours(all, b, UsageKind.BORROWED)).isEqualTo(4 * 40.0); // open: 20 until now (60)
        UsageTotal inQuota = all.stream().filter(t -> t.key().equals(a) && t.kind() == UsageKind.IN_QUOTA).findFirst().orElseThrow();
        assertThat(inQuota.lostGpuMillis()).isEqualTo(3 * 60_000);
        assertThat(inQuota.cpuMilliMillis()).isEqualTo(2000.0 * 30 * 3_600_000);
        assertThat(inQuota.millis()).isEqualTo(30 * 3_600_000L);
        assertThat(all).extracting(UsageTotal::key).containsExactly(a, a, b, b); // by key, then kind
        assertThat(all.get(0).kind()).isEqualTo(UsageKind.QUEUED);
    }

    /**
     * An elastic run guaranteed 2 GPUs with 4 more on idle capacity holds two segments at once (hours 10-40); its end
     * closes both, and the work it lost is charged once.
     */
    @Test
    default void anElasticRunsTwoSegmentsOpenedTogetherAreBothCountedAndItsLostWorkOnce() {
        UsageChange.Opened borrowedBeside = new UsageChange.Opened(new RunId("e"), UsageKind.BORROWED, "team-a", "q", "alice", "train", 4, 4000,
                at(10), true);
        store().commit(tx -> tx.recordUsage(List.of(open("e", UsageKind.IN_QUOTA, "team-a", "q", "alice", "train", 2, 10), borrowedBeside)));
        store().commit(tx -> tx.recordUsage(List.of(close("e", 40, 3))));
        List<UsageTotal> all = store().usage().totals(window(UsageGrouping.QUOTA, 0, 120, 60, null));
        UsageTotal.Key q = new UsageTotal.Key("team-a", "q", null, null);
        assertThat(gpuHours(all, q, UsageKind.IN_QUOTA)).isEqualTo(2 * 30.0);
        assertThat(gpuHours(all, q, UsageKind.BORROWED)).isEqualTo(4 * 30.0);
        assertThat(all.stream().filter(t -> t.key().equals(q)).mapToLong(UsageTotal::lostGpuMillis).sum()).isEqualTo(3 * 60_000);
    }

    @Test
    default void aWindowClipsTheSegmentsItCutsAndCountsWorkLostWhereItsSegmentEnded() {
        twoRuns();
        List<UsageTotal> cut = store().usage().totals(window(UsageGrouping.QUOTA, 15, 30, 60, null));
        UsageTotal.Key q = new UsageTotal.Key("team-a", "q", null, null);
        UsageTotal.Key none = new UsageTotal.Key("team-b", null, null, null);
        assertThat(gpuHours(cut, q, UsageKind.IN_QUOTA)).isEqualTo(2 * 15.0);
        assertThat(gpuHours(cut, q, UsageKind.QUEUED)).isZero();
        assertThat(gpuHours(cut, none, UsageKind.QUEUED)).isEqualTo(4 * 5.0);
        assertThat(gpuHours(cut, none, UsageKind.BORROWED)).isEqualTo(4 * 10.0);
        assertThat(cut).allSatisfy(t -> assertThat(t.lostGpuMillis()).isZero()); // a's attempt ended at 40, after the window
        List<UsageTotal> after = store().usage().totals(window(UsageGrouping.QUOTA, 40, 50, 60, null));
        assertThat(after.stream().filter(t -> t.key().equals(q)).mapToLong(UsageTotal::lostGpuMillis).sum()).isEqualTo(3 * 60_000);
        // Nothing has happened then yet (now is 60): an open segment counts nothing beyond now.
        assertThat(store().usage().totals(window(UsageGrouping.QUOTA, 100, 120, 60, null))).allSatisfy(t -> assertThat(t.millis()).isZero());
    }

    @Test
    default void usageGroupsByUserAndJobAndKeepsToTheWorkspacesAsked() {
        twoRuns();
        List<UsageTotal> byUser = store().usage().totals(window(UsageGrouping.USER, 0, 60, 60, null));
        assertThat(byUser).extracting(t -> t.key().user()).containsOnly("alice", "bob");
        assertThat(byUser).allSatisfy(t -> assertThat(t.key().workspace()).isNull());
        List<UsageTotal> byJob = store().usage().totals(window(UsageGrouping.JOB, 0, 60, 60, Set.of("team-a")));
        assertThat(byJob).extracting(UsageTotal::key).containsOnly(new UsageTotal.Key("team-a", null, null, "train"));
        assertThat(store().usage().totals(window(UsageGrouping.JOB, 0, 60, 60, Set.of()))).isEmpty();
    }

    @Test
    default void aQuotasLendingIsReplacedByEachNewAmountAndEndsAtZero() {
        QuotaId q = new QuotaId("team-a", "q");
        store().commit(tx -> tx.recordUsage(List.of(new UsageChange.Lent(q, 4, 4000, at(0)))));
        store().commit(tx -> tx.recordUsage(List.of(new UsageChange.Lent(q, 2, 2000, at(10)))));
        assertThat(store().usage().lending()).isEqualTo(Map.of(q, new Resources(2000, 0, 2, null)));
        store().commit(tx -> tx.recordUsage(List.of(new UsageChange.Lent(q, 0, 0, at(20)))));
        assertThat(store().usage().lending()).isEmpty();
        List<UsageTotal> byQuota = store().usage().totals(window(UsageGrouping.QUOTA, 0, 60, 60, null));
        assertThat(gpuHours(byQuota, new UsageTotal.Key("team-a", "q", null, null), UsageKind.LENT)).isEqualTo(4 * 10.0 + 2 * 10.0);
        assertThat(store().usage().totals(window(UsageGrouping.USER, 0, 60, 60, null))).isEmpty(); // lending is a quota's, not a user's
    }

    @Test
    default void aSegmentAcrossDaysIsCountedExactlyInAnyWindowOfWholeHours() {
        store().commit(tx -> tx.recordUsage(List.of(open("long", UsageKind.IN_QUOTA, "team-a", "q", "alice", "train", 3, 5))));
        store().commit(tx -> tx.recordUsage(List.of(close("long", 60, 1))));
        store().commit(tx -> tx.recordUsage(List.of(open("now", UsageKind.BORROWED, "team-a", "q", "alice", "train", 1, 50))));
        UsageTotal.Key a = new UsageTotal.Key("team-a", null, null, null);
        record Window(long from, long until, double inQuota, double borrowed, long lost) {
        }
        // now: hour 70; the open segment counts from 50 until then.
        for (Window w : List.of(new Window(0, 24, 3 * 19, 0, 0), new Window(10, 58, 3 * 48, 8, 0), new Window(24, 48, 3 * 24, 0, 0),
                new Window(59, 61, 3, 2, 60_000), new Window(0, 96, 3 * 55, 20, 60_000), new Window(61, 62, 0, 1, 0), new Window(72, 96, 0, 0, 0))) {
            List<UsageTotal> totals = store().usage().totals(window(UsageGrouping.WORKSPACE, w.from(), w.until(), 70, null));
            assertThat(gpuHours(totals, a, UsageKind.IN_QUOTA)).as("in quota, %s", w).isEqualTo(w.inQuota());
            assertThat(gpuHours(totals, a, UsageKind.BORROWED)).as("borrowed, %s", w).isEqualTo(w.borrowed());
            assertThat(totals.stream().mapToLong(UsageTotal::lostGpuMillis).sum()).as("lost, %s", w).isEqualTo(w.lost());
        }
    }

    private static UsageChange.Measured measured(String run, UsageKind kind, String workspace, String quota, String user, long cpuSeconds,
                                                 Instant at) {
        return new UsageChange.Measured(new RunId(run), kind, workspace, quota, user, "train",
                io.slipstream.api.run.InstanceUsage.of(1L << 30, cpuSeconds < 0 ? -1 : cpuSeconds * 1_000_000_000L), at);
    }

    @Test
    default void anInstancesMeasuredCpuTimeCountsInTheHourItEndedAndHoldsNoTime() {
        twoRuns();
        store().commit(tx -> tx.recordUsage(List.of(measured("a", UsageKind.IN_QUOTA, "team-a", "q", "alice", 90, at(20)),
                measured("a", UsageKind.IN_QUOTA, "team-a", "q", "alice", 30, at(39).plus(Duration.ofMinutes(30))),
                measured("a", UsageKind.IN_QUOTA, "team-a", "q", "alice", -1, at(39)))));
        store().commit(tx -> tx.recordUsage(List.of(measured("b", UsageKind.BORROWED, "team-b", null, "bob", 7, at(30)))));
        UsageTotal.Key q = new UsageTotal.Key("team-a", "q", null, null);
        UsageTotal.Key none = new UsageTotal.Key("team-b", null, null, null);
        List<UsageTotal> all = store().usage().totals(window(UsageGrouping.QUOTA, 0, 120, 60, null));
        UsageTotal inQuota = all.stream().filter(t -> t.key().equals(q) && t.kind() == UsageKind.IN_QUOTA).findFirst().orElseThrow();
        assertThat(inQuota.usedCpuMillis()).isEqualTo(120_000);
        assertThat(inQuota.millis()).as("a measurement holds no time").isEqualTo(30 * 3_600_000L);
        assertThat(gpuHours(all, q, UsageKind.IN_QUOTA)).isEqualTo(2 * 30.0);
        assertThat(all.stream().filter(t -> t.key().equals(none) && t.kind() == UsageKind.BORROWED).mapToLong(UsageTotal::usedCpuMillis).sum())
                .isEqualTo(7_000);
        assertThat(all.stream().filter(t -> t.kind() == UsageKind.QUEUED).mapToLong(UsageTotal::usedCpuMillis).sum()).isZero();
        record Window(long from, long until, long used) {
        }
        for (Window w : List.of(new Window(0, 20, 0), new Window(20, 21, 90_000), new Window(21, 39, 0), new Window(39, 40, 30_000),
                new Window(10, 40, 120_000), new Window(0, 96, 120_000))) {
            List<UsageTotal> totals = store().usage().totals(window(UsageGrouping.QUOTA, w.from(), w.until(), 60, Set.of("team-a")));
            assertThat(totals.stream().mapToLong(UsageTotal::usedCpuMillis).sum()).as("used, %s", w).isEqualTo(w.used());
        }
        List<UsageTotal> byUser = store().usage().totals(window(UsageGrouping.USER, 0, 60, 60, null));
        assertThat(byUser.stream().filter(t -> "alice".equals(t.key().user())).mapToLong(UsageTotal::usedCpuMillis).sum()).isEqualTo(120_000);
        assertThat(byUser.stream().filter(t -> "bob".equals(t.key().user())).mapToLong(UsageTotal::usedCpuMillis).sum()).isEqualTo(7_000);
    }

    @Test
    default void aWindowIsWholeHours() {
        assertThatThrownBy(() -> new UsageQuery(null, UsageGrouping.USER, T.plusSeconds(60), at(2), at(3))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    default void usageWrittenInATransactionThatFailsIsNotKept() {
        assertThatThrownBy(() -> store().write(tx -> {
            tx.recordUsage(List.of(open("a", UsageKind.QUEUED, "team-a", "q", "alice", "train", 2, 0)));
            throw new IllegalStateException("rolled back");
        })).isInstanceOf(IllegalStateException.class);
        assertThat(store().usage().totals(window(UsageGrouping.WORKSPACE, 0, 60, 60, null))).isEmpty();
    }

    @Test
    default void anOpenedSegmentEndsTheOneLeftOpenSoARunNeverCountsTwice() {
        store().commit(tx -> tx.recordUsage(List.of(open("a", UsageKind.QUEUED, "team-a", "q", "alice", "train", 2, 0))));
        store().commit(tx -> tx.recordUsage(List.of(open("a", UsageKind.IN_QUOTA, "team-a", "q", "alice", "train", 2, 10))));
        store().commit(tx -> tx.recordUsage(List.of(close("a", 5, 0)))); // a close from before the last open never moves an end back past its start
        List<UsageTotal> totals = store().usage().totals(window(UsageGrouping.WORKSPACE, 0, 60, 60, null));
        UsageTotal.Key a = new UsageTotal.Key("team-a", null, null, null);
        assertThat(gpuHours(totals, a, UsageKind.QUEUED)).isEqualTo(2 * 10.0);
        assertThat(gpuHours(totals, a, UsageKind.IN_QUOTA)).isEqualTo(0.0);
    }

    /** Hours after T. Run c (team-a, q): queued 2-3, given up on (cancelled). Run d: in quota 0-30, requeued 30-32, in quota again until 33. */
    private void waitsAndAGiveUp() {
        twoRuns();
        store().commit(tx -> tx.recordUsage(List.of(open("c", UsageKind.QUEUED, "team-a", "q", "carol", "train", 1, 2))));
        store().commit(tx -> tx.recordUsage(List.of(close("c", 3, 0))));
        store().commit(tx -> tx.recordUsage(List.of(open("d", UsageKind.IN_QUOTA, "team-a", "q", "dan", "train", 1, 0))));
        store().commit(tx -> tx.recordUsage(List.of(close("d", 30, 0), open("d", UsageKind.QUEUED, "team-a", "q", "dan", "train", 1, 30))));
        store().commit(tx -> tx.recordUsage(List.of(close("d", 32, 0), open("d", UsageKind.IN_QUOTA, "team-a", "q", "dan", "train", 1, 32))));
        store().commit(tx -> tx.recordUsage(List.of(close("d", 33, 0))));
    }

    private static UsageTotal.Waits waits(List<UsageTotal> totals, UsageTotal.Key key) {
        return totals.stream().filter(t -> t.key().equals(key)).map(UsageTotal::waits).reduce(UsageTotal.Waits.NONE, UsageTotal.Waits::plus);
    }

    @Test
    default void aWaitIsAQueuedStretchThatEndedWithItsRunStartingCountedWholeWhereItEnded() {
        waitsAndAGiveUp();
        UsageTotal.Key qa = new UsageTotal.Key("team-a", "q", null, null);
        UsageTotal.Key none = new UsageTotal.Key("team-b", null, null, null);
        List<UsageTotal> all = store().usage().totals(window(UsageGrouping.QUOTA, 0, 48, 60, null));
        // a waited 10 h (0-10), d 2 h (30-32); c's hour in the queue ended with a cancel, not a start: queued time, no wait.
        assertThat(waits(all, qa)).isEqualTo(new UsageTotal.Waits(2, 12 * 3_600_000L, 10 * 3_600_000L));
        assertThat(waits(all, none)).isEqualTo(new UsageTotal.Waits(1, 15 * 3_600_000L, 15 * 3_600_000L));
        // A wait counts where it ended, whole: the window 9-11 holds a's 10 hours; 0-9 holds none of it.
        assertThat(waits(store().usage().totals(window(UsageGrouping.QUOTA, 9, 11, 60, null)), qa)).isEqualTo(UsageTotal.Waits.of(10 * 3_600_000L));
        assertThat(waits(store().usage().totals(window(UsageGrouping.QUOTA, 0, 9, 60, null)), qa)).isEqualTo(UsageTotal.Waits.NONE);
        assertThat(all.stream().filter(t -> t.kind() != UsageKind.QUEUED).map(UsageTotal::waits)).containsOnly(UsageTotal.Waits.NONE);
    }

    /**
     * Where a store could tell a start two ways, every store tells it one way ({@link UsageStarts}): from the changes
     * that end the queued stretch, as they are applied.
     */
    @Test
    default void aStartIsToldFromTheChangesThatEndTheQueuedStretchTheSameByEveryStore() {
        // e: queued 0-1, closed in one call and started in quota at 1 in the next: the stretch was closed and counted before.
        store().commit(tx -> tx.recordUsage(List.of(open("e", UsageKind.QUEUED, "team-a", "q", "erin", "train", 1, 0))));
        store().commit(tx -> tx.recordUsage(List.of(close("e", 1, 0))));
        store().commit(tx -> tx.recordUsage(List.of(open("e", UsageKind.IN_QUOTA, "team-a", "q", "erin", "train", 1, 1))));
        // f: queued 0-2, then started holding nothing (no GPU, no CPU) and ended at once: a start all the same.
        store().commit(tx -> tx.recordUsage(List.of(open("f", UsageKind.QUEUED, "team-a", "q", "fay", "train", 0, 0))));
        store().commit(tx -> tx.recordUsage(List.of(close("f", 2, 0), open("f", UsageKind.IN_QUOTA, "team-a", "q", "fay", "train", 0, 2))));
        store().commit(tx -> tx.recordUsage(List.of(close("f", 2, 0))));
        // g: queued 0-3, then borrowed from 3 with no close before (the opening ends the queued stretch itself): a start.
        store().commit(tx -> tx.recordUsage(List.of(open("g", UsageKind.QUEUED, "team-a", "q", "gus", "train", 1, 0))));
        store().commit(tx -> tx.recordUsage(List.of(open("g", UsageKind.BORROWED, "team-a", "q", "gus", "train", 1, 3))));
        // h: queued 0-4, closed and started at another instant (not where the stretch ended): no start of that stretch.
        store().commit(tx -> tx.recordUsage(List.of(open("h", UsageKind.QUEUED, "team-a", "q", "hal", "train", 1, 0))));
        store().commit(tx -> tx.recordUsage(List.of(close("h", 4, 0), open("h", UsageKind.IN_QUOTA, "team-a", "q", "hal", "train", 1, 5))));
        List<UsageTotal> totals = store().usage().totals(window(UsageGrouping.QUOTA, 0, 24, 24, null));
        assertThat(waits(totals, new UsageTotal.Key("team-a", "q", null, null))).isEqualTo(new UsageTotal.Waits(2, 5 * 3_600_000L, 3 * 3_600_000L));
    }

    @Test
    default void aSeriesHoldsEachStepsTotalsWhichAddUpToTheWindowsTotals() {
        waitsAndAGiveUp();
        store().commit(tx -> tx.recordUsage(List.of(new UsageChange.Lent(new QuotaId("team-a", "q"), 2, 2000, at(12)))));
        for (UsageStep step : UsageStep.values()) {
            long hours = step == UsageStep.DAY ? 72 : 48;
            UsageQuery query = window(UsageGrouping.QUOTA, 0, hours, 50, null); // now 50: b's borrowed and the lending still open
            List<UsagePoint> series = store().usage().series(query, step);
            assertThat(series).allSatisfy(p -> assertThat(p.bucketMs() % step.millis()).isZero())
                    .allSatisfy(p -> assertThat(p.bucketMs()).isBetween(query.since().toEpochMilli(), query.until().toEpochMilli() - 1));
            List<UsageTotal> summed = UsageSums.merged(series.stream().map(UsagePoint::total).toList());
            assertThat(summed).as("by %s", step).isEqualTo(store().usage().totals(query));
        }
        List<UsagePoint> hourly = store().usage().series(window(UsageGrouping.QUOTA, 0, 24, 50, Set.of("team-a")), UsageStep.HOUR);
        UsageTotal.Key qa = new UsageTotal.Key("team-a", "q", null, null);
        // Hour 9 (9:00-10:00): a queued with 2 GPUs, d in quota with 1, nothing else of team-a; a's wait ends at 10:00, in hour 10.
        assertThat(hourly.stream().filter(p -> p.bucketMs() == at(9).toEpochMilli()).map(UsagePoint::total))
                .extracting(UsageTotal::kind, t -> t.gpuMillis() / 3_600_000, UsageTotal::waits)
                .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple(UsageKind.QUEUED, 2.0, UsageTotal.Waits.NONE),
                        org.assertj.core.groups.Tuple.tuple(UsageKind.IN_QUOTA, 1.0, UsageTotal.Waits.NONE));
        assertThat(hourly.stream().filter(p -> p.bucketMs() == at(10).toEpochMilli() && p.total().kind() == UsageKind.QUEUED).map(p -> p.total().waits()))
                .containsExactly(UsageTotal.Waits.of(10 * 3_600_000L));
        assertThat(hourly).extracting(p -> p.total().key()).containsOnly(qa);
        assertThatThrownBy(() -> store().usage().series(window(UsageGrouping.QUOTA, 1, 25, 50, null), UsageStep.DAY))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
