package io.slipstream.server.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.wire.UsageSeriesView;
import io.slipstream.model.usage.UsageKind;
import io.slipstream.store.UsageBuckets;
import io.slipstream.store.UsagePoint;
import io.slipstream.store.UsageTotal;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A step's averages are over its time until now: the step that holds now is averaged over its part so far, not over
 * hours still to come (which would make the right-most bar dip for a load that never changed), and steps wholly after
 * now have no point.
 */
class UsageSeriesServiceTest {
    private static final long HOUR = UsageBuckets.HOUR;
    private static final Instant SINCE = Instant.parse("2026-03-02T00:00:00Z");
    private static final UsageTotal.Key QUOTA = new UsageTotal.Key("team-a", "q", null, null);

    /** 4 GPUs held in quota from the window's start until now, as a store adds them up: whole hours, and the part of now's. */
    private static List<UsagePoint> heldUntil(long nowMs) {
        List<UsagePoint> points = new java.util.ArrayList<>();
        for (long bucket = SINCE.toEpochMilli(); bucket < nowMs; bucket += HOUR) {
            long held = Math.min(HOUR, nowMs - bucket);
            points.add(new UsagePoint(bucket, new UsageTotal(QUOTA, UsageKind.IN_QUOTA, 4.0 * held, 0, held, 0, 0)));
        }
        return points;
    }

    @Test
    void theStepThatHoldsNowIsAveragedOverItsPartSoFarAndLaterStepsHaveNoPoint() {
        Instant now = SINCE.plusMillis(5 * HOUR + 15 * 60_000); // 5:15, a quarter into the sixth hour
        UsageSeriesView view = UsageSeriesService.view(UsageWindow.DAY, UsageSeriesService.Of.QUOTA, SINCE, now, heldUntil(now.toEpochMilli()),
                UsageTotal::key, quota -> "tree:team-a/q", null);
        assertThat(view.buckets()).hasSize(24);
        List<UsageSeriesView.Point> points = view.series().get(0).points();
        assertThat(points).as("the six steps until now").hasSize(6);
        assertThat(points).extracting(UsageSeriesView.Point::inQuota).as("no dip on the right").containsOnly(4.0);
        assertThat(points).extracting(UsageSeriesView.Point::hours).containsExactly(1.0, 1.0, 1.0, 1.0, 1.0, 0.25);
        double gpuHours = points.stream().mapToDouble(p -> p.inQuota() * p.hours()).sum();
        assertThat(gpuHours).isEqualTo(view.series().get(0).totals().gpuHours().inQuota()).isEqualTo(21.0);
    }

    @Test
    void aWindowWhollyPastHasAPointForEveryStep() {
        Instant now = SINCE.plusMillis(30 * HOUR);
        UsageSeriesView view = UsageSeriesService.view(UsageWindow.WEEK, UsageSeriesService.Of.CLUSTER, SINCE.minusMillis(7 * 24 * HOUR), now,
                List.of(), total -> new UsageTotal.Key(null, null, null, null), quota -> null, 8);
        assertThat(view.series()).singleElement().satisfies(cluster -> {
            assertThat(cluster.points()).hasSize(28).extracting(UsageSeriesView.Point::hours).containsOnly(6.0);
            assertThat(cluster.points()).extracting(UsageSeriesView.Point::inQuota).containsOnly(0.0);
        });
    }
}
