package io.slipstream.api.run;

/**
 * What the kernel counted for one instance that ended, where its executor can tell (the local executor reads it from
 * the instance's cgroup; the Kubernetes executor has no such figures and reports none). Each figure is -1 where it was
 * not measured (a cgroup v2 kernel before 5.19 has no memory peak); an instance with neither has no usage at all
 * ({@link #of} gives {@code null}), so that "not measured" is never read as zero.
 *
 * @param memoryPeakBytes the most memory its processes used at once, in bytes (page cache included, as the kernel's
 *                        limit counts it)
 * @param cpuNanos        the CPU time its processes used, user and system, in nanoseconds
 */
public record InstanceUsage(long memoryPeakBytes, long cpuNanos) {
    public static final long UNKNOWN = -1;

    public InstanceUsage {
        memoryPeakBytes = memoryPeakBytes < 0 ? UNKNOWN : memoryPeakBytes;
        cpuNanos = cpuNanos < 0 ? UNKNOWN : cpuNanos;
    }

    /** The usage of these figures (negative: not measured), or {@code null} when neither was. */
    public static InstanceUsage of(long memoryPeakBytes, long cpuNanos) {
        return memoryPeakBytes < 0 && cpuNanos < 0 ? null : new InstanceUsage(memoryPeakBytes, cpuNanos);
    }

    public boolean hasMemoryPeak() {
        return memoryPeakBytes != UNKNOWN;
    }

    public boolean hasCpu() {
        return cpuNanos != UNKNOWN;
    }

    /** The CPU time in seconds, to the millisecond ({@code null}: not measured). */
    public Double cpuSeconds() {
        return hasCpu() ? Math.round(cpuNanos / 1_000_000.0) / 1000.0 : null;
    }
}
