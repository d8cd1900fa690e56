package io.slipstream.api.wire;

/** A sharing pool (a quota tree, the Dedicated quotas of a GPU model, or the runs without a quota), added up. */
public record PoolView(String name, ResourcesView guaranteed, ResourcesView used, ResourcesView inQuota, ResourcesView borrowed,
                       ResourcesView lent, ResourcesView pending, int admittedRuns, int pendingRuns) {
}
