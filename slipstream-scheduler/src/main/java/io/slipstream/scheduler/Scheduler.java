package io.slipstream.scheduler;

import io.slipstream.api.spec.Resources;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;

/**
 * The scheduling core: a pure function of its input. No I/O, no clock reads, no randomness; ties are broken by
 * names and ids, never by hash order, so the same snapshot always gives the same decisions.
 *
 * <p>One cycle: order the pending runs (priority, then submission time, then id); for each, try to place every
 * instance on a working copy of the nodes (best fit: the node left with the fewest free GPUs, then the least free
 * cpu); admit the run if all instances fit, otherwise roll its tentative placements back (a gang is placed whole or
 * not at all) and record why it waits. Quotas, borrowing and reclaim build on this in their own step.
 */
public final class Scheduler {
    /** Queue order: higher priority first, then older, then by id. */
    public static final Comparator<PendingRun> QUEUE_ORDER = Comparator.comparingInt(PendingRun::priority).reversed()
            .thenComparing(PendingRun::createdAt)
            .thenComparing(PendingRun::id);

    public CycleResult schedule(ClusterSnapshot snapshot, Instant now) {
        List<WorkingNode> nodes = snapshot.nodes().stream()
                .sorted(Comparator.comparing(NodeState::name))
                .map(WorkingNode::new)
                .toList();
        List<PendingRun> queue = new ArrayList<>(snapshot.pending());
        queue.sort(QUEUE_ORDER);
        List<Decision> decisions = new ArrayList<>(queue.size());
        int position = 0;
        for (PendingRun run : queue) {
            List<Placement> placements = placeGang(run, nodes);
            if (placements != null) {
                decisions.add(new Decision.Admit(run.id(), placements));
            } else {
                decisions.add(whyWaiting(run, nodes, ++position));
            }
        }
        return new CycleResult(decisions);
    }

    /** Places all instances of the run or none: tentative takes are undone in reverse order on failure. */
    private static List<Placement> placeGang(PendingRun run, List<WorkingNode> nodes) {
        Deque<Runnable> undo = new ArrayDeque<>();
        List<Placement> placements = new ArrayList<>(run.instances().size());
        for (InstanceRequest instance : run.instances()) {
            WorkingNode node = bestFit(instance.resources(), nodes);
            if (node == null) {
                undo.forEach(Runnable::run);
                return null;
            }
            List<Integer> gpus = node.take(instance.resources());
            undo.push(() -> node.giveBack(instance.resources(), gpus));
            placements.add(new Placement(instance.rank(), node.name, gpus));
        }
        return placements;
    }

    private static WorkingNode bestFit(Resources request, List<WorkingNode> nodes) {
        WorkingNode best = null;
        for (WorkingNode node : nodes) {
            if (node.fitsNow(request) && (best == null || tighter(node, best))) {
                best = node;
            }
        }
        return best;
    }

    /** Packs GPU work densely so that whole nodes stay free for large instances; nodes are visited by name. */
    private static boolean tighter(WorkingNode candidate, WorkingNode best) {
        int byGpus = Integer.compare(candidate.freeGpus.cardinality(), best.freeGpus.cardinality());
        if (byGpus != 0) {
            return byGpus < 0;
        }
        return candidate.freeMilliCpu < best.freeMilliCpu;
    }

    private static Decision.Wait whyWaiting(PendingRun run, List<WorkingNode> nodes, int position) {
        for (InstanceRequest instance : run.instances()) {
            boolean anyNode = nodes.stream().anyMatch(node -> node.schedulable && node.couldEverFit(instance.resources()));
            if (!anyNode) {
                return new Decision.Wait(run.id(), "NoNodeFits",
                        "no node can ever hold instance " + instance.nodeGroup() + " (" + instance.resources() + ")", position);
            }
        }
        Resources total = Resources.NONE;
        for (InstanceRequest instance : run.instances()) {
            total = total.plus(instance.resources());
        }
        return new Decision.Wait(run.id(), "WaitingForResources",
                "waiting for free capacity for " + run.instances().size() + " instance(s), " + total + " in all", position);
    }
}
