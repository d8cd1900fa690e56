package io.slipstream.executor.local.cgroup;

/**
 * What the kernel counted for one instance's cgroup, each -1 where this host cannot tell.
 *
 * @param oomKills        processes the OOM killer ended inside it for its memory limit
 * @param memoryPeakBytes the most memory it used at once
 * @param cpuNanos        CPU time its processes used
 */
public record CgroupUsage(long oomKills, long memoryPeakBytes, long cpuNanos) {
    public static final CgroupUsage UNKNOWN = new CgroupUsage(-1, -1, -1);

    /** Whether the instance lost a process to its memory limit. */
    public boolean oomKilled() {
        return oomKills > 0;
    }
}
