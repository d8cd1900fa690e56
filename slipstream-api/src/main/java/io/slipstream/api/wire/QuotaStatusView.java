package io.slipstream.api.wire;

/**
 * What a quota holds and asks for now (docs/quotas.md, "Usage"): {@code used} = {@code inQuota} + {@code borrowed};
 * {@code lent}: the part of its unused own guarantee that borrowers of its pool hold; {@code pending}: what its queued
 * runs ask for. {@code max} is absent when the quota has none. {@code weightedShare}: its share of its pool's idle
 * capacity (docs/quotas.md, "Fair sharing"); absent when infinite (weight 0 while it borrows), which JSON cannot write.
 * {@code fairShare}: what that is compared with, the weighted share each quota of its level that borrows or has
 * borrowers queued would hold were what they borrow together divided by weight.
 * {@code subtreeUsed}: for a quota with children, what it and every quota below it hold (absent for a leaf).
 */
public record QuotaStatusView(String pool, ResourcesView guaranteed, ResourcesView ownGuarantee, ResourcesView max, ResourcesView used,
                              ResourcesView inQuota, ResourcesView borrowed, ResourcesView lent, ResourcesView pending, int admittedRuns,
                              int pendingRuns, Double weightedShare, Double fairShare, ResourcesView subtreeUsed) {
    /** The share as the API writes it: rounded to 6 places, {@code null} (absent) when infinite. */
    public static Double shareOf(double share) {
        return Double.isFinite(share) ? Math.round(share * 1e6) / 1e6 : null;
    }
}
