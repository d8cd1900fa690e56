package io.slipstream.simulator.report;

/**
 * One tenant's figures under one policy. GPU-hours; delays and reclaim times in seconds. {@code queueDelay} is over
 * the jobs that started; {@code neverStarted} jobs (and the GPU-hours they asked for) are counted apart.
 * {@code entitledGpuHours}: its weighted entitlement to what all tenants borrowed, while it had demand (queued jobs
 * that may borrow, or borrowing): at each moment what is borrowed, divided among those tenants by their quotas' weights.
 * {@code queueDelayAtLeast}: every job's delay, a job that never started counted as waiting until the replay ended (a
 * lower bound of its wait), so that a policy is not credited for leaving out the jobs it never starts.
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
        double neverStartedGpuHours,
        double entitledGpuHours,
        Distribution queueDelayAtLeast) {
    /** Borrowed GPU-hours over its entitlement ({@code NaN}: no entitlement). */
    public double entitlementRatio() {
        return entitledGpuHours > 0 ? borrowedGpuHours / entitledGpuHours : Double.NaN;
    }
}
