package io.slipstream.scheduler;

import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Holds nodes, this cycle, for a gang that is next in line but does not fit yet. */
final class GangHold {
    private GangHold() {
    }

    /**
     * Nodes to hold for a run that is next in line but does not fit yet: the fullest-free nodes that could take its
     * instances once emptied. Their free capacity is taken away from everyone else this cycle, so that a stream of
     * small runs cannot keep a large one waiting forever.
     */
    static void holdFor(WorkingCluster cluster, List<InstanceRequest> instances, Set<String> models) {
        List<WorkingNode> candidates = new ArrayList<>();
        for (WorkingNode node : cluster.nodeList()) {
            if (node.schedulable && (models == null || models.contains(node.model))) {
                candidates.add(node);
            }
        }
        candidates.sort(Comparator.comparingInt(WorkingNode::freeGpuCount).reversed()
                .thenComparing(Comparator.comparingLong((WorkingNode n) -> n.freeMilliCpu).reversed())
                .thenComparingInt(n -> n.index));
        Map<Integer, Amount> planned = new HashMap<>();
        Set<WorkingNode> chosen = new LinkedHashSet<>();
        for (InstanceRequest instance : instances) {
            Resources need = instance.resources();
            for (WorkingNode node : candidates) {
                if (!WorkingCluster.allowed(node.model, need, models) || cluster.breaksAKeptWholeNode(node, need)) {
                    continue;
                }
                Amount used = planned.computeIfAbsent(node.index, i -> new Amount());
                if (used.milliCpu + need.milliCpu() <= node.capacity.milliCpu() && used.memory + need.memoryBytes() <= node.capacity.memoryBytes()
                        && used.gpu + need.gpu() <= node.capacity.gpu()) {
                    used.add(need, 1);
                    chosen.add(node);
                    break;
                }
            }
        }
        for (WorkingNode node : chosen) {
            // Only what the run will need there: the rest of the node stays usable by others.
            Amount need = planned.get(node.index);
            Resources held = new Resources(Math.max(0, Math.min(need.milliCpu, node.freeMilliCpu)),
                    Math.max(0, Math.min(need.memory, node.freeMemory)), (int) Math.min(need.gpu, node.freeGpuCount()), null);
            cluster.take(node, held);
        }
    }
}
