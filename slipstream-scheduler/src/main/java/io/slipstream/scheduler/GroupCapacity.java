package io.slipstream.scheduler;

import io.slipstream.api.spec.Resources;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Whether some nodes, empty, could ever hold a node group as its placement asks: counted node by node (how many of
 * its instances each node's capacity takes), and for a group in slices, slice-level domain by domain (how many whole
 * slices each takes). A node group's instances all ask the same; for safety the least of each resource is counted,
 * so that "never" is never said of a group that could fit (at worst it waits).
 */
final class GroupCapacity {
    private GroupCapacity() {
    }

    /** Whether {@code nodes}, empty, could hold the whole group; only nodes of {@code models} count ({@code null}: any). */
    static boolean couldEverHold(List<InstanceRequest> group, List<WorkingNode> nodes, Set<String> models) {
        Locality locality = group.get(0).locality();
        Resources least = least(group);
        if (locality == null || !locality.sliced()) {
            long held = 0;
            for (WorkingNode node : nodes) {
                held += fits(node, least, models, group.size());
                if (held >= group.size()) {
                    return true;
                }
            }
            return false;
        }
        return slices(nodes, least, models, locality) >= group.size() / locality.sliceSize();
    }

    /** How many whole slices the nodes could ever hold, each in one domain of the slice level. */
    static long slices(List<WorkingNode> nodes, Resources instance, Set<String> models, Locality locality) {
        Map<Domains.Domain, Long> instances = new IdentityHashMap<>();
        for (WorkingNode node : nodes) {
            Domains.Domain domain = locality.sliceLevel() < node.domains.length ? node.domains[locality.sliceLevel()] : null;
            if (domain != null) {
                instances.merge(domain, (long) fits(node, instance, models, Integer.MAX_VALUE), Long::sum);
            }
        }
        long slices = 0;
        for (long count : instances.values()) {
            slices += count / locality.sliceSize();
        }
        return slices;
    }

    /** How many instances of this shape the node, empty, could hold (at most {@code cap}). */
    static int fits(WorkingNode node, Resources instance, Set<String> models, int cap) {
        if (!node.schedulable || !WorkingCluster.allowed(node.model, instance, models)) {
            return 0;
        }
        long count = cap;
        count = Math.min(count, per(node.capacity.milliCpu(), instance.milliCpu()));
        count = Math.min(count, per(node.capacity.memoryBytes(), instance.memoryBytes()));
        count = Math.min(count, per(node.capacity.gpu(), instance.gpu()));
        return (int) count;
    }

    private static long per(long capacity, long each) {
        return each <= 0 ? Long.MAX_VALUE : capacity / each;
    }

    /** The least the group's instances ask of each resource, with their GPU model. */
    static Resources least(List<InstanceRequest> group) {
        long cpu = Long.MAX_VALUE;
        long memory = Long.MAX_VALUE;
        int gpus = Integer.MAX_VALUE;
        for (InstanceRequest instance : group) {
            cpu = Math.min(cpu, instance.resources().milliCpu());
            memory = Math.min(memory, instance.resources().memoryBytes());
            gpus = Math.min(gpus, instance.resources().gpu());
        }
        return new Resources(cpu, memory, gpus, group.get(0).resources().gpuModel());
    }
}
