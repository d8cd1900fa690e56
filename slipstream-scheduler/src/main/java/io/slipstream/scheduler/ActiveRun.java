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
        RunId reclaimFor) {
    public ActiveRun {
        requireNonNull(id, "id is null");
        requireNonNull(idleMode, "idleMode is null");
        requireNonNull(startedAt, "startedAt is null");
        requireNonNull(realTimeResources, "realTimeResources is null");
        allocations = List.copyOf(allocations);
    }

    /** When the work a preemption would lose began: the last checkpoint, or the start. */
    Instant workSince() {
        return lastCheckpointAt != null && lastCheckpointAt.isAfter(startedAt) ? lastCheckpointAt : startedAt;
    }
}
