package io.slipstream.api.run;

/** Why a queued run is not admitted yet. Shown by name in a run's {@code queue.reason}. */
public enum WaitReason {
    /** Its quota's guarantee has room, but the nodes are busy; nodes are held for it. */
    WaitingForResources,
    /**
     * Its quota's guarantee has room, but a node group that must run in one domain of a topology level (a rack:
     * {@code placement: Required}) fits in none now; nodes are held for it.
     */
    WaitingForTopology,
    /** Runs on borrowed capacity are stopping to give its quota's capacity back. */
    WaitingForReclaim,
    /** Its quota is full: its guarantee (it may not borrow) or its max is in use by its quota's other runs. */
    WaitingForQuota,
    /** It may only borrow, and nothing idle fits it now. */
    WaitingForIdleCapacity,
    /**
     * It may only borrow, nothing idle fits it now, and its quota (or a quota above it) holds more than its fair share
     * of its pool's idle capacity: other quotas of the pool go first (docs/quotas.md, "Fair sharing").
     */
    WaitingForFairShare,
    /**
     * It may only borrow, and its pool could not lend it that much even if everything were idle: without a quota, only
     * what no quota guarantees may be borrowed. It waits until quotas change.
     */
    NothingToBorrow,
    /** It asks for more than its quota's max, with nothing else of the quota running: it waits until the max grows. */
    ExceedsQuotaMax,
    /**
     * It may not borrow ({@code idleResources: Disabled}) and asks for more than its quota guarantees its own runs: it
     * waits until the quota grows.
     */
    ExceedsGuarantee,
    /** The quota it names does not exist. */
    QuotaNotFound,
    /** No node can ever hold its largest instance. */
    NoNodeFits,
    /** It was restarted after a fault and waits out its backoff. */
    BackingOff;

    /**
     * Whether it waits for someone to change something (quotas, nodes, its job), not for other runs to end: as things
     * stand it never starts ({@code --wait} ends on it).
     */
    public boolean waitsForAChange() {
        return switch (this) {
            case NothingToBorrow, ExceedsQuotaMax, ExceedsGuarantee, QuotaNotFound, NoNodeFits -> true;
            case WaitingForResources, WaitingForTopology, WaitingForReclaim, WaitingForQuota, WaitingForIdleCapacity, WaitingForFairShare,
                 BackingOff -> false;
        };
    }
}
