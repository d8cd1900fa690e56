package io.slipstream.simulator.report;

import io.slipstream.simulator.input.Policy;
import java.util.List;

/**
 * What one policy did with the trace. GPU-hours; times in seconds. {@code utilization}: allocated GPU-hours over
 * the cluster's GPU-hours from the first submission to the last completion (the whole replay: a policy that
 * serves the same work sooner scores higher); {@code windowUtilization}: the same between the first and the last
 * submission only (the busy window, the headline figure). {@code queueDelay}: time queued over all attempts, of the
 * jobs that started; {@code completionTime}: of the jobs that completed; jobs that never started are counted apart
 * ({@code neverStarted}, with the GPU-hours they asked for) and are in neither. {@code reclaim}: for each run that had
 * borrowers preempted to start on its quota's guarantee, from the change after which they were (its submission, or
 * the end of what was in the way) to its start. {@code guaranteeWait}: for each run that fit its guarantee but had to
 * wait for capacity (borrowers, or others' guaranteed work fragmenting the nodes), the time it so waited before its
 * start (not while its quota's own runs held the room, nor as a borrower waiting for runs stopped for it).
 * {@code timeline}: GPUs allocated per tenant, averaged over {@code timelineBucketSeconds}. {@code longestReclaims}:
 * the few longest reclaims taken apart, longest first. {@code fairnessIndex}: Jain's index over the tenants'
 * {@link TenantResult#entitlementRatio()} (1: each borrowed in proportion to its weighted entitlement; {@code NaN}: no
 * tenant was entitled to anything). {@code topology}: where gangs landed in the cluster's topology and what it cost
 * ({@code null}: the cluster has none). {@code elastic}: what it did with elastic jobs, and its borrowers' lost work.
 */
public record PolicyResult(
        Policy policy,
        int jobs,
        int completed,
        int neverStarted,
        double neverStartedGpuHours,
        double utilization,
        double windowUtilization,
        Distribution queueDelay,
        Distribution completionTime,
        int preemptions,
        int failures,
        double allocatedGpuHours,
        double lostGpuHours,
        double borrowedGpuHours,
        Distribution reclaim,
        Distribution guaranteeWait,
        long cycles,
        double schedulerSeconds,
        double wallSeconds,
        double makespanSeconds,
        List<TenantResult> tenants,
        double timelineBucketSeconds,
        double[][] timeline,
        List<ReclaimSample> longestReclaims,
        double fairnessIndex,
        TopologyResult topology,
        ElasticFigures elastic) {
    public PolicyResult {
        longestReclaims = List.copyOf(longestReclaims);
        java.util.Objects.requireNonNull(elastic, "elastic is null");
    }

    /** A result without elastic jobs. */
    public PolicyResult(Policy policy, int jobs, int completed, int neverStarted, double neverStartedGpuHours, double utilization, double windowUtilization,
            Distribution queueDelay, Distribution completionTime, int preemptions, int failures, double allocatedGpuHours, double lostGpuHours,
            double borrowedGpuHours, Distribution reclaim, Distribution guaranteeWait, long cycles, double schedulerSeconds, double wallSeconds,
            double makespanSeconds, List<TenantResult> tenants, double timelineBucketSeconds, double[][] timeline, List<ReclaimSample> longestReclaims,
            double fairnessIndex, TopologyResult topology) {
        this(policy, jobs, completed, neverStarted, neverStartedGpuHours, utilization, windowUtilization, queueDelay, completionTime, preemptions, failures,
                allocatedGpuHours, lostGpuHours, borrowedGpuHours, reclaim, guaranteeWait, cycles, schedulerSeconds, wallSeconds, makespanSeconds, tenants,
                timelineBucketSeconds, timeline, longestReclaims, fairnessIndex, topology, ElasticFigures.NONE);
    }

    /** A result on a cluster without a topology. */
    public PolicyResult(Policy policy, int jobs, int completed, int neverStarted, double neverStartedGpuHours, double utilization, double windowUtilization,
            Distribution queueDelay, Distribution completionTime, int preemptions, int failures, double allocatedGpuHours, double lostGpuHours,
            double borrowedGpuHours, Distribution reclaim, Distribution guaranteeWait, long cycles, double schedulerSeconds, double wallSeconds,
            double makespanSeconds, List<TenantResult> tenants, double timelineBucketSeconds, double[][] timeline, List<ReclaimSample> longestReclaims,
            double fairnessIndex) {
        this(policy, jobs, completed, neverStarted, neverStartedGpuHours, utilization, windowUtilization, queueDelay, completionTime, preemptions, failures,
                allocatedGpuHours, lostGpuHours, borrowedGpuHours, reclaim, guaranteeWait, cycles, schedulerSeconds, wallSeconds, makespanSeconds, tenants,
                timelineBucketSeconds, timeline, longestReclaims, fairnessIndex, null);
    }

    /** Jain's fairness index of the values: (sum x)^2 / (n sum x^2), skipping NaN; {@code NaN} when none is left. */
    public static double jain(double... values) {
        double sum = 0;
        double squares = 0;
        int n = 0;
        for (double x : values) {
            if (!Double.isNaN(x)) {
                sum += x;
                squares += x * x;
                n++;
            }
        }
        return n == 0 ? Double.NaN : squares == 0 ? 1 : sum * sum / (n * squares);
    }
}
