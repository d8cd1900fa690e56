package io.slipstream.simulator.report;

/**
 * One tenant's figures under one policy. GPU-hours; delays and reclaim times in seconds. {@code queueDelay} is over
 * the jobs that started; {@code neverStarted} jobs (and the GPU-hours they asked for) are counted apart.
 */
public record TenantResult(
        String tenant,
        long quotaGpus,
        int jobs,
        int completed,
        Distribution queueDelay,
        double allocatedGpuHours,
        double borrowedGpuHours,
        double lentGpuHours,
        int preempted,
        Distribution reclaim,
        int neverStarted,
        double neverStartedGpuHours) {
}
