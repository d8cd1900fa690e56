package io.slipstream.scheduler;

import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;

/**
 * What one preemptor of {@link FairPreemption} takes of elastic runs' extras on idle capacity before it stops any run
 * whole (docs/elastic.md). The extras ("units", one live instance each, of other quotas of its pool, on nodes it may
 * use) are taken as victims are: from the side with the highest share, each the first in its side's order (its runs in
 * {@link VictimSearch#VICTIM_ORDER}, a run's highest rank first) that the rule allows; a unit the rule refuses it never
 * allows later (the side's share only falls). Whole runs the search then stops are seen without their units taken; once
 * the preemptor fits, each unit it fits without is put back, the last first. Works inside the preemptor's trial: the
 * cluster, the book and the shares are changed as units go and come back.
 */
final class FairExtras {
    private record Unit(ActiveRun run, Allocation allocation, FairShares.Member leaf) {
    }

    /** A quota side's units in the order they are taken; those before {@code next} are taken or never allowed. */
    private static final class Side {
        final FairShares.Member member;
        final List<Unit> units = new ArrayList<>();
        int next;

        Side(FairShares.Member member) {
            this.member = member;
        }
    }

    private final ClusterState state;
    private final CycleRuns reclaimable;
    private final FairPreemption.Rule rule;
    private final FairShares shares;
    private final FairShares.Member mine;
    private final List<Side> sides = new ArrayList<>();
    /** The units taken, in the order taken. */
    private final List<Unit> taken = new ArrayList<>();
    /** What is taken of each run (looked up only, never walked). */
    private final Map<RunId, Resources> takenOf = new HashMap<>();
    private final Set<Allocation> takenAllocations = new HashSet<>();

    /** The units a preemptor counted at {@code mine}, placed on nodes of {@code models}, may take. */
    FairExtras(ClusterState state, CycleRuns reclaimable, FairPreemption.Rule rule, FairShares shares, FairShares.Member mine, Set<String> models) {
        this.state = state;
        this.reclaimable = reclaimable;
        this.rule = rule;
        this.shares = shares;
        this.mine = mine;
        if (state.elastic.isEmpty()) {
            return;
        }
        List<ActiveRun> runs = new ArrayList<>();
        // Sides in the order of their first run by id (the runs come in id order; ties between sides never go by hash
        // order), as FairPreemption's.
        Map<FairShares.Member, Side> byLeaf = new LinkedHashMap<>();
        for (ActiveRun run : reclaimable.elastic()) {
            FairShares.Member leaf = run.quota() == null || !state.book.exists(run.quota()) ? null : shares.leafOf(run.quota());
            if (leaf != null && leaf != mine && leaf.pool.equals(mine.pool) && !run.shrinkable().isEmpty()) {
                runs.add(run);
                byLeaf.computeIfAbsent(leaf, Side::new);
            }
        }
        runs.sort(VictimSearch.VICTIM_ORDER);
        WorkingCluster cluster = state.cluster;
        for (ActiveRun run : runs) {
            FairShares.Member leaf = shares.leafOf(run.quota());
            for (Allocation allocation : run.shrinkable()) {
                if (cluster.hasNode(allocation.node()) && (models == null || models.contains(cluster.modelOf(allocation.node())))) {
                    byLeaf.get(leaf).units.add(new Unit(run, allocation, leaf));
                }
            }
        }
        byLeaf.values().forEach(side -> {
            if (!side.units.isEmpty()) {
                sides.add(side);
            }
        });
    }

    boolean isEmpty() {
        return sides.isEmpty();
    }

    /**
     * Takes the first unit the rule allows from the side with the highest share (a side none of whose units it allows is
     * dropped); returns whether one was taken.
     */
    boolean takeOne(Resources request) {
        while (!sides.isEmpty()) {
            Side target = null;
            FairShares.Member ours = null;
            FairShares.Member theirs = null;
            double highest = Double.NEGATIVE_INFINITY;
            for (Side side : sides) {
                FairShares.Member[] pair = FairPreemption.belowCommonAncestor(mine, side.member);
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
            for (; target.next < target.units.size(); target.next++) {
                Unit unit = target.units.get(target.next);
                Resources holds = unit.allocation().resources();
                if (reclaimable.contains(unit.run()) && rule.allows(preemptorBefore, preemptorAfter, highest, shares.share(theirs, holds, -1))) {
                    target.next++;
                    state.cluster.release(unit.allocation());
                    state.book.charge(unit.run().quota(), holds, RealTimeResources.NotInQuota, -1);
                    shares.charge(unit.leaf(), holds, -1);
                    taken.add(unit);
                    takenOf.merge(unit.run().id(), holds, Resources::plus);
                    takenAllocations.add(unit.allocation());
                    return true;
                }
            }
            sides.remove(target);
        }
        return false;
    }

    /** What of a run stopped whole is not taken already: what its stop still frees and uncharges. */
    Resources left(ActiveRun run, Resources holds) {
        Resources gone = takenOf.isEmpty() ? null : takenOf.get(run.id());
        return gone == null ? holds : holds.minus(gone);
    }

    /** The run's allocations not taken already. */
    List<Allocation> leftAllocations(ActiveRun run) {
        if (takenOf.isEmpty() || !takenOf.containsKey(run.id())) {
            return run.allocations();
        }
        List<Allocation> left = new ArrayList<>();
        for (Allocation allocation : run.allocations()) {
            if (!takenAllocations.contains(allocation)) {
                left.add(allocation);
            }
        }
        return left;
    }

    boolean tookAny() {
        return !taken.isEmpty();
    }

    /**
     * Gives the units taken back to the shares and takes no more (a tentative undoes the cluster and the book): what is
     * stopped from now on is stopped whole, as without elastic runs.
     */
    void undo() {
        taken.forEach(unit -> shares.charge(unit.leaf(), unit.allocation().resources(), 1));
        taken.clear();
        takenOf.clear();
        takenAllocations.clear();
        sides.clear();
    }

    /** Puts back, the last first, each unit the preemptor fits without ({@code fits}); those of runs stopped whole go with them. */
    void putBack(Set<RunId> stoppedWhole, BooleanSupplier fits) {
        for (int i = taken.size() - 1; i >= 0; i--) {
            Unit unit = taken.get(i);
            if (stoppedWhole.contains(unit.run().id())) {
                continue;
            }
            Resources holds = unit.allocation().resources();
            try (Tentative putBack = state.tentative()) {
                state.cluster.hold(unit.allocation());
                state.book.charge(unit.run().quota(), holds, RealTimeResources.NotInQuota, 1);
                if (fits.getAsBoolean()) {
                    putBack.commit();
                    shares.charge(unit.leaf(), holds, 1);
                    taken.remove(i); // not needed: it stays
                }
            }
        }
    }

    /** The runs to shrink and the instances each loses, in the order taken (of runs not stopped whole). */
    Map<ActiveRun, List<Allocation>> shrinks(Set<RunId> stoppedWhole) {
        Map<ActiveRun, List<Allocation>> shrinks = new LinkedHashMap<>();
        for (Unit unit : taken) {
            if (!stoppedWhole.contains(unit.run().id())) {
                shrinks.computeIfAbsent(unit.run(), r -> new ArrayList<>()).add(unit.allocation());
            }
        }
        return shrinks;
    }
}
