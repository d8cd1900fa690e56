package io.slipstream.store;

import static java.util.Objects.requireNonNull;

import io.slipstream.model.usage.UsageKind;

/**
 * The time of one kind of segment of one group, within a report's window: {@code gpuMillis} GPU-milliseconds,
 * {@code cpuMilliMillis} millicore-milliseconds, {@code millis} segment-milliseconds (for queued time: how long runs
 * waited), the work lost to preemptions by the segments that ended in the window, and {@code usedCpuMillis}, the CPU
 * time (milliseconds) executors measured of the instances that ended in it. The key's fields that the grouping does
 * not use are {@code null}.
 */
public record UsageTotal(Key key, UsageKind kind, double gpuMillis, double cpuMilliMillis, long millis, long lostGpuMillis, long lostCpuMillis,
                         long usedCpuMillis) {
    public UsageTotal {
        requireNonNull(key, "key is null");
        requireNonNull(kind, "kind is null");
    }

    /** A total without measured CPU time. */
    public UsageTotal(Key key, UsageKind kind, double gpuMillis, double cpuMilliMillis, long millis, long lostGpuMillis, long lostCpuMillis) {
        this(key, kind, gpuMillis, cpuMilliMillis, millis, lostGpuMillis, lostCpuMillis, 0);
    }

    /** Which group: the grouping's fields set, the others {@code null}. */
    public record Key(String workspace, String quota, String user, String job) {
    }
}
