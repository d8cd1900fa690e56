package io.slipstream.simulator.engine;

import io.slipstream.api.spec.Resources;
import io.slipstream.scheduler.Allocation;
import io.slipstream.scheduler.InstanceRequest;
import io.slipstream.scheduler.Locality;
import io.slipstream.scheduler.NodeState;
import io.slipstream.simulator.input.PlacementRule;
import io.slipstream.simulator.input.TopologyLevel;
import io.slipstream.simulator.input.TraceJob;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The simulated cluster's domains, as the scheduler sees them ({@link NodeState#domains}): which locality a policy's
 * rule gives a job, the narrowest level one of whose domains could hold a gang, and where a placed gang landed.
 */
final class DomainMap {
    private final List<String> levels;
    /** Node name to its domain's path at each level, broadest first (as the scheduler builds them). */
    private final Map<String, String[]> paths = new HashMap<>();
    /** Per level, each domain's nodes' GPUs. */
    private final List<List<int[]>> domainGpus = new ArrayList<>();
    /** Per level and instance size: the most such instances one domain holds when empty. */
    private final Map<Long, Integer> mostHeld = new HashMap<>();

    DomainMap(List<NodeState> nodes, List<TopologyLevel> topology) {
        this.levels = topology.stream().map(TopologyLevel::name).toList();
        List<Map<String, List<Integer>>> byPath = new ArrayList<>();
        levels.forEach(l -> byPath.add(new LinkedHashMap<>()));
        for (NodeState node : nodes) {
            String[] path = new String[levels.size()];
            for (int level = 0; level < path.length; level++) {
                path[level] = level == 0 ? node.domains().get(0) : path[level - 1] + "/" + node.domains().get(level);
                byPath.get(level).computeIfAbsent(path[level], p -> new ArrayList<>()).add(node.capacity().gpu());
            }
            paths.put(node.name(), path);
        }
        for (Map<String, List<Integer>> domains : byPath) {
            domainGpus.add(domains.values().stream().map(g -> g.stream().mapToInt(Integer::intValue).toArray()).toList());
        }
    }

    List<String> levels() {
        return levels;
    }

    /** The instances the job asks for, each with the locality the rule gives it ({@code null}: none). */
    static List<InstanceRequest> requests(TraceJob job, Locality locality) {
        Resources each = new Resources(0, 0, job.gpus(), null);
        List<InstanceRequest> requests = new ArrayList<>(job.instances());
        for (int rank = 0; rank < job.instances(); rank++) {
            requests.add(new InstanceRequest(rank, "main", each, locality));
        }
        return requests;
    }

    /**
     * Where the rule places the job ({@code null}: anywhere). A placement of the trace is kept as written (a gang larger
     * than every domain of its level then never starts, as the server would refuse it); the rule's level is widened to
     * the narrowest broader level one of whose domains could hold the gang, and dropped if none could.
     */
    Locality localityOf(TraceJob job, PlacementRule rule) {
        if (rule == null) {
            return null;
        }
        if (rule.fromTrace() && job.placement() != null) {
            int level = levels.indexOf(job.placement().level());
            return new Locality(level, levels.get(level), job.placement().required());
        }
        if (rule.level() == null || job.instances() < rule.minInstances()) {
            return null;
        }
        for (int level = levels.indexOf(rule.level()); level >= 0; level--) {
            if (couldHold(level, job)) {
                return new Locality(level, levels.get(level), rule.required());
            }
        }
        return null;
    }

    /** The narrowest level one of whose domains could hold the gang when empty ({@code -1}: none could). */
    int smallestLevel(TraceJob job) {
        for (int level = levels.size() - 1; level >= 0; level--) {
            if (couldHold(level, job)) {
                return level;
            }
        }
        return -1;
    }

    private boolean couldHold(int level, TraceJob job) {
        int gpus = job.gpus();
        return gpus == 0 || mostHeld.computeIfAbsent(((long) level << 32) | gpus, key -> {
            int most = 0;
            for (int[] domain : domainGpus.get(level)) {
                int held = 0;
                for (int nodeGpus : domain) {
                    held += nodeGpus / gpus;
                }
                most = Math.max(most, held);
            }
            return most;
        }) >= job.instances();
    }

    /** The narrowest level at which every allocation's node is in one domain ({@code -1}: none, not even the broadest). */
    int landedLevel(List<Allocation> allocations) {
        String[] first = paths.get(allocations.get(0).node());
        for (int level = levels.size() - 1; level >= 0; level--) {
            boolean together = true;
            for (Allocation allocation : allocations) {
                if (!paths.get(allocation.node())[level].equals(first[level])) {
                    together = false;
                    break;
                }
            }
            if (together) {
                return level;
            }
        }
        return -1;
    }

    /** Whether every allocation's node is in one domain of {@code level}. */
    boolean together(List<Allocation> allocations, int level) {
        String first = paths.get(allocations.get(0).node())[level];
        return allocations.stream().allMatch(a -> paths.get(a.node())[level].equals(first));
    }
}
