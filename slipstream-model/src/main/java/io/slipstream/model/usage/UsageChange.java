package io.slipstream.model.usage;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RunId;
import java.time.Instant;

/**
 * One change of the usage record, written in the transaction of the change it accounts for. A run has at most one
 * open segment at a time; a quota at most one open {@link UsageKind#LENT} segment.
 */
public sealed interface UsageChange {

    /** The run's open segment (if any) ends at {@code at}; the work its attempt lost to a preemption is charged to it. */
    record Closed(RunId run, Instant at, long lostGpuMillis, long lostCpuMillis) implements UsageChange {
        public Closed {
            requireNonNull(run, "run is null");
            requireNonNull(at, "at is null");
        }
    }

    /**
     * A segment of the run starts at {@code at}: who and what it is charged to ({@code quota} {@code null}: none,
     * {@code user} {@code null}: a schedule's run) and what it holds (or, queued, asks for).
     */
    record Opened(RunId run, UsageKind kind, String workspace, String quota, String user, String job, long gpu, long cpuMillis, Instant at)
            implements UsageChange {
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
}
