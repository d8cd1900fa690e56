package io.slipstream.store;

import static java.util.Objects.requireNonNull;

import io.slipstream.model.usage.UsageKind;

/**
 * The time of one kind of segment of one group, within a report's window: {@code gpuMillis} GPU-milliseconds,
 * {@code cpuMilliMillis} millicore-milliseconds, {@code millis} segment-milliseconds (for queued time: how long runs
 * waited), the work lost to preemptions by the segments that ended in the window, and {@code usedCpuMillis}, the CPU
 * time (milliseconds) executors measured of the instances that ended in it, and the {@code waits} that ended in it:
 * queued stretches (of kind {@link UsageKind#QUEUED}) that ended with their run starting. The key's fields that the
 * grouping does not use are {@code null}.
 */
public record UsageTotal(Key key, UsageKind kind, double gpuMillis, double cpuMilliMillis, long millis, long lostGpuMillis, long lostCpuMillis,
                         long usedCpuMillis, Waits waits) {
    public UsageTotal {
        requireNonNull(key, "key is null");
        requireNonNull(kind, "kind is null");
        requireNonNull(waits, "waits is null");
    }

    /** A total without waits (of a kind other than queued, or of queued time whose runs had not started by its end). */
    public UsageTotal(Key key, UsageKind kind, double gpuMillis, double cpuMilliMillis, long millis, long lostGpuMillis, long lostCpuMillis,
                      long usedCpuMillis) {
        this(key, kind, gpuMillis, cpuMilliMillis, millis, lostGpuMillis, lostCpuMillis, usedCpuMillis, Waits.NONE);
    }

    /** A total without measured CPU time. */
    public UsageTotal(Key key, UsageKind kind, double gpuMillis, double cpuMilliMillis, long millis, long lostGpuMillis, long lostCpuMillis) {
        this(key, kind, gpuMillis, cpuMilliMillis, millis, lostGpuMillis, lostCpuMillis, 0);
    }

    /**
     * Queued stretches that ended with their run starting (admitted, or promoted after a requeue): how many, and how
     * long they lasted in all and the longest (milliseconds, each counted whole where it ended, like work lost).
     */
    public record Waits(long count, long millis, long longestMillis) {
        public static final Waits NONE = new Waits(0, 0, 0);

        public static Waits of(long millis) {
            return new Waits(1, millis, millis);
        }

        public Waits plus(Waits other) {
            return new Waits(count + other.count, millis + other.millis, Math.max(longestMillis, other.longestMillis));
        }
    }

    /** Which group: the grouping's fields set, the others {@code null}. */
    public record Key(String workspace, String quota, String user, String job) {
    }
}
