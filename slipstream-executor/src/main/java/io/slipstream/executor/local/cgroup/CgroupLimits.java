package io.slipstream.executor.local.cgroup;

import java.util.List;

/**
 * What one instance's cgroup holds it to, and how each limit is written in the kernel's files. Pure.
 *
 * @param memoryBytes  the most memory (anonymous and page cache) it may use; 0: no limit
 * @param milliCpu     the most CPU time per wall time, in thousandths of a core; 0: no limit
 * @param maxProcesses the most processes and threads it may have at once; 0: no limit
 * @param deniedDevices devices it may not open nor make, as the v1 devices controller names them ({@code c 195:3}):
 *                      the node's GPUs that are not its own
 * @param cores         the cores it is pinned to ({@code cpuset.cpus}): its node's {@code cpuset}; {@code null}: not pinned
 */
public record CgroupLimits(long memoryBytes, long milliCpu, int maxProcesses, List<String> deniedDevices, CpuList cores) {
    /** The CFS period: 100 ms, the kernel's default; a quota is a share of it. */
    static final long CPU_PERIOD_MICROS = 100_000;
    /** The least quota the kernel takes (1 ms). */
    static final long MIN_CPU_QUOTA_MICROS = 1_000;

    public static final CgroupLimits NONE = new CgroupLimits(0, 0, 0);

    /** Not pinned to cores. */
    public CgroupLimits(long memoryBytes, long milliCpu, int maxProcesses, List<String> deniedDevices) {
        this(memoryBytes, milliCpu, maxProcesses, deniedDevices, null);
    }
    private static final java.util.regex.Pattern DEVICE = java.util.regex.Pattern.compile("[cb] \\d{1,10}:\\d{1,10}");

    public CgroupLimits {
        if (memoryBytes < 0 || milliCpu < 0 || maxProcesses < 0) {
            throw new IllegalArgumentException("limits must not be negative: " + memoryBytes + "B, " + milliCpu + "m, " + maxProcesses);
        }
        deniedDevices = List.copyOf(deniedDevices);
        if (cores != null && cores.isEmpty()) {
            throw new IllegalArgumentException("an instance pinned to no core could never run");
        }
        for (String device : deniedDevices) {
            if (!DEVICE.matcher(device).matches()) {
                throw new IllegalArgumentException("not a device: " + device);
            }
        }
    }

    /** No device denied. */
    public CgroupLimits(long memoryBytes, long milliCpu, int maxProcesses) {
        this(memoryBytes, milliCpu, maxProcesses, List.of());
    }

    /**
     * The device number of the node at {@code path}, as the devices controller names it ({@code c 195:3}): never
     * through a link (an admin names the device node itself).
     *
     * @throws java.io.IOException it is missing, a link, or not a device
     */
    public static String deviceOf(java.nio.file.Path path) throws java.io.IOException {
        java.util.Map<String, Object> attributes = java.nio.file.Files.readAttributes(path, "unix:mode,rdev", java.nio.file.LinkOption.NOFOLLOW_LINKS);
        int type = (Integer) attributes.get("mode") & 0170000;
        if (type != 0020000 && type != 0060000) {
            throw new java.io.IOException(path + " is not a device node");
        }
        long rdev = (Long) attributes.get("rdev");
        long major = ((rdev >>> 8) & 0xfff) | ((rdev >>> 32) & ~0xfffL);
        long minor = (rdev & 0xff) | ((rdev >>> 12) & ~0xffL);
        return (type == 0020000 ? "c " : "b ") + major + ":" + minor;
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

    /**
     * {@code pids.max} of the server's parent cgroup, which all its instances are under: every instance has its own limit,
     * but nothing else held them together, so a few runs at theirs could take every pid of a machine of {@code hostTasks}
     * tasks, and neither the server nor anything else on it could fork. A quarter (at least 2,048) is kept for the host;
     * {@code max} where the machine's count is unknown.
     */
    static String parentPidsMax(long hostTasks) {
        if (hostTasks <= 0) {
            return "max";
        }
        return Long.toString(Math.max(1, hostTasks - Math.max(2048, hostTasks / 4)));
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
                + " pids=" + pidsMax() + (cores == null ? "" : " cores=" + cores) + (deniedDevices.isEmpty() ? "" : " denied=" + deniedDevices);
    }
}
