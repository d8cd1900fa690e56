package io.slipstream.scheduler;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.Resources;
import java.time.Instant;
import java.util.List;

/**
 * A run waiting for resources: all its instances are placed together or not at all. {@code quota} is its quota's
 * id ({@code null}: none); {@code createdAt} orders runs of equal priority. {@code reclaimed}: borrowers were
 * preempted for it and are gone, so the capacity they gave back is its own: it is placed before the rest of the
 * queue (else an earlier run could take that capacity and it would have to preempt others again).
 */
public record PendingRun(RunId id, QuotaId quota, IdleMode idleMode, int priority, Instant createdAt, List<InstanceRequest> instances, boolean reclaimed) {
    public PendingRun {
        requireNonNull(id, "id is null");
        requireNonNull(idleMode, "idleMode is null");
        requireNonNull(createdAt, "createdAt is null");
        instances = List.copyOf(instances);
        if (instances.isEmpty()) {
            throw new IllegalArgumentException("run " + id + " has no instances");
        }
    }

    public PendingRun(RunId id, QuotaId quota, IdleMode idleMode, int priority, Instant createdAt, List<InstanceRequest> instances) {
        this(id, quota, idleMode, priority, createdAt, instances, false);
    }

    /** The instance asking for the most GPUs, then cpu, then memory (the first of equals). */
    public Resources largestInstance() {
        Resources largest = instances.get(0).resources();
        for (InstanceRequest instance : instances) {
            Resources r = instance.resources();
            if (r.gpu() > largest.gpu() || (r.gpu() == largest.gpu() && (r.milliCpu() > largest.milliCpu()
                    || (r.milliCpu() == largest.milliCpu() && r.memoryBytes() > largest.memoryBytes())))) {
                largest = r;
            }
        }
        return largest;
    }

    /** {@link Scheduler#QUEUE_ORDER}: higher priority first, then older, then by id. */
    static int inQueueOrder(PendingRun a, PendingRun b) {
        if (a.priority != b.priority) {
            return a.priority > b.priority ? -1 : 1;
        }
        int byAge = a.createdAt.compareTo(b.createdAt);
        return byAge != 0 ? byAge : a.id.compareTo(b.id);
    }

    public PendingRun withReclaimed(boolean value) {
        return value == reclaimed ? this : new PendingRun(id, quota, idleMode, priority, createdAt, instances, value);
    }
}
