package io.slipstream.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.model.usage.UsageKind;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link UsageSums#series} splits each segment into its steps once; what it must say of each step is what
 * {@link UsageSums#of} says of that step alone. Checked on seeded random segments: open and closed, before, across and
 * after the window, ending on step boundaries, of no length, with work lost and waits.
 */
class UsageSumsTest {
    private static final long HOUR = UsageBuckets.HOUR;
    private static final long SINCE = Instant.parse("2026-03-02T00:00:00Z").toEpochMilli();

    @Test
    void eachStepOfASeriesIsWhatTheTotalsOfThatStepAloneSay() {
        Random random = new Random(20);
        for (int round = 0; round < 200; round++) {
            List<UsageSegment> segments = segments(random);
            UsageStep step = random.nextBoolean() ? UsageStep.HOUR : UsageStep.DAY;
            long steps = 1 + random.nextInt(step == UsageStep.HOUR ? 30 : 4);
            long until = SINCE + steps * step.millis();
            long now = SINCE + (long) (random.nextDouble() * (until - SINCE + 4 * HOUR)) - 2 * HOUR; // before, in or after the window
            UsageGrouping by = UsageGrouping.values()[random.nextInt(UsageGrouping.values().length)];
            UsageQuery query = new UsageQuery(random.nextInt(4) == 0 ? java.util.Set.of("team-a") : null, by, Instant.ofEpochMilli(SINCE),
                    Instant.ofEpochMilli(until), Instant.ofEpochMilli(now));
            List<UsagePoint> expected = new ArrayList<>();
            for (long bucket = SINCE; bucket < until; bucket += step.millis()) {
                long at = bucket;
                UsageQuery one = new UsageQuery(query.workspaces(), by, Instant.ofEpochMilli(bucket), Instant.ofEpochMilli(bucket + step.millis()),
                        query.now());
                UsageSums.of(segments, one).forEach(total -> expected.add(new UsagePoint(at, total)));
            }
            assertThat(UsageSums.series(segments, query, step)).as("round %d, by %s, %s", round, by, step).isEqualTo(expected);
        }
    }

    /** Runs of two workspaces, each queued, then maybe started, then maybe ended, on times of whole and odd minutes. */
    private static List<UsageSegment> segments(Random random) {
        List<UsageSegment> segments = new ArrayList<>();
        for (int run = 0; run < 12; run++) {
            String workspace = run % 3 == 0 ? "team-b" : "team-a";
            String quota = run % 4 == 0 ? null : "q" + run % 2;
            long queued = SINCE + (random.nextInt(60) - 20) * HOUR / (random.nextBoolean() ? 1 : 7);
            long started = queued + random.nextInt(5) * HOUR / (random.nextBoolean() ? 1 : 3);
            boolean starts = random.nextInt(4) != 0;
            segments.add(segment("r" + run, UsageKind.QUEUED, workspace, quota, queued, starts || random.nextBoolean() ? started : null, 0));
            if (starts) {
                UsageKind held = random.nextBoolean() ? UsageKind.IN_QUOTA : UsageKind.BORROWED;
                Long ended = random.nextBoolean() ? null : started + random.nextInt(40) * HOUR / (random.nextBoolean() ? 1 : 5);
                segments.add(segment("r" + run, held, workspace, quota, started, ended, ended == null ? 0 : random.nextInt(3) * 60_000L));
            }
        }
        segments.add(new UsageSegment(null, UsageKind.LENT, "team-a", "q1", null, null, 2, 2000, SINCE + 3 * HOUR, null, 0, 0));
        return segments;
    }

    private static UsageSegment segment(String run, UsageKind kind, String workspace, String quota, long start, Long end, long lost) {
        return new UsageSegment(run, kind, workspace, quota, "user-" + run.length(), "train", 1 + Math.floorMod(run.hashCode(), 4), 1500, start, end, lost, lost * 1000,
                end == null ? 0 : 7_000);
    }
}
