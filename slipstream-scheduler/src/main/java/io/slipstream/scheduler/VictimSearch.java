package io.slipstream.scheduler;

import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.WithinQuota;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Step 3a of a cycle, reclaim: the fewest runs whose removal lets a guaranteed run fit, for a run that fits its
 * guarantee but not the free nodes. Candidates are the borrowers, and with {@code withinQuota: LowerPriority} also its
 * quota's lower-priority guaranteed runs. The choice is node-targeted (for each instance that fits nowhere, the node
 * the fewest victims clear, found by {@link ClearingSearch}); for a gang it can miss, an exhaustive one in victim order
 * follows; then each victim the run fits without is put back. All of it is tried in a {@link Tentative} on the
 * cycle's working cluster and discarded: the cycle decides what to preempt and to hold. One per cycle: the borrowers
 * are indexed once, when first needed.
 */
final class VictimSearch {
    /**
     * Victims go in this order: lowest priority, then least work lost (the latest work start: the last checkpoint,
     * or the start), then youngest, then id.
     */
    static final Comparator<ActiveRun> VICTIM_ORDER = VictimSearch::inVictimOrder;

    // Written out, as the queue order (Scheduler.QUEUE_ORDER says why).
    private static int inVictimOrder(ActiveRun a, ActiveRun b) {
        if (a.priority() != b.priority()) {
            return a.priority() < b.priority() ? -1 : 1;
        }
        int byWork = b.workSince().compareTo(a.workSince());
        if (byWork != 0) {
            return byWork;
        }
        int byStart = b.startedAt().compareTo(a.startedAt());
        return byStart != 0 ? byStart : a.id().compareTo(b.id());
    }

    private final ClusterState state;
    private final WorkingCluster cluster;
    private final QuotaBook book;
    /** The cycle's runs that may still be preempted (live: the cycle removes those it preempts or promotes). */
    private final CycleRuns reclaimable;
    /** Runs (by what they need and where) that nothing reclaimable could make room for, this cycle. */
    private final Set<String> hopeless = new HashSet<>();
    /** The cycle's borrowers as victim candidates, built when a first run needs them. */
    private VictimIndex borrowers;

    VictimSearch(ClusterState state, QuotaBook book, CycleRuns reclaimable) {
        this.state = state;
        this.cluster = state.cluster;
        this.book = book;
        this.reclaimable = reclaimable;
    }

    /**
     * The fewest victims, in victim order, whose removal lets the run fit on nodes of {@code model}: removed one by one
     * until it fits, then each is put back if the run still fits without its removal. Runs already stopping for it
     * count as removed. Returns an empty list when the already stopping ones suffice, {@code null} when nothing helps.
     */
    List<ActiveRun> choose(PendingRun run, Set<String> model, List<ActiveRun> alreadyStopping) {
        PendingRun compact = LocalityPlacement.asRequired(run);
        if (compact == run) {
            return chooseFor(run, model, alreadyStopping);
        }
        // A gang that prefers a domain gets one when reclaiming makes room in one at no more victims than anywhere:
        // borrowers chosen node by node free nodes here and there, and the gang would then be spread for its whole run.
        List<ActiveRun> anywhere = chooseFor(run, model, alreadyStopping);
        List<ActiveRun> inOne = anywhere == null ? null : chooseFor(compact, model, alreadyStopping);
        return inOne != null && inOne.size() <= anywhere.size() ? inOne : anywhere;
    }

    /**
     * As {@link #choose}, among the given candidates only (in victim order; views of runs without some instances, which
     * a search of elastic extras took first, are allowed): nothing is kept between calls.
     */
    List<ActiveRun> choose(PendingRun run, Set<String> model, List<ActiveRun> alreadyStopping, List<ActiveRun> candidates) {
        VictimIndex index = indexOf(candidates);
        PendingRun compact = LocalityPlacement.asRequired(run);
        List<ActiveRun> anywhere = chooseAmong(run, model, alreadyStopping, index);
        if (compact == run || anywhere == null) {
            return anywhere;
        }
        List<ActiveRun> inOne = chooseAmong(compact, model, alreadyStopping, index);
        return inOne != null && inOne.size() <= anywhere.size() ? inOne : anywhere;
    }

    private List<ActiveRun> chooseAmong(PendingRun run, Set<String> model, List<ActiveRun> alreadyStopping, VictimIndex index) {
        List<ActiveRun> removed = state.tryAndUndo(() -> fewest(run, model, alreadyStopping, index));
        if (removed == null) {
            return null;
        }
        removed.sort(VICTIM_ORDER);
        return removed.isEmpty() && alreadyStopping.isEmpty() ? null : removed;
    }

