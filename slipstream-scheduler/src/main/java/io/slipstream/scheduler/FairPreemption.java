package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.WaitReason;
import io.slipstream.api.spec.Resources;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Step 5 of a cycle, preemption for fairness: a borrower still waiting for idle capacity after the borrowing pass may
 * preempt the borrowers of other quotas of its pool, as Kueue's fair sharing does, under its rule S2-a
 * ({@link FairSharingPreemption#LessThanOrEqualToFinalShare}): a victim is taken only if the preemptor's side, with
 * the preemptor admitted, would hold at most the share the victim's side holds without the victim. The sides are
 * compared where their quota trees meet: the two members just below their lowest common ancestor ({@link FairShares}).
 *
 * <p>Victims of the quota side with the highest share go first, and within it in reclaim order (lowest priority,
 * least work lost since the last checkpoint, youngest: {@link VictimSearch#VICTIM_ORDER}); the first that passes the
 * rule is removed and the side chosen again, since shares change. Once the preemptor fits (its pool lends its request
 * and a placement exists), each victim it fits without is put back, newest first. All of it is tried and undone; the
 * cycle then preempts the victims and holds what they free for the preemptor, which waits for them and preempts
 * nothing more until they are gone.
 *
 * <p>Why it cannot loop: if quota A's run preempts quota B's, A's share with it is at most B's without its victim,
 * which is less than B's with it (shares grow with what a quota holds beyond its guarantee). For B's run to preempt
 * A's back, B's share with its run would have to be at most A's without it, less than A's with it: both cannot hold.
 * Preemptors are taken lowest share first, a quota's next runs only while its previous ones found victims.
 */
final class FairPreemption {
    /** Whether a victim may be taken, from the shares of the preemptor's side and the victim's, before and after. */
    interface Rule {
        boolean allows(double preemptorBefore, double preemptorAfter, double targetBefore, double targetAfter);

        /** Kueue's S2-a, with a relative tolerance for the rounding of shares that are equal in exact arithmetic. */
        Rule LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = (preemptorBefore, preemptorAfter, targetBefore, targetAfter) ->
                !Double.isInfinite(preemptorAfter) && preemptorAfter <= targetAfter * (1 + 1e-9);

        static Rule of(FairSharingPreemption preemption) {
            return switch (preemption) {
                case Never -> null;
                case LessThanOrEqualToFinalShare -> LESS_THAN_OR_EQUAL_TO_FINAL_SHARE;
            };
        }
    }

    /** What the cycle does with the outcome: it owns the decisions and the waits. */
    interface Outcomes {
        /** The reason the run waits this cycle ({@code null}: it was admitted). */
        WaitReason waitReason(PendingRun run);

        /** Whether runs preempted for it before are still stopping (then it preempts nothing more). */
        boolean victimsStopping(PendingRun run);

        void preempt(ActiveRun victim, PendingRun forRun);

        void wait(PendingRun run, WaitReason reason, String message);
    }

    /** The reason a victim reads (its notice file, its history): the quota that needs the capacity is not named. */
    static final String REASON = "FairSharing: its quota holds more than its fair share of its pool's idle capacity, which a quota below its"
            + " share needs";

    private final ClusterState state;
    private final WorkingCluster cluster;
    private final QuotaBook book;
    private final AllowedModels allowed;
    private final CycleRuns reclaimable;
    private final Rule rule;
    private final Outcomes outcomes;

    FairPreemption(ClusterState state, AllowedModels allowed, CycleRuns reclaimable, Rule rule, Outcomes outcomes) {
        this.state = state;
        this.cluster = state.cluster;
        this.book = state.book;
        this.allowed = allowed;
        this.reclaimable = reclaimable;
        this.rule = rule;
        this.outcomes = outcomes;
    }

    /** @param borrowers the borrowing pass's runs in queue order; {@code requests}: what each asks for */
    void run(List<PendingRun> borrowers, List<Resources> requests) {
        Map<QuotaId, ArrayDeque<Integer>> byQuota = new LinkedHashMap<>();
        for (int i = 0; i < borrowers.size(); i++) {
            PendingRun run = borrowers.get(i);
            WaitReason reason = outcomes.waitReason(run);
            if ((reason == WaitReason.WaitingForIdleCapacity || reason == WaitReason.WaitingForFairShare) && run.quota() != null
                    && book.exists(run.quota()) && !outcomes.victimsStopping(run)) {
                byQuota.computeIfAbsent(run.quota(), q -> new ArrayDeque<>()).add(i);
            }
        }
        if (byQuota.isEmpty() || !reclaimable.borrowers().iterator().hasNext()) {
            return;
        }
        FairShares shares = FairShares.of(book);
        while (!byQuota.isEmpty()) {
            // The quota whose next run would hold the lowest share goes first (ties: queue order).
            QuotaId next = null;
            double lowest = Double.POSITIVE_INFINITY;
            int nextIndex = Integer.MAX_VALUE;
            for (Map.Entry<QuotaId, ArrayDeque<Integer>> entry : byQuota.entrySet()) {
                int index = entry.getValue().peek();
                double share = shares.share(shares.leafOf(entry.getKey()), requests.get(index));
                if (next == null || share < lowest || (share == lowest && index < nextIndex)) {
                    next = entry.getKey();
                    lowest = share;
                    nextIndex = index;
                }
            }
            ArrayDeque<Integer> queue = byQuota.get(next);
            int index = queue.poll();
            // A quota whose run found no victims tries no more runs this cycle: it would not find fewer to need.
            if (!preemptFor(borrowers.get(index), requests.get(index), shares) || queue.isEmpty()) {
                byQuota.remove(next);
            }
        }
    }

    /** Preempts victims for the run if the rule lets enough of them go for it to fit; returns whether it did. */
    private boolean preemptFor(PendingRun run, Resources request, FairShares shares) {
        if (!book.fitsMax(run.quota(), request) || !run.idleMode().mayBorrow()) {
            return false;
        }
        String pool = book.poolOf(run.quota());
        Set<String> models = allowed.of(run.quota(), RealTimeResources.NotInQuota, request);
        FairShares.Member mine = shares.leafOf(run.quota());
        Map<FairShares.Member, ArrayDeque<ActiveRun>> sides = candidates(run, pool, models, shares);
        if (sides.isEmpty()) {
            return false;
        }
        List<ActiveRun> removed = new ArrayList<>();
        Tentative trial = state.tentative();
        try {
            boolean fits = false;
            while (!(fits = fitsNow(run, request, pool, models)) && !sides.isEmpty()) {
                if (!removeOne(request, mine, sides, shares, removed)) {
                    break;
                }
            }
            if (!fits) {
                removed.forEach(victim -> shares.charge(shares.leafOf(victim.quota()), ClusterState.total(victim), 1));
                return false; // the trial is discarded
            }
            for (int i = removed.size() - 1; i >= 0; i--) {
                ActiveRun victim = removed.get(i);
                try (Tentative putBack = state.tentative()) {
                    victim.allocations().forEach(cluster::hold);
                    book.charge(victim.quota(), ClusterState.total(victim), RealTimeResources.NotInQuota, 1);
                    if (fitsNow(run, request, pool, models)) {
                        putBack.commit();
                        shares.charge(shares.leafOf(victim.quota()), ClusterState.total(victim), 1);
                        removed.remove(i); // not needed: it stays
                    }
                }
            }
        } finally {
            trial.discard(); // what the trial released is held again: the cycle preempts for real below
        }
        if (removed.isEmpty()) {
            return false; // cannot happen: it did not fit before the first victim went
        }
        List<Allocation> freed = new ArrayList<>();
        for (ActiveRun victim : removed) {
            outcomes.preempt(victim, run);
            // The victim's quota no longer counts it, so that the next preemptor of the cycle sees the shares as they will be.
            book.charge(victim.quota(), ClusterState.total(victim), RealTimeResources.NotInQuota, -1);
            freed.addAll(victim.allocations());
        }
        List<Placement> placements = placeOnFreed(run, models, freed);
        if (placements == null) {
            throw new IllegalStateException("run " + run.id() + " did not fit after preempting " + removed);
        }
        cluster.holdBeyond(placements, run.instances(), freed);
        book.charge(run.quota(), request, RealTimeResources.NotInQuota, 1);
        shares.charge(mine, request, 1);
        outcomes.wait(run, WaitReason.WaitingForReclaim, "waiting for " + removed.size()
                + " run(s) of quotas above their fair share of the pool's idle capacity to stop");
        return true;
    }

    /**
     * Removes the first victim the rule allows from the side with the highest share (a side none of whose runs it
     * allows is dropped); returns whether one was removed.
     */
    private boolean removeOne(Resources request, FairShares.Member mine, Map<FairShares.Member, ArrayDeque<ActiveRun>> sides, FairShares shares,
            List<ActiveRun> removed) {
        while (!sides.isEmpty()) {
            FairShares.Member target = null;
            FairShares.Member ours = null;
            double highest = Double.NEGATIVE_INFINITY;
            for (FairShares.Member side : sides.keySet()) {
                FairShares.Member[] pair = belowCommonAncestor(mine, side);
                double share = shares.share(pair[1], Resources.NONE);
                if (target == null || share > highest) {
                    target = side;
                    ours = pair[0];
                    highest = share;
                }
            }
            FairShares.Member theirs = belowCommonAncestor(mine, target)[1];
            double preemptorBefore = shares.share(ours, Resources.NONE);
            double preemptorAfter = shares.share(ours, request);
            for (ActiveRun victim : sides.get(target)) {
                if (!reclaimable.contains(victim)) {
                    continue;
                }
                Resources holds = ClusterState.total(victim);
                if (rule.allows(preemptorBefore, preemptorAfter, highest, shares.share(theirs, holds, -1))) {
                    sides.get(target).remove(victim);
                    if (sides.get(target).isEmpty()) {
                        sides.remove(target);
                    }
                    victim.allocations().forEach(cluster::release);
                    book.charge(victim.quota(), holds, RealTimeResources.NotInQuota, -1);
                    shares.charge(target, holds, -1);
                    removed.add(victim);
                    return true;
                }
            }
            sides.remove(target);
        }
        return false;
    }

    /** Other quotas' borrowers of the pool on nodes the run may use, by the member they are counted at, in victim order. */
    private Map<FairShares.Member, ArrayDeque<ActiveRun>> candidates(PendingRun run, String pool, Set<String> models, FairShares shares) {
        List<ActiveRun> all = new ArrayList<>();
        for (ActiveRun active : reclaimable.borrowers()) {
            if (active.realTimeResources() == RealTimeResources.NotInQuota && active.quota() != null && !active.quota().equals(run.quota())
                    && book.exists(active.quota()) && book.poolOf(active.quota()).equals(pool) && onUsableNodes(active, models)) {
                all.add(active);
            }
        }
        all.sort(VictimSearch.VICTIM_ORDER);
        // In the order of each side's first victim: ties between sides go by victim order, never by hash order.
        Map<FairShares.Member, ArrayDeque<ActiveRun>> sides = new LinkedHashMap<>();
        for (ActiveRun victim : all) {
            sides.computeIfAbsent(shares.leafOf(victim.quota()), m -> new ArrayDeque<>()).add(victim);
        }
        return sides;
    }

    /** The members just below the lowest common ancestor of two members of one pool: {ours, theirs}. */
    private static FairShares.Member[] belowCommonAncestor(FairShares.Member mine, FairShares.Member other) {
        Set<FairShares.Member> path = Collections.newSetFromMap(new IdentityHashMap<>());
        for (FairShares.Member m = mine; m != null; m = m.parent) {
            path.add(m);
        }
        FairShares.Member theirs = other;
        while (theirs.parent != null && !path.contains(theirs.parent)) {
            theirs = theirs.parent;
        }
        FairShares.Member ours = mine;
        while (ours.parent != null && ours.parent != theirs.parent) {
            ours = ours.parent;
        }
        return new FairShares.Member[] {ours, theirs};
    }

    /** Whether the run could borrow now: its pool lends its request, and its instances can be placed (tried and undone). */
    private boolean fitsNow(PendingRun run, Resources request, String pool, Set<String> models) {
        return book.idleAvailable(pool, request) && state.tryAndUndo(() -> cluster.placeGang(run.instances(), models) != null);
    }

    /** Where the run goes once {@code freed} is given back: on those nodes if it fits there, else anywhere (tried and undone). */
    private List<Placement> placeOnFreed(PendingRun run, Set<String> models, List<Allocation> freed) {
        return state.tryAndUndo(() -> {
            freed.forEach(cluster::release);
            Set<String> nodes = new TreeSet<>();
            freed.forEach(a -> nodes.add(a.node()));
            List<Placement> placements = cluster.placeGangOn(run.instances(), models, nodes);
            return placements != null ? placements : cluster.placeGang(run.instances(), models);
        });
    }

    /** Only a victim holding something on a node the run may use can help it. */
    private boolean onUsableNodes(ActiveRun active, Set<String> models) {
        return active.allocations().stream().anyMatch(a -> cluster.hasNode(a.node()) && (models == null || models.contains(cluster.modelOf(a.node()))));
    }
}
