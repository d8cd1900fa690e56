package io.slipstream.scheduler;

import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/** Holds nodes, this cycle, for a gang that is next in line but does not fit yet. */
final class GangHold {
    private GangHold() {
    }

    /**
     * Nodes to hold for a run that is next in line but does not fit yet: the fullest-free nodes that could take its
     * instances once emptied. Their free capacity is taken away from everyone else this cycle, so that a stream of
     * small runs cannot keep a large one waiting forever. A group that must be in one domain is held nodes in one: the
     * domain of its level with the most free GPUs that could ever hold it (the same one cycle after cycle while its
     * runs end, since what is held there stays free), so that small runs cannot keep every domain fragmented.
     */
    static void holdFor(WorkingCluster cluster, List<InstanceRequest> instances, Set<String> models) {
        List<WorkingNode> all = cluster.nodeList();
        if (!LocalityPlacement.applies(instances)) {
            holdOn(cluster, all, instances, models);
            return;
        }
        Map<String, List<InstanceRequest>> bound = new TreeMap<>();
        List<InstanceRequest> rest = new ArrayList<>();
        for (InstanceRequest instance : instances) {
            if (instance.locality() != null && instance.locality().required()) {
                bound.computeIfAbsent(instance.nodeGroup(), g -> new ArrayList<>()).add(instance);
            } else {
                rest.add(instance);
            }
        }
        for (List<InstanceRequest> group : bound.values()) {
            Domains.Domain domain = roomiest(cluster, group);
            if (domain != null) {
                holdOn(cluster, domain.nodes, group, models);
            }
        }
        holdOn(cluster, all, rest, models);
    }

    /** The domain of the group's level with the most free GPUs (then cpu, then by path) that could ever hold it. */
    private static Domains.Domain roomiest(WorkingCluster cluster, List<InstanceRequest> group) {
        Amount need = LocalityPlacement.need(group);
        Domains.Domain best = null;
        for (Domains.Domain domain : cluster.domainsAt(group.get(0).locality().level())) {
            Amount capacity = domain.capacity;
            boolean couldHold = capacity.milliCpu >= need.milliCpu && capacity.memory >= need.memory && capacity.gpu >= need.gpu;
            if (couldHold && (best == null || domain.freeGpus > best.freeGpus || (domain.freeGpus == best.freeGpus && domain.freeMilliCpu > best.freeMilliCpu))) {
                best = domain; // in path order: the first of equals stays
            }
        }
        return best;
    }

    /** Holds, among {@code nodes}, the fullest-free ones that could take the instances once emptied. */
    private static void holdOn(WorkingCluster cluster, List<WorkingNode> nodes, List<InstanceRequest> instances, Set<String> models) {
        if (instances.isEmpty()) {
            return;
        }
        List<WorkingNode> candidates = new ArrayList<>();
        for (WorkingNode node : nodes) {
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