    /** The runs that may be stopped whole for {@code run}, in victim order: borrowers, and with LowerPriority its quota's lower-priority runs. */
    List<ActiveRun> candidatesFor(PendingRun run, Set<String> model) {
        return lowerPriorityPreemption(run) ? candidates(run, model) : borrowerIndex().ordered();
    }

    private List<ActiveRun> chooseFor(PendingRun run, Set<String> model, List<ActiveRun> alreadyStopping) {
        boolean lowerPriority = lowerPriorityPreemption(run);
        // Free capacity only shrinks during a cycle, so a shape nothing could make room for stays so. Runs that may
        // also preempt within their quota have candidates of their own.
        String shape = model + ":" + run.instances().stream().map(r -> r.resources().toString()).sorted().toList()
                + (lowerPriority ? ":" + run.quota() + ":" + run.priority() : "") + LocalityPlacement.key(run.instances());
        if (alreadyStopping.isEmpty() && hopeless.contains(shape)) {
            return null;
        }
        VictimIndex index = lowerPriority ? indexOf(candidates(run, model)) : borrowerIndex();
        // Tried on the working cluster and undone: the cycle decides what to preempt and what to hold.
        List<ActiveRun> removed = state.tryAndUndo(() -> fewest(run, model, alreadyStopping, index));
        if (removed == null) {
            if (alreadyStopping.isEmpty()) {
                hopeless.add(shape);
            }
            return null;
        }
        removed.sort(VICTIM_ORDER);
        return removed.isEmpty() && alreadyStopping.isEmpty() ? null : removed;
    }

    /**
     * With the runs already stopping gone: victims whose removal lets the run fit, less each the run fits without (put
     * back newest choice first); {@code null} when none do. The victims are left removed.
     */
    private List<ActiveRun> fewest(PendingRun run, Set<String> model, List<ActiveRun> alreadyStopping, VictimIndex index) {
        release(alreadyStopping);
        List<ActiveRun> removed = fits(run, model) ? new ArrayList<>() : targetVictims(run, model, index);
        if (removed == null && run.instances().size() > 1) {
            // The node-by-node choice can miss an assignment for a gang; the exhaustive one cannot. (One instance: no
            // node can be cleared enough for it, so no set of victims helps.)
            removed = inVictimOrder(run, model, index.usable(this, model));
        }
        if (removed == null) {
            return null;
        }
        for (int i = removed.size() - 1; i >= 0; i--) {
            try (Tentative putBack = state.tentative()) {
                removed.get(i).allocations().forEach(cluster::hold);
                if (fits(run, model)) {
                    putBack.commit();
                    removed.remove(i); // not needed: it stays
                }
            }
        }
        return removed;
    }

    /** Whether the run's quota lets it preempt its own lower-priority guaranteed runs. */
    private boolean lowerPriorityPreemption(PendingRun run) {
        QuotaState quota = book.quota(run.quota());
        return quota != null && quota.withinQuota() == WithinQuota.LowerPriority;
    }

    /** Runs that may be preempted for {@code run}: borrowers, and its quota's lower-priority guaranteed runs. */
    private List<ActiveRun> candidates(PendingRun run, Set<String> model) {
        List<ActiveRun> candidates = new ArrayList<>();
        for (ActiveRun active : reclaimable) {
            boolean borrower = active.realTimeResources() == RealTimeResources.NotInQuota;
            boolean lowerInOwnQuota = run.quota().equals(active.quota()) && active.realTimeResources() == RealTimeResources.InQuota
                    && active.priority() < run.priority();
            if ((borrower || lowerInOwnQuota) && onUsableNodes(active, model)) {
                candidates.add(active);
            }
        }
        candidates.sort(VICTIM_ORDER);
        return candidates;
    }

    /** Every borrower of the cycle in victim order, indexed by node: built once, filtered as victims are chosen. */
    private VictimIndex borrowerIndex() {
        if (borrowers == null) {
            List<ActiveRun> all = new ArrayList<>();
            for (ActiveRun active : reclaimable.borrowers()) {
                if (active.realTimeResources() == RealTimeResources.NotInQuota) {
                    all.add(active);
                }
            }
            all.sort(VICTIM_ORDER);
            borrowers = indexOf(all);
        }
        return borrowers;
    }

    private static VictimIndex indexOf(List<ActiveRun> ordered) {
        Map<ActiveRun, Integer> rank = new IdentityHashMap<>(); // records hash every allocation: identity is enough
        Map<String, List<ActiveRun>> byNode = new HashMap<>();
        for (int i = 0; i < ordered.size(); i++) {
            ActiveRun candidate = ordered.get(i);
            rank.put(candidate, i);
            for (Allocation allocation : candidate.allocations()) {
                List<ActiveRun> onNode = byNode.computeIfAbsent(allocation.node(), n -> new ArrayList<>());
                if (onNode.isEmpty() || onNode.get(onNode.size() - 1) != candidate) {
                    onNode.add(candidate); // in victim order, as the list is
                }
            }
        }
        List<String> nodes = new ArrayList<>(byNode.keySet());
        nodes.sort(Comparator.naturalOrder()); // ties go by name, never by hash order
        return new VictimIndex(ordered, rank, byNode, nodes);
    }

