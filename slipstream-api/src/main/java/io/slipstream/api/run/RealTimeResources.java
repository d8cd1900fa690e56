package io.slipstream.api.run;

/** Where a running run's resources come from: its quota's guarantee (never reclaimed), or idle capacity (preemptible). */
public enum RealTimeResources {
    InQuota,
    NotInQuota
}
