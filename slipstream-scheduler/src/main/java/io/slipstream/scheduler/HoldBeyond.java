package io.slipstream.scheduler;

import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/** What a run whose victims are still stopping is held beyond what they will give back. */
final class HoldBeyond {
    private HoldBeyond() {
    }

    /**
     * Holds a placement that was found with {@code freed} released, now that {@code freed} is held again (its
     * owners are still stopping): takes only what the placement needs beyond what {@code freed} will give back.
     */
    static List<Allocation> hold(WorkingCluster cluster, List<Placement> placements, List<InstanceRequest> instances, List<Allocation> freed) {
        Map<Integer, Resources> byRank = new HashMap<>();
        instances.forEach(r -> byRank.put(r.rank(), r.resources()));
        Map<String, Amount> need = new TreeMap<>();
        Map<String, Set<Integer>> needGpus = new HashMap<>();
        Map<String, Integer> freedGpuCount = new HashMap<>();
        for (Placement placement : placements) {
            need.computeIfAbsent(placement.node(), n -> new Amount()).add(byRank.get(placement.rank()), 1);
            needGpus.computeIfAbsent(placement.node(), n -> new TreeSet<>()).addAll(placement.gpus());
        }
        for (Allocation allocation : freed) {
            if (need.containsKey(allocation.node())) {
                need.get(allocation.node()).add(allocation.resources(), -1);
                freedGpuCount.merge(allocation.node(), allocation.gpus().size(), Integer::sum);
                needGpus.get(allocation.node()).removeAll(allocation.gpus());
            }
        }
        List<Allocation> taken = new ArrayList<>();
        for (var entry : need.entrySet()) {
            WorkingNode node = cluster.node(entry.getKey());
            Amount extra = entry.getValue();
            extra.clampAtZero();
            // The placement may have used free GPUs where the victims' own will do: hold only as many as it needs
            // beyond what the victims give back on this node.
            List<Integer> beyond = new ArrayList<>(needGpus.get(entry.getKey()));
            int count = Math.max(0, placementGpuCount(placements, entry.getKey()) - freedGpuCount.getOrDefault(entry.getKey(), 0));
            List<Integer> gpus = new ArrayList<>(beyond.subList(0, Math.min(count, beyond.size())));
            Resources amount = new Resources(extra.milliCpu, extra.memory, gpus.size(), null);
            cluster.takeExactly(node, amount, gpus);
            taken.add(new Allocation(-1, node.name, amount, gpus));
        }
        return taken;
    }

    private static int placementGpuCount(List<Placement> placements, String node) {
        int count = 0;
        for (Placement placement : placements) {
            if (placement.node().equals(node)) {
                count += placement.gpus().size();
            }
        }
        return count;
    }
}
