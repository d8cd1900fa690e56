package io.slipstream.api.wire;

import java.util.List;

/**
 * The usage report's figures step by step over a window, for charts: a {@code day} by hour, a {@code week} by six
 * hours, a {@code month} (30 days) by UTC day, ending at {@code until} rounded up to a whole step (half-open:
 * {@code since} is in it, {@code until} is not). {@code buckets} are the steps' starts; each series has one point per
 * bucket, in that order, up to the step that holds now (a step wholly after now has none: nothing has happened in it
 * yet). Series are {@code by} quota, by sharing pool or, for an admin, the whole {@code cluster}, whose GPUs are
 * {@code capacityGpu} (the nodes' now; {@code null} in other series).
 */
public record UsageSeriesView(String window, String since, String until, String step, double stepHours, String by, List<String> buckets,
                              List<Series> series, Integer capacityGpu) {

    /**
     * One quota's ({@code workspace}, {@code quota}: {@code null} for runs without one), one pool's or the cluster's
     * points, and its totals over the window: the very figures of the usage report of the same window.
     */
    public record Series(String workspace, String quota, String pool, List<Point> points, Totals totals) {
    }

    /**
     * One step's averages over its {@code hours} (the step's, or for the step that holds now its part so far): GPUs
     * held on guarantees ({@code inQuota}), on borrowed capacity, and of guarantees lent; the queue's length
     * ({@code queued}, runs) and the GPUs it asked for; and the {@code waits} that ended in the step (runs that started
     * after queueing), with their mean and longest length in hours ({@code null}: none ended).
     */
    public record Point(double hours, double inQuota, double borrowed, double lent, double queued, double queuedGpu, long waits, Double meanWaitHours,
                        Double longestWaitHours) {
    }

    /** The window's GPU-hours and queued hours (as {@link UsageReportView.Line} has them), and its waits. */
    public record Totals(UsageReportView.Hours gpuHours, UsageReportView.Queued queued, long waits, Double meanWaitHours, Double longestWaitHours) {
    }
}
