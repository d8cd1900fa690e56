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
     * small runs cannot keep a large one waiting forever. A group that must be in one domain is held nodes in one: of
     * the domains of its level that could ever hold it on nodes of its models ({@link GroupCapacity}), the one with the
     * most free GPUs there (the same one cycle after cycle while its runs end, since what is held there stays free); a
     * group in slices, slice by slice, each in a domain of the slice level. Returns whether anything was held.
     */
    static boolean holdFor(WorkingCluster cluster, List<InstanceRequest> instances, Set<String> models) {
        List<WorkingNode> all = cluster.nodeList();
        if (!LocalityPlacement.applies(instances)) {
            return holdOn(cluster, all, instances, models);
        }
        Map<String, List<InstanceRequest>> bound = new TreeMap<>();
        List<InstanceRequest> rest = new ArrayList<>();
        for (InstanceRequest instance : instances) {
            Locality locality = instance.locality();
            if (locality != null && (locality.required() || locality.sliced())) {
                bound.computeIfAbsent(instance.nodeGroup(), g -> new ArrayList<>()).add(instance);
            } else {
                rest.add(instance);
            }
        }
        boolean held = false;
        for (List<InstanceRequest> group : bound.values()) {
            Locality locality = group.get(0).locality();
            List<WorkingNode> nodes = locality.required() ? roomiest(cluster.domainsAt(locality.level()), group, models) : all;
            if (nodes == null) {
                continue; // no domain could ever hold it on nodes it may use: holding any would only keep others out
            }
            if (!locality.sliced()) {
                held |= holdOn(cluster, nodes, group, models);
                continue;
            }
            List<InstanceRequest> byRank = new ArrayList<>(group);
            byRank.sort(Comparator.comparingInt(InstanceRequest::rank));
            for (int from = 0; from < byRank.size(); from += locality.sliceSize()) {
                List<InstanceRequest> slice = byRank.subList(from, Math.min(byRank.size(), from + locality.sliceSize()));
                List<WorkingNode> sliceNodes = roomiest(Domains.among(nodes, locality.sliceLevel()), slice, models);
                if (sliceNodes != null) {
                    held |= holdOn(cluster, sliceNodes, slice, models);
                }
            }
        }
        return holdOn(cluster, all, rest, models) | held;
    }

    /**
     * Of the domains, the nodes (of {@code models}) of the one that could ever hold the instances (as their placement
     * asks) with the most free GPUs, then cpu, on those nodes; the first in path order of equals; {@code null}: none could.
     */
    private static List<WorkingNode> roomiest(List<Domains.Domain> domains, List<InstanceRequest> instances, Set<String> models) {
        Resources least = GroupCapacity.least(instances);
        List<WorkingNode> best = null;
        long bestGpus = -1;
        long bestCpu = -1;
        for (Domains.Domain domain : domains) {
            List<WorkingNode> usable = new ArrayList<>(domain.nodes.size());
            long gpus = 0;
            long cpu = 0;
            for (WorkingNode node : domain.nodes) {
                if (GroupCapacity.fits(node, least, models, 1) > 0) {
                    usable.add(node);
                    gpus += node.freeGpuCount();
                    cpu += Math.max(0, node.freeMilliCpu);
                }
            }
            if ((gpus > bestGpus || (gpus == bestGpus && cpu > bestCpu)) && GroupCapacity.couldEverHold(instances, usable, models)) {
                best = usable;
                bestGpus = gpus;
                bestCpu = cpu;
            }
        }
        return best;
    }

    /** Holds, among {@code nodes}, the fullest-free ones that could take the instances once emptied; whether it held any. */
    private static boolean holdOn(WorkingCluster cluster, List<WorkingNode> nodes, List<InstanceRequest> instances, Set<String> models) {
        if (instances.isEmpty()) {
            return false;
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
        boolean any = false;
        for (WorkingNode node : chosen) {
            // Only what the run will need there: the rest of the node stays usable by others.
            Amount need = planned.get(node.index);
            Resources held = new Resources(Math.max(0, Math.min(need.milliCpu, node.freeMilliCpu)),
                    Math.max(0, Math.min(need.memory, node.freeMemory)), (int) Math.min(need.gpu, node.freeGpuCount()), null);
            any |= held.gpu() > 0 || held.milliCpu() > 0 || held.memoryBytes() > 0;
            cluster.take(node, held);
        }
        return any;
    }
}
