package io.slipstream.scheduler;

import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The one search for the node that is cheapest to clear for a request: on each candidate node, the runs that may
 * leave it are taken in their order (runs already gone, or no longer removable, skipped) until the request fits; the
 * node whose leavers cost least wins, then the one whose leavers tie-break least, then the first in the candidates'
 * order (by name). What a leaver costs depends on what kind of victim it is ({@link VictimCost}): a reclaim for the
 * borrower search, a move (reclaims only breaking ties) for the move planner. Pure: it reads the working cluster only.
 */
final class ClearingSearch {
    /** What making a run leave its node costs: {@code cost} is bounded by a budget, {@code tieBreak} only orders ties. */
    interface VictimCost {
        int cost(ActiveRun victim);

        long tieBreak(ActiveRun victim);

        /** Whether the run may leave its node at all for this search (runs it may not are passed over). */
        default boolean mayLeave(ActiveRun victim) {
            return true;
        }
    }

    private ClearingSearch() {
    }

    /**
     * The cheapest node among {@code nodes} (in that order; each with its candidate leavers in {@code byNode}) that
     * leavers costing at most {@code budget} in all clear enough for {@code request}, not one of {@code excluded}.
     * The leavers of the chosen node are added to {@code clearing} when it is not {@code null}. Returns {@code null}
     * when no node can be cleared within the budget.
     */
    static WorkingNode cheapest(WorkingCluster cluster, Resources request, Set<String> model, Iterable<String> nodes, Map<String, List<ActiveRun>> byNode,
            Set<ActiveRun> gone, CycleRuns removable, VictimCost cost, int budget, Set<String> excluded, List<ActiveRun> clearing) {
        WorkingNode best = null;
        long bestCost = Long.MAX_VALUE;
        long bestTie = Long.MAX_VALUE;
        List<ActiveRun> bestRuns = List.of();
        for (String name : nodes) {
            WorkingNode node = cluster.node(name);
            if (node == null || !node.schedulable || !WorkingCluster.allowed(node.model, request, model) || !node.couldEverFit(request)
                    || excluded.contains(name)) {
                continue;
            }
            long cpu = node.freeMilliCpu;
            long memory = node.freeMemory;
            long gpus = node.freeGpuCount();
            long spent = 0;
            long tie = 0;
            List<ActiveRun> runs = clearing == null ? null : new ArrayList<>();
            for (ActiveRun leaving : byNode.get(name)) {
                if (cpu >= request.milliCpu() && memory >= request.memoryBytes() && gpus >= request.gpu()) {
                    break;
                }
                if (gone.contains(leaving) || !removable.contains(leaving) || !cost.mayLeave(leaving)) {
                    continue;
                }
                for (Allocation allocation : leaving.allocations()) {
                    if (allocation.node().equals(name)) {
                        cpu += allocation.resources().milliCpu();
                        memory += allocation.resources().memoryBytes();
                        gpus += allocation.gpus().size();
                    }
                }
                spent += cost.cost(leaving);
                tie += cost.tieBreak(leaving);
                if (runs != null) {
                    runs.add(leaving);
                }
                if (spent > budget || spent > bestCost) {
                    break;
                }
            }
            boolean fits = cpu >= request.milliCpu() && memory >= request.memoryBytes() && gpus >= request.gpu();
            if (fits && spent <= budget && (spent < bestCost || (spent == bestCost && tie < bestTie))) {
                best = node;
                bestCost = spent;
                bestTie = tie;
                bestRuns = runs;
            }
        }
        if (clearing != null) {
            clearing.addAll(bestRuns);
        }
        return best;
    }
}
