package io.slipstream.executor.local.cgroup;

/**
 * What one instance's cgroup holds it to, and how each limit is written in the kernel's files. Pure.
 *
 * @param memoryBytes  the most memory (anonymous and page cache) it may use; 0: no limit
 * @param milliCpu     the most CPU time per wall time, in thousandths of a core; 0: no limit
 * @param maxProcesses the most processes and threads it may have at once; 0: no limit
 */
public record CgroupLimits(long memoryBytes, long milliCpu, int maxProcesses) {
    /** The CFS period: 100 ms, the kernel's default; a quota is a share of it. */
    static final long CPU_PERIOD_MICROS = 100_000;
    /** The least quota the kernel takes (1 ms). */
    static final long MIN_CPU_QUOTA_MICROS = 1_000;

    public static final CgroupLimits NONE = new CgroupLimits(0, 0, 0);

    public CgroupLimits {
        if (memoryBytes < 0 || milliCpu < 0 || maxProcesses < 0) {
            throw new IllegalArgumentException("limits must not be negative: " + memoryBytes + "B, " + milliCpu + "m, " + maxProcesses);
        }
    }

    /** The CPU quota per {@link #CPU_PERIOD_MICROS}, or -1 for none. */
    long cpuQuotaMicros() {
        if (milliCpu == 0) {
            return -1;
        }
        return Math.max(MIN_CPU_QUOTA_MICROS, Math.multiplyExact(milliCpu, CPU_PERIOD_MICROS) / 1000);
    }

    /** v1 {@code memory.limit_in_bytes}: -1 is none. */
    String v1Memory() {
        return memoryBytes == 0 ? "-1" : Long.toString(memoryBytes);
    }

    /** v1 {@code cpu.cfs_quota_us}: -1 is none. */
    String v1CpuQuota() {
        return Long.toString(cpuQuotaMicros());
    }

    /** {@code pids.max} on either version. */
    String pidsMax() {
        return maxProcesses == 0 ? "max" : Integer.toString(maxProcesses);
    }

    /** v2 {@code memory.max}. */
    String v2Memory() {
        return memoryBytes == 0 ? "max" : Long.toString(memoryBytes);
    }

    /** v2 {@code cpu.max}: quota and period. */
    String v2Cpu() {
        long quota = cpuQuotaMicros();
        return (quota < 0 ? "max" : Long.toString(quota)) + " " + CPU_PERIOD_MICROS;
    }

    @Override
    public String toString() {
        return "memory=" + (memoryBytes == 0 ? "unlimited" : memoryBytes + "B") + " cpu=" + (milliCpu == 0 ? "unlimited" : milliCpu + "m")
                + " pids=" + pidsMax();
    }
}
