package io.slipstream.api.wire;

import java.util.List;

/**
 * A sharing pool (a quota tree, the Dedicated quotas of a GPU model, or the runs without a quota), added up.
 * {@code lendable}: the most it could lend, which weighted shares are fractions of; {@code shares}: its quotas' weighted
 * and fair shares (those the caller may see).
 */
public record PoolView(String name, ResourcesView guaranteed, ResourcesView lendable, ResourcesView used, ResourcesView inQuota,
                       ResourcesView borrowed, ResourcesView lent, ResourcesView pending, int admittedRuns, int pendingRuns, List<Share> shares) {
    /** One quota's share of the pool's idle capacity; {@code weightedShare} is absent while infinite (weight 0, borrowing). */
    public record Share(String quota, double weight, Double weightedShare, Double fairShare) {
    }
}
