package io.slipstream.store;

import io.slipstream.model.usage.UsageChange;
import io.slipstream.model.usage.UsageKind;

/**
 * One stretch of accounted time, as a store keeps it: a run's ({@code run} set) or a quota's lent guarantee
 * ({@code run} {@code null}). Times are epoch milliseconds; {@code endMs} {@code null}: still open. Like its lost work,
 * {@code usedCpuMillis} (CPU time its executor measured of instances that ended, in milliseconds) counts where it ends:
 * a measurement is a stretch of no length at the instance's end ({@link #measured}). {@code endsWait}: a queued stretch
 * that ended with its run starting ({@link UsageStarts}), a wait, counted where it ended too.
 */
public record UsageSegment(String run, UsageKind kind, String workspace, String quota, String user, String job, long gpu, long cpuMillis,
                           long startMs, Long endMs, long lostGpuMillis, long lostCpuMillis, long usedCpuMillis, boolean endsWait) {

    /** A stretch that is no wait (open, or not queued, or given up on). */
    public UsageSegment(String run, UsageKind kind, String workspace, String quota, String user, String job, long gpu, long cpuMillis,
                        long startMs, Long endMs, long lostGpuMillis, long lostCpuMillis, long usedCpuMillis) {
        this(run, kind, workspace, quota, user, job, gpu, cpuMillis, startMs, endMs, lostGpuMillis, lostCpuMillis, usedCpuMillis, false);
    }

    /** A stretch that measured no CPU time. */
    public UsageSegment(String run, UsageKind kind, String workspace, String quota, String user, String job, long gpu, long cpuMillis,
                        long startMs, Long endMs, long lostGpuMillis, long lostCpuMillis) {
        this(run, kind, workspace, quota, user, job, gpu, cpuMillis, startMs, endMs, lostGpuMillis, lostCpuMillis, 0);
    }

    /** What an instance of a run used, as a stretch of no length that holds nothing but the CPU time measured. */
    public static UsageSegment measured(UsageChange.Measured measured) {
        long at = measured.at().toEpochMilli();
        return new UsageSegment(measured.run().value(), measured.kind(), measured.workspace(), measured.quota(), measured.user(), measured.job(),
                0, 0, at, at, 0, 0, measured.cpuMillis());
    }

    /** This segment ended at {@code atMs} (never before its start); a queued one is a wait if {@code runStarts} ({@link UsageStarts}). */
    public UsageSegment closedAt(long atMs, long lostGpu, long lostCpu, boolean runStarts) {
        return new UsageSegment(run, kind, workspace, quota, user, job, gpu, cpuMillis, startMs, Math.max(startMs, atMs), lostGpu, lostCpu,
                usedCpuMillis, runStarts && kind == UsageKind.QUEUED);
    }
}
