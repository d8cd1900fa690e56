package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.spec.Resources;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Step 3b of a cycle, defragmentation: for a guaranteed run with an instance of half a node or more that fits its
 * guarantee but no set of borrowers makes room for, which borrowers to reclaim and which smaller checkpointing
 * guaranteed runs to move (see {@link Defragmentation}). It plans on the cycle's working cluster in a tentative it
 * discards; the cycle applies a plan (preempts, holds) and keeps the move budget. One per cycle: the removable runs are
 * indexed once, when first needed.
 */
final class MovePlanner {
    /** The GPU models a guaranteed run of a quota may use for a request ({@code null}: any), as the cycle stands now. */
    interface GuaranteedModels {
        Set<String> of(QuotaId quota, Resources request);
    }

    /** What stops for a gang that only fragmentation blocks: borrowers reclaimed, and guaranteed runs moved. */
    record MovePlan(List<ActiveRun> reclaimed, List<ActiveRun> moved) {
    }

    /**
     * Moves cost one each, against the budget; reclaims cost nothing but break ties (fewer first). Only guaranteed runs
     * with fewer GPUs than the request are moved for it: one as large would need what its move frees, as hard to find
     * as the request's room (on a cluster of 1- and 4-GPU runs, a 4-GPU run moved for a 4-GPU half found no node).
     */
    private record MovesThenReclaims(int requestGpus) implements ClearingSearch.VictimCost {
        @Override
        public int cost(ActiveRun victim) {
            return victim.realTimeResources() == RealTimeResources.NotInQuota ? 0 : 1;
        }

        @Override
        public long tieBreak(ActiveRun victim) {
            return victim.realTimeResources() == RealTimeResources.NotInQuota ? 1 : 0;
        }

        @Override
        public boolean mayLeave(ActiveRun victim) {
            return victim.realTimeResources() == RealTimeResources.NotInQuota || victim.allocations().get(0).resources().gpu() < requestGpus;
        }
    }

    private final ClusterState state;
    private final WorkingCluster cluster;
    private final QuotaBook book;
    /** The cycle's runs that may still be preempted (live: the cycle removes those it preempts). */
    private final CycleRuns reclaimable;
    private final Defragmentation defragmentation;
    private final Instant now;
    private final GuaranteedModels models;
    /** The nodes (by name) and the runs that might leave each: borrowers first, then movable guaranteed runs. */
    private Map<String, List<ActiveRun>> removable;

    MovePlanner(ClusterState state, CycleRuns reclaimable, Defragmentation defragmentation, Instant now, GuaranteedModels models) {
        this.state = state;
        this.cluster = state.cluster;
        this.book = state.book;
        this.reclaimable = reclaimable;
        this.defragmentation = defragmentation;
        this.now = now;
        this.models = models;
    }

    /**
     * A guaranteed run that may be moved: its quota allows it, it has a checkpoint to resume from, it was not moved
     * within the cooldown, and it is one instance smaller than its node (moving it can clear a node).
     */
    boolean movable(ActiveRun run) {
        QuotaState quota = book.quota(run.quota());
        if (quota == null || !quota.allowMoves() || run.realTimeResources() != RealTimeResources.InQuota || run.stopping()
                || run.lastCheckpointAt() == null || run.allocations().size() != 1) {
            return false;
        }
        if (run.movedAt() != null && run.movedAt().plus(defragmentation.moveCooldown()).isAfter(now)) {
            return false;
        }
        Allocation allocation = run.allocations().get(0);
        WorkingNode node = cluster.node(allocation.node());
        return node != null && allocation.resources().gpu() > 0 && allocation.resources().gpu() < node.capacity.gpu();
    }

    private Map<String, List<ActiveRun>> removableByNode() {
        if (removable == null) {
            List<ActiveRun> reclaims = new ArrayList<>();
            List<ActiveRun> moves = new ArrayList<>();
            for (ActiveRun active : reclaimable) {
                if (active.realTimeResources() == RealTimeResources.NotInQuota) {
                    reclaims.add(active);
                } else if (movable(active)) {
                    moves.add(active);
                }
            }
            reclaims.sort(VictimSearch.VICTIM_ORDER);
            moves.sort(VictimSearch.VICTIM_ORDER);
            removable = new TreeMap<>(); // ties go by name, never by hash order
            for (List<ActiveRun> group : List.of(reclaims, moves)) {
                for (ActiveRun active : group) {
                    for (Allocation allocation : active.allocations()) {
                        List<ActiveRun> onNode = removable.computeIfAbsent(allocation.node(), n -> new ArrayList<>());
                        if (onNode.isEmpty() || onNode.get(onNode.size() - 1) != active) {
                            onNode.add(active);
                        }
                    }
                }
            }
        }
        return removable;
    }

