package io.slipstream.api.wire;

/**
 * What a quota holds and asks for now (docs/quotas.md, "Usage"): {@code used} = {@code inQuota} + {@code borrowed};
 * {@code lent}: the part of its unused own guarantee that borrowers of its pool hold; {@code pending}: what its queued
 * runs ask for. {@code max} is absent when the quota has none.
 */
public record QuotaStatusView(String pool, ResourcesView guaranteed, ResourcesView ownGuarantee, ResourcesView max, ResourcesView used,
                              ResourcesView inQuota, ResourcesView borrowed, ResourcesView lent, ResourcesView pending, int admittedRuns,
                              int pendingRuns) {
}
