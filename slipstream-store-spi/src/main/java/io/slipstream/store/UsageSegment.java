package io.slipstream.store;

import io.slipstream.model.usage.UsageKind;

/**
 * One stretch of accounted time, as a store keeps it: a run's ({@code run} set) or a quota's lent guarantee
 * ({@code run} {@code null}). Times are epoch milliseconds; {@code endMs} {@code null}: still open.
 */
public record UsageSegment(String run, UsageKind kind, String workspace, String quota, String user, String job, long gpu, long cpuMillis,
                           long startMs, Long endMs, long lostGpuMillis, long lostCpuMillis) {

    public UsageSegment closedAt(long atMs, long lostGpu, long lostCpu) {
        return new UsageSegment(run, kind, workspace, quota, user, job, gpu, cpuMillis, startMs, Math.max(startMs, atMs), lostGpu, lostCpu);
    }
}
