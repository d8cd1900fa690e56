package io.slipstream.scheduler;

import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.WithinQuota;
import java.util.ArrayList;
import java.util.List;

/**
 * Room that a quota's own runs make for its queued guaranteed run, by the quota's ledger alone (where the run then
 * goes is the victim search's): under its max, its runs on idle capacity give way, since a guarantee comes before
 * borrowing; with {@code withinQuota: LowerPriority}, in its guarantee, its lower-priority guaranteed runs do.
 */
enum OwnQuotaRoom {
    UNDER_MAX(RealTimeResources.NotInQuota) {
        @Override
        boolean has(QuotaBook book, PendingRun run, Resources request) {
            return book.fitsMax(run.quota(), request);
        }

        @Override
        String reason(PendingRun run) {
            return "Preempted: guaranteed run " + run.id() + " of the same quota needs room under its max";
        }
    },
    IN_GUARANTEE(RealTimeResources.InQuota) {
        @Override
        boolean appliesTo(QuotaState quota) {
            return quota.withinQuota() == WithinQuota.LowerPriority;
        }

        @Override
        boolean givesWay(ActiveRun victim, PendingRun run) {
            return victim.priority() < run.priority();
        }

        @Override
        boolean has(QuotaBook book, PendingRun run, Resources request) {
            return book.fitsGuarantee(run.quota(), request);
        }

        @Override
        String reason(PendingRun run) {
            return "Preempted by higher-priority run " + run.id() + " of the same quota";
        }
    };

    /** How the runs that give way are charged. */
    private final RealTimeResources victims;

    OwnQuotaRoom(RealTimeResources victims) {
        this.victims = victims;
    }

    /** Whether the quota's runs make this room at all. */
    boolean appliesTo(QuotaState quota) {
        return true;
    }

    /** Whether a run of the quota, charged as this room's victims are, gives way to {@code run}. */
    boolean givesWay(ActiveRun victim, PendingRun run) {
        return true;
    }

    /** Whether the quota has room for {@code request} now. */
    abstract boolean has(QuotaBook book, PendingRun run, Resources request);

    /** What a victim is told (it reads it in its notice file). */
    abstract String reason(PendingRun run);

    /**
     * Just enough of the quota's runs, in victim order, that stop being charged to the book for the run to have room:
     * tentatively, kept only if they make it. Returns them (the cycle preempts them), or {@code null} when they cannot
     * (the book as it was).
     */
    List<ActiveRun> make(PendingRun run, Resources request, ClusterState state, CycleRuns reclaimable) {
        QuotaState quota = state.book.quota(run.quota());
        if (quota == null || !appliesTo(quota)) {
            return null;
        }
        List<ActiveRun> candidates = new ArrayList<>();
        for (ActiveRun active : victims == RealTimeResources.NotInQuota ? reclaimable.borrowers() : reclaimable) {
            if (run.quota().equals(active.quota()) && active.realTimeResources() == victims && givesWay(active, run)) {
                candidates.add(active);
            }
        }
        candidates.sort(VictimSearch.VICTIM_ORDER);
        List<ActiveRun> chosen = new ArrayList<>();
        try (Tentative giving = state.tentative()) {
            for (ActiveRun victim : candidates) {
                if (has(state.book, run, request)) {
                    break;
                }
                ClusterState.charge(state.book, victim, -1); // all it holds, each instance as it stands
                chosen.add(victim);
            }
            if (!has(state.book, run, request)) {
                return null;
            }
            giving.commit();
        }
        return chosen;
    }
}
