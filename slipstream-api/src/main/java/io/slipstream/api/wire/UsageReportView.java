package io.slipstream.api.wire;

import java.util.List;

/**
 * GPU- and CPU-hours in {@code [since, until)}, added up {@code by} workspace, quota, user or job: one line per group
 * and their total. Lending belongs to quotas, so it is only told apart by workspace and by quota.
 */
public record UsageReportView(String since, String until, String by, List<Line> lines, Line total) {

    /**
     * One group's hours; the fields of the key the grouping does not use are left out. {@code cpuHours} are the cores
     * its runs held (their requests); {@code measuredCpuHours} the CPU time the kernel counted of its instances that
     * ended in the window, where their executor measures it (the local executor with cgroups; 0 elsewhere).
     */
    public record Line(String workspace, String quota, String user, String job, Hours gpuHours, Hours cpuHours, double measuredCpuHours,
                       Queued queued) {
    }

    /**
     * Resource-hours: held on the quota's guarantee, held on borrowed idle capacity, of the quota's guarantee held by
     * borrowers (lent), and of work thrown away by preemptions (done after the last checkpoint).
     */
    public record Hours(double inQuota, double borrowed, double lent, double lostToPreemption) {
    }

    /** How long runs waited in their queues ({@code hours}, run-hours), and the GPU-hours they asked for meanwhile. */
    public record Queued(double hours, double gpuHours) {
    }
}
