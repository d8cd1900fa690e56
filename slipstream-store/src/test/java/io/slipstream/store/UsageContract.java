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

    private static Instant at(long minutes) {
        return T.plus(Duration.ofMinutes(minutes));
    }

    private static UsageChange.Opened open(String run, UsageKind kind, String workspace, String quota, String user, String job, long gpu, long minute) {
        return new UsageChange.Opened(new RunId(run), kind, workspace, quota, user, job, gpu, gpu * 1000, at(minute));
    }

    private static UsageChange.Closed close(String run, long minute, long lostGpuMinutes) {
        return new UsageChange.Closed(new RunId(run), at(minute), lostGpuMinutes * 60_000, lostGpuMinutes * 60_000 * 1000);
    }

    private static UsageQuery window(UsageGrouping by, long fromMinute, long untilMinute, long nowMinute, Set<String> workspaces) {
        return new UsageQuery(workspaces, by, at(fromMinute), at(untilMinute), at(nowMinute));
    }

    private static double gpuMinutes(List<UsageTotal> totals, UsageTotal.Key key, UsageKind kind) {
        return totals.stream().filter(t -> t.key().equals(key) && t.kind() == kind).mapToDouble(t -> t.gpuMillis() / 60_000).sum();
    }

    /** Run a (alice, quota q): queued 0-10, in quota 10-40, borrowed... run b (bob, no quota): queued 5-20, borrowed 20-open. */
    private void twoRuns() {
        store().recordUsage(List.of(open("a", UsageKind.QUEUED, "team-a", "q", "alice", "train", 2, 0)));
        store().recordUsage(List.of(open("b", UsageKind.QUEUED, "team-b", null, "bob", "eval", 4, 5)));
        store().recordUsage(List.of(close("a", 10, 0), open("a", UsageKind.IN_QUOTA, "team-a", "q", "alice", "train", 2, 10)));
        store().recordUsage(List.of(close("b", 20, 0), open("b", UsageKind.BORROWED, "team-b", null, "bob", "eval", 4, 20)));
        store().recordUsage(List.of(close("a", 40, 3)));
    }

    @Test
    default void usageAddsUpEachSegmentsPartInsideTheWindowAndAnOpenOneUntilNow() {
        twoRuns();
        List<UsageTotal> all = store().usage(window(UsageGrouping.WORKSPACE, 0, 120, 60, null));
        UsageTotal.Key a = new UsageTotal.Key("team-a", null, null, null);
        UsageTotal.Key b = new UsageTotal.Key("team-b", null, null, null);
        assertThat(gpuMinutes(all, a, UsageKind.QUEUED)).isEqualTo(2 * 10.0);
        assertThat(gpuMinutes(all, a, UsageKind.IN_QUOTA)).isEqualTo(2 * 30.0);
        assertThat(gpuMinutes(all, b, UsageKind.QUEUED)).isEqualTo(4 * 15.0);
        assertThat(gpuMinutes(all, b, UsageKind.BORROWED)).isEqualTo(4 * 40.0); // open: 20 until now (60)
        UsageTotal inQuota = all.stream().filter(t -> t.key().equals(a) && t.kind() == UsageKind.IN_QUOTA).findFirst().orElseThrow();
        assertThat(inQuota.lostGpuMillis()).isEqualTo(3 * 60_000);
        assertThat(inQuota.cpuMilliMillis()).isEqualTo(2000.0 * 30 * 60_000);
        assertThat(inQuota.millis()).isEqualTo(30 * 60_000);
        assertThat(inQuota.segments()).isEqualTo(1);
        assertThat(all).extracting(UsageTotal::key).containsExactly(a, a, b, b); // by key, then kind
        assertThat(all.get(0).kind()).isEqualTo(UsageKind.QUEUED);
    }

    @Test
    default void aWindowClipsTheSegmentsItCutsAndCountsWorkLostWhereItsSegmentEnded() {
        twoRuns();
        List<UsageTotal> cut = store().usage(window(UsageGrouping.QUOTA, 15, 30, 60, null));
        UsageTotal.Key q = new UsageTotal.Key("team-a", "q", null, null);
        UsageTotal.Key none = new UsageTotal.Key("team-b", null, null, null);
        assertThat(gpuMinutes(cut, q, UsageKind.IN_QUOTA)).isEqualTo(2 * 15.0);
        assertThat(gpuMinutes(cut, q, UsageKind.QUEUED)).isZero();
        assertThat(gpuMinutes(cut, none, UsageKind.QUEUED)).isEqualTo(4 * 5.0);
        assertThat(gpuMinutes(cut, none, UsageKind.BORROWED)).isEqualTo(4 * 10.0);
        assertThat(cut).allSatisfy(t -> assertThat(t.lostGpuMillis()).isZero()); // a's attempt ended at 40, after the window
        List<UsageTotal> after = store().usage(window(UsageGrouping.QUOTA, 40, 50, 60, null));
        assertThat(after.stream().filter(t -> t.key().equals(q)).mapToLong(UsageTotal::lostGpuMillis).sum()).isEqualTo(3 * 60_000);
        // Nothing has happened then yet (now is 60): an open segment counts nothing beyond now.
        assertThat(store().usage(window(UsageGrouping.QUOTA, 100, 120, 60, null))).allSatisfy(t -> assertThat(t.millis()).isZero());
    }

    @Test
    default void usageGroupsByUserAndJobAndKeepsToTheWorkspacesAsked() {
        twoRuns();
        List<UsageTotal> byUser = store().usage(window(UsageGrouping.USER, 0, 60, 60, null));
        assertThat(byUser).extracting(t -> t.key().user()).containsOnly("alice", "bob");
        assertThat(byUser).allSatisfy(t -> assertThat(t.key().workspace()).isNull());
        List<UsageTotal> byJob = store().usage(window(UsageGrouping.JOB, 0, 60, 60, Set.of("team-a")));
        assertThat(byJob).extracting(UsageTotal::key).containsOnly(new UsageTotal.Key("team-a", null, null, "train"));
        assertThat(store().usage(window(UsageGrouping.JOB, 0, 60, 60, Set.of()))).isEmpty();
    }

    @Test
    default void aQuotasLendingIsReplacedByEachNewAmountAndEndsAtZero() {
        QuotaId q = new QuotaId("team-a", "q");
        store().recordUsage(List.of(new UsageChange.Lent(q, 4, 4000, at(0))));
        store().recordUsage(List.of(new UsageChange.Lent(q, 2, 2000, at(10))));
        assertThat(store().lending()).isEqualTo(Map.of(q, new Resources(2000, 0, 2, null)));
        store().recordUsage(List.of(new UsageChange.Lent(q, 0, 0, at(20))));
        assertThat(store().lending()).isEmpty();
        List<UsageTotal> byQuota = store().usage(window(UsageGrouping.QUOTA, 0, 60, 60, null));
        assertThat(gpuMinutes(byQuota, new UsageTotal.Key("team-a", "q", null, null), UsageKind.LENT)).isEqualTo(4 * 10.0 + 2 * 10.0);
        assertThat(store().usage(window(UsageGrouping.USER, 0, 60, 60, null))).isEmpty(); // lending is a quota's, not a user's
    }

    @Test
    default void usageWrittenInATransactionThatFailsIsNotKept() {
        assertThatThrownBy(() -> store().inTransaction(tx -> {
            tx.recordUsage(List.of(open("a", UsageKind.QUEUED, "team-a", "q", "alice", "train", 2, 0)));
            throw new IllegalStateException("rolled back");
        })).isInstanceOf(IllegalStateException.class);
        assertThat(store().usage(window(UsageGrouping.WORKSPACE, 0, 60, 60, null))).isEmpty();
    }

    @Test
    default void anOpenedSegmentEndsTheOneLeftOpenSoARunNeverCountsTwice() {
        store().recordUsage(List.of(open("a", UsageKind.QUEUED, "team-a", "q", "alice", "train", 2, 0)));
        store().recordUsage(List.of(open("a", UsageKind.IN_QUOTA, "team-a", "q", "alice", "train", 2, 10)));
        store().recordUsage(List.of(close("a", 5, 0))); // a close from before the last open never moves an end back past its start
        List<UsageTotal> totals = store().usage(window(UsageGrouping.WORKSPACE, 0, 60, 60, null));
        UsageTotal.Key a = new UsageTotal.Key("team-a", null, null, null);
        assertThat(gpuMinutes(totals, a, UsageKind.QUEUED)).isEqualTo(2 * 10.0);
        assertThat(gpuMinutes(totals, a, UsageKind.IN_QUOTA)).isEqualTo(0.0);
    }
}
