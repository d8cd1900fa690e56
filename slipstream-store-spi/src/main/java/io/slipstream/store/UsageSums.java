package io.slipstream.store;

import io.slipstream.model.usage.UsageKind;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A usage report's arithmetic over segments held as objects (what the SQL of a database store does in its query):
 * each segment's part inside {@code [since, until)}, an open one running until {@code now}, added up by group and
 * kind; work lost and CPU time measured count where their segment ended, and so does a wait: a queued segment that
 * ended with its run starting ({@link UsageSegment#endsWait}, as {@link UsageStarts} tells it when it closes).
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
        Map<Object, UsageTotal> totals = new LinkedHashMap<>();
        for (UsageSegment segment : segments) {
            if (!counts(segment, query)) {
                continue;
            }
            long inside = Math.max(0, Math.min(segment.endMs() == null ? now : segment.endMs(), until) - Math.max(segment.startMs(), since));
            boolean endedInside = segment.endMs() != null && segment.endMs() < until;
            UsageTotal.Key key = keyOf(segment, query.by());
            UsageTotal add = new UsageTotal(key, segment.kind(), (double) segment.gpu() * inside, (double) segment.cpuMillis() * inside, inside,
                    endedInside ? segment.lostGpuMillis() : 0, endedInside ? segment.lostCpuMillis() : 0, endedInside ? segment.usedCpuMillis() : 0,
                    endedInside ? waitOf(segment) : UsageTotal.Waits.NONE);
            totals.merge(List.of(key, segment.kind()), add, UsageSums::plus);
        }
        return ordered(List.copyOf(totals.values()));
    }

    /**
     * Whether a segment is part of a query's answer: of a workspace asked for, of a kind the grouping counts, and in
     * the window (an open one from its start on; a closed one up to and with its end, where its lost work counts).
     */
    private static boolean counts(UsageSegment segment, UsageQuery query) {
        boolean overlaps = segment.startMs() < query.until().toEpochMilli()
                && (segment.endMs() == null || segment.endMs() >= query.since().toEpochMilli());
        boolean visible = query.workspaces() == null || query.workspaces().contains(segment.workspace());
        boolean counted = query.by().countsLending() || segment.kind() != UsageKind.LENT;
        return overlaps && visible && counted;
    }

    /** The wait a closed segment ends, if it is one: counted whole. */
    private static UsageTotal.Waits waitOf(UsageSegment segment) {
        return segment.endsWait() ? UsageTotal.Waits.of(segment.endMs() - segment.startMs()) : UsageTotal.Waits.NONE;
    }

    /**
     * {@link UsageReads#series} of segments: what {@link #of} says of each step alone. Each segment is split into the
     * steps it touches once (the steps it holds whole as a difference of rates, added up in one pass at the end): the
     * cost is the segments and the groups' steps, not every segment once per step.
     */
    public static List<UsagePoint> series(List<UsageSegment> segments, UsageQuery query, UsageStep step) {
        step.requireWholeSteps(query);
        Map<List<Object>, Steps> groups = new LinkedHashMap<>();
        for (UsageSegment segment : segments) {
            if (counts(segment, query)) {
                UsageTotal.Key key = keyOf(segment, query.by());
                groups.computeIfAbsent(List.of(key, segment.kind()), k -> new Steps(key, segment.kind(), query, step)).add(segment);
            }
        }
        // By step, and in a step in a report's order (the groups sorted once, not the points).
        List<UsageTotal[]> byGroup = groups.values().stream().map(Steps::totals)
                .sorted(Comparator.comparing((UsageTotal[] totals) -> Arrays.stream(totals).filter(t -> t != null).findFirst().orElseThrow(), ORDER))
                .toList();
        List<UsagePoint> points = new ArrayList<>();
        long since = query.since().toEpochMilli();
        for (int i = 0; !byGroup.isEmpty() && i < byGroup.get(0).length; i++) {
            for (UsageTotal[] totals : byGroup) {
                if (totals[i] != null) {
                    points.add(new UsagePoint(since + i * step.millis(), totals[i]));
                }
            }
        }
        return points;
    }

    /** One group's and kind's steps of a series, as segments are split into them. */
    private static final class Steps {
        private final UsageTotal.Key key;
        private final UsageKind kind;
        private final long since;
        private final long until;
        private final long now;
        private final long size;
        /** The time of the steps a segment holds in part (its first and last). */
        private final double[] gpu;
        private final double[] cpu;
        private final long[] ms;
        /** The rates of the steps segments hold whole, as differences: a segment adds its rate at its first such step and takes it away after its last. */
        private final long[] gpuRate;
        private final long[] cpuRate;
        private final long[] segmentRate;
        /** How many segments touch each step, as differences: a step a segment touches has a point, if only of its lost work. */
        private final int[] touching;
        private final long[] lostGpu;
        private final long[] lostCpu;
        private final long[] usedCpu;
        private final UsageTotal.Waits[] waits;

        Steps(UsageTotal.Key key, UsageKind kind, UsageQuery query, UsageStep step) {
            this.key = key;
            this.kind = kind;
            this.since = query.since().toEpochMilli();
            this.until = query.until().toEpochMilli();
            this.now = query.now().toEpochMilli();
            this.size = step.millis();
            int count = (int) ((until - since) / size);
            gpu = new double[count];
            cpu = new double[count];
            ms = new long[count];
            gpuRate = new long[count + 1];
            cpuRate = new long[count + 1];
            segmentRate = new long[count + 1];
            touching = new int[count + 1];
            lostGpu = new long[count];
            lostCpu = new long[count];
            usedCpu = new long[count];
            waits = new UsageTotal.Waits[count];
            Arrays.fill(waits, UsageTotal.Waits.NONE);
        }

        private int stepOf(long ms) {
            return (int) ((ms - since) / size);
        }

        /** A segment {@link #counts} for the window: its time in each step, and what it ends in the step it ends in. */
        void add(UsageSegment segment) {
            int first = stepOf(Math.max(segment.startMs(), since));
            int last = segment.endMs() == null ? ms.length - 1 : Math.min(ms.length - 1, stepOf(segment.endMs()));
            touching[first]++;
            touching[last + 1]--;
            long from = Math.max(segment.startMs(), since);
            long to = Math.min(segment.endMs() == null ? now : segment.endMs(), until);
            if (to > from) {
                int in = stepOf(from);
                int out = stepOf(to - 1);
                if (in == out) {
                    addTime(segment, in, to - from);
                } else {
                    addTime(segment, in, since + (in + 1) * size - from);
                    addTime(segment, out, to - (since + out * size));
                    gpuRate[in + 1] += segment.gpu();
                    gpuRate[out] -= segment.gpu();
                    cpuRate[in + 1] += segment.cpuMillis();
                    cpuRate[out] -= segment.cpuMillis();
                    segmentRate[in + 1]++;
                    segmentRate[out]--;
                }
            }
            if (segment.endMs() != null && segment.endMs() < until) {
                int end = stepOf(segment.endMs());
                lostGpu[end] += segment.lostGpuMillis();
                lostCpu[end] += segment.lostCpuMillis();
                usedCpu[end] += segment.usedCpuMillis();
                waits[end] = waits[end].plus(waitOf(segment));
            }
        }

        private void addTime(UsageSegment segment, int step, long inside) {
            gpu[step] += (double) segment.gpu() * inside;
            cpu[step] += (double) segment.cpuMillis() * inside;
            ms[step] += inside;
        }

        /** The total of each step a segment touches (the others {@code null}): the time held in part, and at the rates held whole. */
        UsageTotal[] totals() {
            UsageTotal[] totals = new UsageTotal[ms.length];
            long gpus = 0;
            long cpus = 0;
            long held = 0;
            int touched = 0;
            for (int step = 0; step < ms.length; step++) {
                gpus += gpuRate[step];
                cpus += cpuRate[step];
                held += segmentRate[step];
                touched += touching[step];
                if (touched > 0) {
                    totals[step] = new UsageTotal(key, kind, gpu[step] + (double) gpus * size, cpu[step] + (double) cpus * size,
                            ms[step] + held * size, lostGpu[step], lostCpu[step], usedCpu[step], waits[step]);
                }
            }
            return totals;
        }
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
