package io.slipstream.store;

import io.slipstream.model.usage.UsageKind;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A usage report's arithmetic over segments held as objects (what the SQL of a database store does in its query):
 * each segment's part inside {@code [since, until)}, an open one running until {@code now}, added up by group and
 * kind; work lost and CPU time measured count where their segment ended, and so does a wait: a queued segment that
 * ended where a segment of its run that holds resources began (the run started).
 */
public final class UsageSums {
    private static final Comparator<String> NULLS_FIRST = Comparator.nullsFirst(Comparator.naturalOrder());
    private static final Comparator<UsageTotal> ORDER = Comparator
            .comparing((UsageTotal t) -> t.key().workspace(), NULLS_FIRST)
            .thenComparing(t -> t.key().quota(), NULLS_FIRST)
            .thenComparing(t -> t.key().user(), NULLS_FIRST)
            .thenComparing(t -> t.key().job(), NULLS_FIRST)
            .thenComparing(UsageTotal::kind);

    private UsageSums() {
    }

    public static List<UsageTotal> of(Iterable<UsageSegment> segments, UsageQuery query) {
        long since = query.since().toEpochMilli();
        long until = query.until().toEpochMilli();
        long now = query.now().toEpochMilli();
        Set<List<Object>> starts = starts(segments);
        Map<Object, UsageTotal> totals = new LinkedHashMap<>();
        for (UsageSegment segment : segments) {
            boolean overlaps = segment.startMs() < until && (segment.endMs() == null || segment.endMs() >= since);
            boolean visible = query.workspaces() == null || query.workspaces().contains(segment.workspace());
            boolean counted = query.by().countsLending() || segment.kind() != UsageKind.LENT;
            if (!overlaps || !visible || !counted) {
                continue;
            }
            long inside = Math.max(0, Math.min(segment.endMs() == null ? now : segment.endMs(), until) - Math.max(segment.startMs(), since));
            boolean endedInside = segment.endMs() != null && segment.endMs() >= since && segment.endMs() < until;
            UsageTotal.Key key = keyOf(segment, query.by());
            boolean waitEnded = endedInside && segment.kind() == UsageKind.QUEUED && starts.contains(List.of(segment.run(), segment.endMs()));
            UsageTotal add = new UsageTotal(key, segment.kind(), (double) segment.gpu() * inside, (double) segment.cpuMillis() * inside, inside,
                    endedInside ? segment.lostGpuMillis() : 0, endedInside ? segment.lostCpuMillis() : 0, endedInside ? segment.usedCpuMillis() : 0,
                    waitEnded ? UsageTotal.Waits.of(segment.endMs() - segment.startMs()) : UsageTotal.Waits.NONE);
            totals.merge(List.of(key, segment.kind()), add, UsageSums::plus);
        }
        return ordered(List.copyOf(totals.values()));
    }

    /** Where a run began to hold resources: (run, start) of its segments in quota or borrowed, measurements left out. */
    private static Set<List<Object>> starts(Iterable<UsageSegment> segments) {
        Set<List<Object>> starts = new HashSet<>();
        for (UsageSegment segment : segments) {
            boolean held = segment.kind() == UsageKind.IN_QUOTA || segment.kind() == UsageKind.BORROWED;
            boolean measurement = segment.endMs() != null && segment.endMs() == segment.startMs() && segment.gpu() == 0 && segment.cpuMillis() == 0;
            if (held && !measurement && segment.run() != null) {
                starts.add(List.of(segment.run(), segment.startMs()));
            }
        }
        return starts;
    }

    /** {@link UsageReads#series} of segments: each step of the window added up as a window of its own. */
    public static List<UsagePoint> series(List<UsageSegment> segments, UsageQuery query, UsageStep step) {
        if (!step.divides(query)) {
            throw new IllegalArgumentException("a series by " + step + " needs a window of whole steps: " + query.since() + " to " + query.until());
        }
        List<UsagePoint> points = new ArrayList<>();
        for (long bucket = query.since().toEpochMilli(); bucket < query.until().toEpochMilli(); bucket += step.millis()) {
            UsageQuery one = new UsageQuery(query.workspaces(), query.by(), Instant.ofEpochMilli(bucket), Instant.ofEpochMilli(bucket + step.millis()),
                    query.now());
            long at = bucket;
            of(segments, one).forEach(total -> points.add(new UsagePoint(at, total)));
        }
        return points;
    }

    /** {@code totals} with those of the same key and kind added up, in a report's order. */
    public static List<UsageTotal> merged(List<UsageTotal> totals) {
        Map<Object, UsageTotal> merged = new LinkedHashMap<>();
        totals.forEach(t -> merged.merge(List.of(t.key(), t.kind()), t, UsageSums::plus));
        return ordered(List.copyOf(merged.values()));
    }

    /** Totals in a report's order: by key (a missing part first), then kind. */
    public static List<UsageTotal> ordered(List<UsageTotal> totals) {
        return totals.stream().sorted(ORDER).toList();
    }

    private static UsageTotal.Key keyOf(UsageSegment segment, UsageGrouping by) {
        return switch (by) {
            case WORKSPACE -> new UsageTotal.Key(segment.workspace(), null, null, null);
            case QUOTA -> new UsageTotal.Key(segment.workspace(), segment.quota(), null, null);
            case USER -> new UsageTotal.Key(null, null, segment.user(), null);
            case JOB -> new UsageTotal.Key(segment.workspace(), null, null, segment.job());
        };
    }

    public static UsageTotal plus(UsageTotal a, UsageTotal b) {
        return new UsageTotal(a.key(), a.kind(), a.gpuMillis() + b.gpuMillis(), a.cpuMilliMillis() + b.cpuMilliMillis(), a.millis() + b.millis(),
                a.lostGpuMillis() + b.lostGpuMillis(), a.lostCpuMillis() + b.lostCpuMillis(), a.usedCpuMillis() + b.usedCpuMillis(),
                a.waits().plus(b.waits()));
    }
}