    /**
     * For a guaranteed run that fits its guarantee but no set of borrowers makes room for: instance by instance
     * (largest first), the node that the fewest moves of smaller runs (then reclaims, then by name) clear enough, less
     * the runs it does not need gone; then every moved run must fit somewhere else (not where the gang goes). All of it
     * is tried on the working copy and undone.
     * Returns {@code null} when no plan within {@code budget} moves works.
     */
    MovePlan planMoves(PendingRun run, Set<String> model, int budget) {
        Map<String, List<ActiveRun>> byNode = removableByNode();
        if (byNode.isEmpty()) {
            return null;
        }
        List<ActiveRun> reclaimed = new ArrayList<>();
        List<ActiveRun> moved = new ArrayList<>();
        // Tried on the working cluster and undone: the cycle applies the plan.
        if (!state.tryAndUndo(() -> plan(run, model, budget, byNode, reclaimed, moved))) {
            return null;
        }
        if (moved.isEmpty()) {
            return null; // without moves the reclaim alone was tried already
        }
        reclaimed.sort(VictimSearch.VICTIM_ORDER);
        moved.sort(VictimSearch.VICTIM_ORDER);
        return new MovePlan(reclaimed, moved);
    }

    /**
     * Plans on the working cluster (the caller undoes it): the gang's instances placed, clearing nodes where they fit
     * nowhere ({@code reclaimed} and {@code moved} get the runs that leave), then each moved run placed elsewhere.
     * Returns whether it all fits within the budget.
     */
    private boolean plan(PendingRun run, Set<String> model, int budget, Map<String, List<ActiveRun>> byNode, List<ActiveRun> reclaimed,
            List<ActiveRun> moved) {
        Set<ActiveRun> gone = Collections.newSetFromMap(new IdentityHashMap<>());
        Set<String> gangNodes = new HashSet<>();
        for (InstanceRequest instance : WorkingCluster.largestFirst(run.instances())) {
            WorkingNode node = cluster.bestFit(instance.resources(), model);
            if (node == null) {
                List<ActiveRun> clearing = new ArrayList<>();
                node = cheapestToClear(instance.resources(), model, byNode, gone, budget - moved.size(), clearing, Set.of());
                if (node == null) {
                    return false;
                }
                clearing.forEach(leaving -> leaving.allocations().forEach(cluster::release));
                // The search takes the node's runs in victim order until the instance fits: the last one taken may
                // free enough alone. Those it does not need stay (newest taken first), so each moved run is needed
                // and could not fit back where it was.
                for (int i = clearing.size() - 1; i >= 0; i--) {
                    ActiveRun leaving = clearing.get(i);
                    leaving.allocations().forEach(cluster::hold);
                    if (node.fitsNow(instance.resources())) {
                        clearing.remove(i);
                    } else {
                        leaving.allocations().forEach(cluster::release);
                    }
                }
                if (!cluster.mayTake(node, instance.resources(), model)) {
                    return false; // a node it emptied is one of the whole nodes kept for the queue's gangs
                }
                for (ActiveRun leaving : clearing) {
                    gone.add(leaving);
                    (leaving.realTimeResources() == RealTimeResources.NotInQuota ? reclaimed : moved).add(leaving);
                }
            }
            cluster.take(node, instance.resources());
            gangNodes.add(node.name);
        }
        for (ActiveRun moving : moved) {
            Allocation from = moving.allocations().get(0);
            Set<String> allowed = models.of(moving.quota(), from.resources());
            WorkingNode to = cluster.bestFit(from.resources(), allowed, moving.quota());
            if (to == null) {
                // On a busy cluster there is no free GPU, but borrowers elsewhere: the moved run, guaranteed,
                // reclaims them once it is queued again. They stay until then (not chosen here).
                List<ActiveRun> clearing = new ArrayList<>();
                to = cheapestToClear(from.resources(), allowed, byNode, gone, 0, clearing, gangNodes);
                for (ActiveRun leaving : clearing) {
                    gone.add(leaving);
                    leaving.allocations().forEach(cluster::release);
                }
            }
            if (to == null) {
                return false;
            }
            cluster.take(to, from.resources());
        }
        return true;
    }

    /**
     * The node that the fewest moves, then the fewest reclaims (ties: by name), clear enough for the request, at
     * most {@code budget} moves, not one of {@code excluded}; the runs that must leave it are added to {@code clearing}.
     */
    private WorkingNode cheapestToClear(Resources request, Set<String> model, Map<String, List<ActiveRun>> byNode, Set<ActiveRun> gone, int budget,
            List<ActiveRun> clearing, Set<String> excluded) {
        return ClearingSearch.cheapest(cluster, request, model, byNode.keySet(), byNode, gone, reclaimable, new MovesThenReclaims(request.gpu()),
                budget, excluded, clearing);
    }
}
