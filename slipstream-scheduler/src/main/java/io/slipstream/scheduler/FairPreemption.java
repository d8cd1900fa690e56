package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.WaitReason;
import io.slipstream.api.spec.Resources;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;

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
    /**
     * Whether a victim may be taken, from the shares of the preemptor's side and the victim's, before and after. A rule
     * allows no less when the victim side's share after is higher: the search skips sides by that.
     */
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
        /** Whether runs preempted for it before are still stopping (then it preempts nothing more). */
        boolean victimsStopping(PendingRun run);

        void preempt(ActiveRun victim, PendingRun forRun);

        /** An elastic run loses {@code instances} (extras on idle capacity) for {@code forRun}: a shrink, no longer charged. */
        void shrink(ActiveRun run, List<Allocation> instances, PendingRun forRun);

        /** The run ({@code borrower}: its place in {@link #run}'s list) waits. */
        void wait(int borrower, PendingRun run, WaitReason reason, String message);
    }

    /** The reason a victim reads (its notice file, its history): the quota that needs the capacity is not named. */
    static final String REASON = "FairSharing: its quota holds more than its fair share of its pool's idle capacity, which a quota below its"
            + " share needs";
    /** What a shrunk run's instances read: the same, of its extra instances. */
    static final String SHRINK_REASON = "FairSharing: its quota holds more than its fair share of its pool's idle capacity, which a quota below"
            + " its share needs: its extra instances on idle capacity go first";

    private final ClusterState state;
    private final WorkingCluster cluster;
    private final QuotaBook book;
    private final AllowedModels allowed;
    private final CycleRuns reclaimable;
    private final Rule rule;
    private final Outcomes outcomes;
    /**
     * The cycle's borrowers by the member they are counted at, the members in the order of their first run by id (ties
     * between sides never go by hash order): built once, when a first run needs it.
     */
    private Map<FairShares.Member, Borrowers> victimsBySide;

    private static final Comparator<QuotaBorrowers.Borrowed> VICTIM_ORDER = QuotaBorrowers.Borrowed::inVictimOrder;

    /**
     * A member's borrowers, grouped by what each holds ({@link QuotaBorrowers}), since the rule allows or
     * refuses all of a group alike: a search takes the first in victim order among the groups the rule allows, and never
     * walks victims the rule refuses (when most of a side's borrowers are too large to go, walking them in order was most
     * of this step's time). A quota whose borrowers hold too many different amounts makes one group, walked victim by
     * victim.
     */
    private static final class Borrowers {
        private final QuotaBorrowers of;
        private List<Group> groups;

        Borrowers(QuotaBorrowers of) {
            this.of = of;
        }

        List<Group> groups() {
            if (groups == null) {
                groups = new ArrayList<>();
                if (of.byAmount != null) {
                    for (int k = 0; k < of.amounts.size(); k++) {
                        groups.add(new Group(of.amounts.get(k), of.byAmount.get(k)));
                    }
                } else {
                    groups.add(new Group(null, of.runs));
                }
            }
            return groups;
        }

        /** No victim holds less than this in any resource: the side's share without any one is at most its share without this. */
        Resources least() {
            return new Resources(of.leastMilliCpu, of.leastMemory, (int) Math.min(Integer.MAX_VALUE, of.leastGpu), null);
        }
    }

    /**
     * Victims that hold the same ({@code holds}; {@code null}: what each holds varies), taken in victim order as far as
     * a search goes, from a heap: a search usually stops at one of the first.
     */
    private static final class Group {
        final Resources holds;
        private final List<QuotaBorrowers.Borrowed> runs;
        /** The first in victim order, as far as they were taken; the rest in {@link #rest}. */
        private final List<QuotaBorrowers.Borrowed> inOrder = new ArrayList<>();
        private PriorityQueue<QuotaBorrowers.Borrowed> rest;

        Group(Resources holds, List<QuotaBorrowers.Borrowed> runs) {
            this.holds = holds;
            this.runs = runs;
        }

        /** The {@code i}-th in victim order ({@code null}: there are fewer). */
        QuotaBorrowers.Borrowed get(int i) {
            if (rest == null) {
                rest = new PriorityQueue<>(Math.max(1, runs.size()), VICTIM_ORDER);
                rest.addAll(runs);
            }
            while (inOrder.size() <= i && !rest.isEmpty()) {
                inOrder.add(rest.poll());
            }
            return i < inOrder.size() ? inOrder.get(i) : null;
        }
    }

    /** One side's victims as one preemptor searches them: in each group, those before {@code next} are taken or never allowed. */
    private static final class Side {
        final FairShares.Member member;
        final Borrowers victims;
        final int[] next;

        Side(FairShares.Member member, Borrowers victims) {
            this.member = member;
            this.victims = victims;
            this.next = new int[victims.groups().size()];
        }
    }

    FairPreemption(ClusterState state, AllowedModels allowed, CycleRuns reclaimable, Rule rule, Outcomes outcomes) {
        this.state = state;
        this.cluster = state.cluster;
        this.book = state.book;
        this.allowed = allowed;
        this.reclaimable = reclaimable;
        this.rule = rule;
        this.outcomes = outcomes;
    }

    /**
     * @param borrowers the borrowing pass's runs in queue order; {@code requests}: what each asks for; {@code byQuota}: by
     *                  quota, the places of those it told to wait for idle capacity or for their fair share, in queue order
     *                  (the others were admitted or cannot borrow at all), those whose victims still stop included; taken
     *                  from as the runs are tried
     */
    void run(List<PendingRun> borrowers, List<Resources> requests, Map<QuotaId, ArrayDeque<Integer>> byQuota) {
        if (state.borrowers.isEmpty() && state.elastic.isEmpty()) {
            return; // nobody to take from (a guaranteed elastic run may have extras on idle capacity)
        }
        if (byQuota.isEmpty()) {
            return;
        }
        FairShares shares = FairShares.of(book);
        while (!byQuota.isEmpty()) {
            // The quota whose next run would hold the lowest share goes first (ties: queue order). A run whose victims are
            // still stopping preempts nothing more, and its request must not decide its quota's turn: it is dropped when it
            // comes first (looked at then, not for every waiting run; what stops does not change in this step).
            QuotaId next = null;
            double lowest = Double.POSITIVE_INFINITY;
            int nextIndex = Integer.MAX_VALUE;
            for (var entries = byQuota.entrySet().iterator(); entries.hasNext(); ) {
                Map.Entry<QuotaId, ArrayDeque<Integer>> entry = entries.next();
                ArrayDeque<Integer> runs = entry.getValue();
                while (!runs.isEmpty() && outcomes.victimsStopping(borrowers.get(runs.peek()))) {
                    runs.poll();
                }
                if (runs.isEmpty()) {
                    entries.remove();
                    continue;
                }
                int index = runs.peek();
                double share = shares.share(shares.leafOf(entry.getKey()), requests.get(index));
                if (next == null || share < lowest || (share == lowest && index < nextIndex)) {
                    next = entry.getKey();
                    lowest = share;
                    nextIndex = index;
                }
            }
            if (next == null) {
                return; // every run left had victims stopping
            }
            ArrayDeque<Integer> queue = byQuota.get(next);
            int index = queue.poll();
            // A quota whose run found no victims tries no more runs this cycle: it would not find fewer to need.
            if (!preemptFor(index, borrowers.get(index), requests.get(index), shares) || queue.isEmpty()) {
                byQuota.remove(next);
            }
        }
    }

    /** Preempts victims for the run if the rule lets enough of them go for it to fit; returns whether it did. */
    private boolean preemptFor(int borrower, PendingRun run, Resources request, FairShares shares) {
        if (!book.fitsMax(run.quota(), request) || !run.idleMode().mayBorrow()) {
            return false;
        }
        String pool = book.poolOf(run.quota());
        Set<String> models = allowed.of(run.quota(), RealTimeResources.NotInQuota, request);
        FairShares.Member mine = shares.leafOf(run.quota());
        List<Side> sides = sides(mine, request, shares);
        // Elastic runs' extras on idle capacity go first: a run is stopped whole only when they are not enough.
        FairExtras extras = new FairExtras(state, reclaimable, rule, shares, mine, models);
        if (sides.isEmpty() && extras.isEmpty()) {
            return false;
        }
        List<ActiveRun> removed = new ArrayList<>();
        Set<io.slipstream.api.run.RunId> stopped = new java.util.HashSet<>(); // looked up only, never walked
        Map<ActiveRun, List<Allocation>> shrinks;
        Tentative trial = state.tentative();
        try {
            boolean fits = fitsNow(run, request, pool, models);
            boolean wholeAlone = false;
            try (Tentative withExtras = state.tentative()) {
                while (!fits && extras.takeOne(request)) {
                    fits = fitsNow(run, request, pool, models);
                }
                fits = fits || removeUntilFits(run, request, pool, models, mine, sides, shares, removed, extras);
                if (fits || !extras.tookAny()) {
                    withExtras.commit();
                } else {
                    // The extras taken lowered their sides' shares: runs the rule lets go whole without them gone it may refuse
                    // with them gone. Whole runs alone then, as without elastic runs (the tentative undoes the cluster and book).
                    removed.forEach(victim -> shares.charge(shares.leafOf(victim.quota()), extras.left(victim, ClusterState.total(victim)), 1));
                    removed.clear();
                    extras.undo();
                    wholeAlone = true;
                }
            }
            if (wholeAlone) {
                fits = removeUntilFits(run, request, pool, models, mine, sides(mine, request, shares), shares, removed, extras);
            }
            if (!fits) {
                removed.forEach(victim -> shares.charge(shares.leafOf(victim.quota()), extras.left(victim, ClusterState.total(victim)), 1));
                extras.undo();
                return false; // the trial is discarded
            }
            for (int i = removed.size() - 1; i >= 0; i--) {
                ActiveRun victim = removed.get(i);
                Resources left = extras.left(victim, ClusterState.total(victim));
                try (Tentative putBack = state.tentative()) {
                    extras.leftAllocations(victim).forEach(cluster::hold);
                    book.charge(victim.quota(), left, RealTimeResources.NotInQuota, 1);
                    if (fitsNow(run, request, pool, models)) {
                        putBack.commit();
                        shares.charge(shares.leafOf(victim.quota()), left, 1);
                        removed.remove(i); // not needed: it stays
                    }
                }
            }
            removed.forEach(victim -> stopped.add(victim.id()));
            extras.putBack(stopped, () -> fitsNow(run, request, pool, models));
            shrinks = extras.shrinks(stopped);
        } finally {
            trial.discard(); // what the trial released is held again: the cycle preempts for real below
        }
        if (removed.isEmpty() && shrinks.isEmpty()) {
            return false; // cannot happen: it did not fit before the first victim went
        }
        List<Allocation> freed = new ArrayList<>();
        int instances = 0;
        for (Map.Entry<ActiveRun, List<Allocation>> shrink : shrinks.entrySet()) {
            outcomes.shrink(shrink.getKey(), shrink.getValue(), run); // no longer charged: the shrink does that
            freed.addAll(shrink.getValue());
            instances += shrink.getValue().size();
        }
        for (ActiveRun victim : removed) {
            outcomes.preempt(victim, run);
            // The victim's quota no longer counts it, so that the next preemptor of the cycle sees the shares as they will be.
            book.charge(victim.quota(), ClusterState.total(victim), RealTimeResources.NotInQuota, -1);
            freed.addAll(victim.allocations());
        }
        List<Placement> placements = state.placeOnFreed(run.instances(), models, freed);
        if (placements == null) {
            throw new IllegalStateException("run " + run.id() + " did not fit after preempting " + removed);
        }
        cluster.holdBeyond(placements, run.instances(), freed);
        book.charge(run.quota(), request, RealTimeResources.NotInQuota, 1);
        shares.charge(mine, request, 1);
        outcomes.wait(borrower, run, WaitReason.WaitingForReclaim, "waiting for " + (instances == 0 ? removed.size() + " run(s)"
                : removed.size() + " run(s) and " + instances + " extra instance(s) of elastic runs") + " of quotas above their fair share of the"
                + " pool's idle capacity to stop");
        return true;
    }

    /** Removes victims, whole, until the run fits or the rule allows no more; returns whether it fits. */
    private boolean removeUntilFits(PendingRun run, Resources request, String pool, Set<String> models, FairShares.Member mine, List<Side> sides,
            FairShares shares, List<ActiveRun> removed, FairExtras extras) {
        while (!sides.isEmpty()) {
            if (!removeOne(request, mine, models, sides, shares, removed, extras)) {
                return false;
            }
            if (fitsNow(run, request, pool, models)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Removes the first victim the rule allows from the side with the highest share (a side none of whose runs it
     * allows is dropped); returns whether one was removed. A victim it does not allow now it never will for this
     * preemptor: the victim side's share only falls as victims go, the preemptor's stays.
     */
    private boolean removeOne(Resources request, FairShares.Member mine, Set<String> models, List<Side> sides, FairShares shares,
            List<ActiveRun> removed, FairExtras extras) {
        while (!sides.isEmpty()) {
            Side target = null;
            FairShares.Member ours = null;
            FairShares.Member theirs = null;
            double highest = Double.NEGATIVE_INFINITY;
            for (Side side : sides) {
                FairShares.Member[] pair = belowCommonAncestor(mine, side.member);
                double share = shares.share(pair[1], Resources.NONE);
                if (target == null || share > highest) {
                    target = side;
                    ours = pair[0];
                    theirs = pair[1];
                    highest = share;
                }
            }
            double preemptorBefore = shares.share(ours, Resources.NONE);
            double preemptorAfter = shares.share(ours, request);
            // The first victim in victim order that the rule allows: the first allowed of each group, then the first of those.
            QuotaBorrowers.Borrowed chosen = null;
            int chosenGroup = -1;
            List<Group> groups = target.victims.groups();
            for (int g = 0; g < groups.size(); g++) {
                Group group = groups.get(g);
                // The rule first: it is arithmetic, and most victims of a side near its fair share fail it.
                if (group.holds != null && !rule.allows(preemptorBefore, preemptorAfter, highest, shares.share(theirs, group.holds, -1))) {
                    continue;
                }
                QuotaBorrowers.Borrowed candidate;
                int i = target.next[g];
                for (; (candidate = group.get(i)) != null; i++) {
                    ActiveRun victim = candidate.run();
                    if ((group.holds != null || rule.allows(preemptorBefore, preemptorAfter, highest, shares.share(theirs, candidate.holds(), -1)))
                            && reclaimable.contains(victim) && onUsableNodes(victim, models)) {
                        if (chosen == null || VICTIM_ORDER.compare(candidate, chosen) < 0) {
                            chosen = candidate;
                            chosenGroup = g;
                        }
                        break;
                    }
                }
                target.next[g] = i; // those passed over it never allows (the victim side's share only falls)
            }
            if (chosen != null) {
                target.next[chosenGroup]++;
                ActiveRun victim = chosen.run();
                // Seen without the extras already taken of it (the rule was asked with all it holds: it allows no more so).
                Resources left = extras.left(victim, chosen.holds());
                extras.leftAllocations(victim).forEach(cluster::release);
                book.charge(victim.quota(), left, RealTimeResources.NotInQuota, -1);
                shares.charge(target.member, left, -1);
                removed.add(victim);
                return true;
            }
            sides.remove(target);
        }
        return false;
    }

    /**
     * The sides the run may take victims from: other quotas of its pool with borrowers, one of which the rule could
     * allow (compared where the two meet in their tree). The rules allow more the higher the victim side's share after,
     * and that share is highest without the side's least victim (taken per resource): a side the rule does not allow
     * even then is not searched, nor its runs put in order.
     */
    private List<Side> sides(FairShares.Member mine, Resources request, FairShares shares) {
        if (victimsBySide == null) {
            // The quotas with borrowers, in the order of their first run by id (ties between sides never go by hash order).
            List<Map.Entry<QuotaId, QuotaBorrowers>> quotas = new ArrayList<>();
            for (Map.Entry<QuotaId, QuotaBorrowers> entry : state.borrowersByQuota().entrySet()) {
                if (book.exists(entry.getKey())) {
                    quotas.add(entry);
                }
            }
            quotas.sort(Comparator.comparing(entry -> entry.getValue().first));
            victimsBySide = new LinkedHashMap<>();
            for (Map.Entry<QuotaId, QuotaBorrowers> entry : quotas) {
                victimsBySide.put(shares.leafOf(entry.getKey()), new Borrowers(entry.getValue()));
            }
        }
        List<Side> sides = new ArrayList<>();
        for (Map.Entry<FairShares.Member, Borrowers> entry : victimsBySide.entrySet()) {
            FairShares.Member side = entry.getKey();
            if (side == mine || !side.pool.equals(mine.pool)) {
                continue;
            }
            FairShares.Member[] pair = belowCommonAncestor(mine, side);
            double ours = shares.share(pair[0], Resources.NONE);
            double oursAfter = shares.share(pair[0], request);
            double theirs = shares.share(pair[1], Resources.NONE);
            // Their share after is at most their share now: a side the rule refuses even then is not summed up.
            if (rule.allows(ours, oursAfter, theirs, theirs) && rule.allows(ours, oursAfter, theirs, shares.share(pair[1], entry.getValue().least(), -1))) {
                sides.add(new Side(side, entry.getValue()));
            }
        }
        return sides;
    }

    /** The members just below the lowest common ancestor of two members of one pool: {ours, theirs}. */
    static FairShares.Member[] belowCommonAncestor(FairShares.Member mine, FairShares.Member other) {
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


    /** Only a victim holding something on a node the run may use can help it. */
    private boolean onUsableNodes(ActiveRun active, Set<String> models) {
        for (Allocation allocation : active.allocations()) {
            if (cluster.hasNode(allocation.node()) && (models == null || models.contains(cluster.modelOf(allocation.node())))) {
                return true;
            }
        }
        return false;
    }
}
