package io.slipstream.scheduler;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.QuotaSpec;
import io.slipstream.api.spec.QuotaType;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.WithinQuota;

/**
 * A quota: its id ({@code workspace/name}), type, GPU model (Dedicated), parent id (or {@code null}), guarantee
 * ({@code min}), cap on all its runs' use ({@code max}, {@code null}: none) and whether its runs may preempt its own
 * lower-priority guaranteed runs. {@code allowMoves}: its guaranteed runs that have a checkpoint may be moved to another
 * node (notice, grace period, requeued) when that lets a guaranteed gang start that only fragmentation blocks.
 * {@code weight}: its claim on its pool's idle capacity against the other quotas at its level ({@link FairShares}).
 */
public record QuotaState(QuotaId id, QuotaType type, String gpuModel, QuotaId parent, Resources min, Resources max, WithinQuota withinQuota,
        boolean allowMoves, double weight) {
    public QuotaState {
        requireNonNull(id, "id is null");
        requireNonNull(type, "type is null");
        requireNonNull(min, "min is null");
        withinQuota = withinQuota == null ? WithinQuota.Never : withinQuota;
        if (!(weight >= 0 && Double.isFinite(weight))) {
            throw new IllegalArgumentException("quota " + id + ": weight must be a number from 0 (is " + weight + ")");
        }
    }

    /** A quota of weight 1. */
    public QuotaState(QuotaId id, QuotaType type, String gpuModel, QuotaId parent, Resources min, Resources max, WithinQuota withinQuota,
            boolean allowMoves) {
        this(id, type, gpuModel, parent, min, max, withinQuota, allowMoves, 1);
    }

    /** A quota whose runs are never moved, of weight 1. */
    public QuotaState(QuotaId id, QuotaType type, String gpuModel, QuotaId parent, Resources min, Resources max, WithinQuota withinQuota) {
        this(id, type, gpuModel, parent, min, max, withinQuota, false, 1);
    }

    public QuotaState withAllowMoves(boolean value) {
        return new QuotaState(id, type, gpuModel, parent, min, max, withinQuota, value, weight);
    }

    public QuotaState withWeight(double value) {
        return new QuotaState(id, type, gpuModel, parent, min, max, withinQuota, allowMoves, value);
    }

    /** The scheduler's view of a Quota document of {@code workspace}: its id is {@code workspace/name}. */
    public static QuotaState of(String workspace, String name, QuotaSpec spec) {
        return new QuotaState(new QuotaId(workspace, name), spec.type(), spec.gpuModel(), parentId(workspace, spec.parent()), spec.min(), spec.max(),
                spec.withinQuota(), false, spec.fairSharing().weight());
    }

    /** A parent named {@code name} is a quota of the same workspace; {@code workspace/name} names one anywhere. */
    public static QuotaId parentId(String workspace, String parent) {
        return parent == null ? null : QuotaId.of(workspace, parent);
    }
}
