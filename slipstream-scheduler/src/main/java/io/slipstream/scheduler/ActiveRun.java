package io.slipstream.scheduler;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.IdleMode;
import java.time.Instant;
import java.util.List;

/**
 * A run that holds resources: admitted, running, or being stopped. {@code quota} is its quota's id ({@code null}:
 * none). {@code lastCheckpointAt} (or its start when it has none) measures the work a preemption would lose.
 * {@code stopping}: its instances are being stopped; {@code reclaimFor} names the run its resources go to, if any.
 * {@code movedAt}: when the scheduler last moved it to defragment the cluster ({@code null}: never), so that a run is
 * not moved again before {@link Defragmentation#moveCooldown()} has passed.
 */
public record ActiveRun(
        RunId id,
        QuotaId quota,
        IdleMode idleMode,
        int priority,
        Instant startedAt,
        Instant lastCheckpointAt,
        RealTimeResources realTimeResources,
        List<Allocation> allocations,
        boolean stopping,
        RunId reclaimFor,
        Instant movedAt) {
    public ActiveRun {
        requireNonNull(id, "id is null");
        requireNonNull(idleMode, "idleMode is null");
        requireNonNull(startedAt, "startedAt is null");
        requireNonNull(realTimeResources, "realTimeResources is null");
        allocations = List.copyOf(allocations);
    }

    /** A run never moved. */
    public ActiveRun(RunId id, QuotaId quota, IdleMode idleMode, int priority, Instant startedAt, Instant lastCheckpointAt,
            RealTimeResources realTimeResources, List<Allocation> allocations, boolean stopping, RunId reclaimFor) {
        this(id, quota, idleMode, priority, startedAt, lastCheckpointAt, realTimeResources, allocations, stopping, reclaimFor, null);
    }

    /** When the work a preemption would lose began: the last checkpoint, or the start. */
    Instant workSince() {
        return lastCheckpointAt != null && lastCheckpointAt.isAfter(startedAt) ? lastCheckpointAt : startedAt;
    }

    /** By id only (equal runs have equal ids): the core keeps active runs in hash sets, and hashing every field was a hot spot. */
    @Override
    public int hashCode() {
        return id.hashCode();
    }
}
