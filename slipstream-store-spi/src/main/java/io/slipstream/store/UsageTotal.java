package io.slipstream.store;

import static java.util.Objects.requireNonNull;

import io.slipstream.model.usage.UsageKind;

/**
 * The time of one kind of segment of one group, within a report's window: {@code gpuMillis} GPU-milliseconds,
 * {@code cpuMilliMillis} millicore-milliseconds, {@code millis} segment-milliseconds (for queued time: how long runs
 * waited), and the work lost to preemptions by the segments that ended in the window. The key's fields that the
 * grouping does not use are {@code null}.
 */
public record UsageTotal(Key key, UsageKind kind, double gpuMillis, double cpuMilliMillis, long millis, long lostGpuMillis, long lostCpuMillis) {
    public UsageTotal {
        requireNonNull(key, "key is null");
        requireNonNull(kind, "kind is null");
    }

    /** Which group: the grouping's fields set, the others {@code null}. */
    public record Key(String workspace, String quota, String user, String job) {
    }
}
