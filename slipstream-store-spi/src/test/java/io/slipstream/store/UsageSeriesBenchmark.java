package io.slipstream.store;

import io.slipstream.model.usage.UsageKind;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What {@link UsageSums#series} costs a database store's series of a week by hour: 10,000 open segments (runs queued,
 * in quota and borrowing, on 100 quotas of 10 workspaces, open since before the window) split into 168 buckets. Not
 * part of the test run (its name does not end in Test); run it with:
 *
 * <pre>mvn -B -pl slipstream-store-spi -am test -Dtest=UsageSeriesBenchmark -Dsurefire.failIfNoSpecifiedTests=false</pre>
 *
 * Prints the median and the slowest of repeated calls (milliseconds). Figures, never assertions.
 */
class UsageSeriesBenchmark {
    private static final int SEGMENTS = Integer.getInteger("bench.segments", 10_000);
    private static final int REPEATS = 21;
    private static final Instant SINCE = Instant.parse("2026-03-02T00:00:00Z");

    @Test
    void aWeekByHourOf10000OpenSegments() {
        long hour = UsageBuckets.HOUR;
        List<UsageSegment> segments = new ArrayList<>();
        UsageKind[] kinds = {UsageKind.QUEUED, UsageKind.IN_QUOTA, UsageKind.BORROWED};
        for (int i = 0; i < SEGMENTS; i++) {
            long start = SINCE.toEpochMilli() - hour + (i * 7919L) % (200 * hour); // some before the window, some in it
            segments.add(new UsageSegment("run-" + i, kinds[i % 3], "team-" + (i % 10), "q" + (i % 100), "user-" + (i % 37), "train",
                    1 + i % 8, 4000, start, null, 0, 0));
        }
        UsageQuery week = new UsageQuery(null, UsageGrouping.QUOTA, SINCE, SINCE.plusMillis(168 * hour), SINCE.plusMillis(168 * hour));
        long[] millis = new long[REPEATS];
        int points = 0;
        for (int r = 0; r < REPEATS; r++) {
            long started = System.nanoTime();
            points = UsageSums.series(segments, week, UsageStep.HOUR).size();
            millis[r] = (System.nanoTime() - started) / 1_000_000;
        }
        Arrays.sort(millis);
        System.out.printf(java.util.Locale.ROOT, "UsageSums.series: %,d open segments x 168 hourly buckets -> %,d points: median %d ms, slowest %d ms (of %d calls)%n",
                SEGMENTS, points, millis[REPEATS / 2], millis[REPEATS - 1], REPEATS);
    }
}
