package io.slipstream.model.usage;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.InstanceUsage;
import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RunId;
import java.time.Instant;

/**
 * One change of the usage record, written in the transaction of the change it accounts for. A run has at most one
 * open segment at a time (an elastic run two, of different kinds: see {@link Opened#alongside}); a quota at most one open {@link UsageKind#LENT} segment. What an instance used, as its
 * executor measured it, is a moment of its run ({@link Measured}), not a segment.
 */
public sealed interface UsageChange {

    /**
     * The run's open segments (if any) end at {@code at}; the work its attempt lost to a preemption is charged to the
     * first of them.
     */
    record Closed(RunId run, Instant at, long lostGpuMillis, long lostCpuMillis) implements UsageChange {
        public Closed {
            requireNonNull(run, "run is null");
            requireNonNull(at, "at is null");
        }
    }

    /**
     * A segment of the run starts at {@code at}: who and what it is charged to ({@code quota} {@code null}: none,
     * {@code user} {@code null}: a schedule's run) and what it holds (or, queued, asks for). {@code alongside}: it is
     * opened beside the run's segment opened just before, in the same change (an elastic run whose instances stand
     * some on its guarantee and some on idle capacity holds an IN_QUOTA and a BORROWED segment at once); else it
     * is the run's only open segment.
     */
    record Opened(RunId run, UsageKind kind, String workspace, String quota, String user, String job, long gpu, long cpuMillis, Instant at,
                  boolean alongside) implements UsageChange {
        /** The run's only open segment. */
        public Opened(RunId run, UsageKind kind, String workspace, String quota, String user, String job, long gpu, long cpuMillis, Instant at) {
            this(run, kind, workspace, quota, user, job, gpu, cpuMillis, at, false);
        }

        public Opened {
            requireNonNull(run, "run is null");
            requireNonNull(kind, "kind is null");
            requireNonNull(workspace, "workspace is null");
            requireNonNull(job, "job is null");
            requireNonNull(at, "at is null");
            if (kind == UsageKind.LENT) {
                throw new IllegalArgumentException("a run's segment is never LENT");
            }
        }
    }

    /** From {@code at} on, borrowers hold this much of the quota's unused guarantee (zero: none; it closes the open one). */
    record Lent(QuotaId quota, long gpu, long cpuMillis, Instant at) implements UsageChange {
        public Lent {
            requireNonNull(quota, "quota is null");
            requireNonNull(at, "at is null");
        }
    }

    /**
     * An instance of the run ended at {@code at}, and its executor measured what it used ({@code usage}): its CPU time
     * counts in the hour and the day it ended in, to the run's group and {@code kind} (what the run held then:
     * {@link UsageKind#IN_QUOTA} or {@link UsageKind#BORROWED}). Its memory peak is for the metrics; a report adds up
     * no peaks.
     */
    record Measured(RunId run, UsageKind kind, String workspace, String quota, String user, String job, InstanceUsage usage, Instant at)
            implements UsageChange {
        public Measured {
            requireNonNull(run, "run is null");
            requireNonNull(kind, "kind is null");
            requireNonNull(workspace, "workspace is null");
            requireNonNull(job, "job is null");
            requireNonNull(usage, "usage is null");
            requireNonNull(at, "at is null");
            if (kind != UsageKind.IN_QUOTA && kind != UsageKind.BORROWED) {
                throw new IllegalArgumentException("an instance's usage is held time, IN_QUOTA or BORROWED, not " + kind);
            }
        }

        /** The CPU time to count, in milliseconds (0: not measured). */
        public long cpuMillis() {
            return usage.hasCpu() ? Math.round(usage.cpuNanos() / 1_000_000.0) : 0;
        }
    }
}