    /**
     * Victims node by node, which keeps the choice cheap on a cluster full of small borrowers: for each instance
     * (largest first) that fits nowhere, the node where the fewest victims (then the earliest in victim order) make
     * room; they are removed and the instance is held there while the next is placed. Returns the victims, removed,
     * if the run fits without them, else {@code null} (nothing changed).
     */
    private List<ActiveRun> targetVictims(PendingRun run, Set<String> model, VictimIndex index) {
        List<ActiveRun> removed = new ArrayList<>();
        boolean placed = state.tryAndUndo(() -> { // the instances held on the way are undone, and the victims with them
            Set<ActiveRun> gone = Collections.newSetFromMap(new IdentityHashMap<>());
            for (InstanceRequest instance : WorkingCluster.largestFirst(run.instances())) {
                WorkingNode node = cluster.bestFit(instance.resources(), model);
                if (node == null) {
                    node = cheapestNode(instance.resources(), model, index, gone);
                    if (node == null) {
                        return false;
                    }
                    for (ActiveRun victim : index.byNode().get(node.name)) {
                        if (node.fitsNow(instance.resources())) {
                            break;
                        }
                        if (reclaimable.contains(victim) && gone.add(victim)) {
                            victim.allocations().forEach(cluster::release);
                            removed.add(victim);
                        }
                    }
                }
                cluster.take(node, instance.resources());
            }
            return true;
        });
        if (!placed) {
            return null;
        }
        // The victims alone: does the run fit where they were, as it is placed for real?
        try (Tentative victims = state.tentative()) {
            release(removed);
            if (!fits(run, model)) {
                return null;
            }
            victims.commit();
            return removed;
        }
    }

    /**
     * Candidates removed one by one in victim order until the run fits; {@code null} (nothing changed) if it would
     * not fit even with all of them gone.
     */
    private List<ActiveRun> inVictimOrder(PendingRun run, Set<String> model, List<ActiveRun> candidates) {
        if (!state.tryAndUndo(() -> {
            release(candidates);
            return fits(run, model);
        })) {
            return null; // no victim is worth choosing
        }
        List<ActiveRun> removed = new ArrayList<>();
        for (ActiveRun candidate : candidates) {
            candidate.allocations().forEach(cluster::release);
            removed.add(candidate);
            if (fits(run, model)) {
                break;
            }
        }
        return removed;
    }

    /** The node where the fewest victims (ties: the earliest in victim order) would make room for the request. */
    private WorkingNode cheapestNode(Resources request, Set<String> model, VictimIndex index, Set<ActiveRun> gone) {
        ClearingSearch.VictimCost cost = new ClearingSearch.VictimCost() {
            @Override
            public int cost(ActiveRun victim) {
                return 1;
            }

            @Override
            public long tieBreak(ActiveRun victim) {
                return index.rank().get(victim);
            }
        };
        return ClearingSearch.cheapest(cluster, request, model, index.nodes(), index.byNode(), gone, reclaimable, cost, Integer.MAX_VALUE, Set.of(), null);
    }

    /** Whether the gang could be placed now (tried and undone). */
    private boolean fits(PendingRun run, Set<String> model) {
        return state.tryAndUndo(() -> cluster.placeGang(run.instances(), model) != null);
    }

    private void release(Collection<ActiveRun> runs) {
        runs.forEach(r -> r.allocations().forEach(cluster::release));
    }

    /** Only a victim holding something on a node the run may use can help it. */
    private boolean onUsableNodes(ActiveRun active, Set<String> models) {
        return active.allocations().stream().anyMatch(a -> cluster.hasNode(a.node()) && (models == null || models.contains(cluster.modelOf(a.node()))));
    }

    /** Victim candidates in victim order, their rank in it, and by node (each in victim order too). */
    private record VictimIndex(List<ActiveRun> ordered, Map<ActiveRun, Integer> rank, Map<String, List<ActiveRun>> byNode, List<String> nodes) {
        /** Those still reclaimable that hold something on a node of the allowed models, in victim order. */
        List<ActiveRun> usable(VictimSearch search, Set<String> models) {
            List<ActiveRun> usable = new ArrayList<>();
            for (ActiveRun run : ordered) {
                if (search.reclaimable.contains(run) && search.onUsableNodes(run, models)) {
                    usable.add(run);
                }
            }
            return usable;
        }
    }
}
