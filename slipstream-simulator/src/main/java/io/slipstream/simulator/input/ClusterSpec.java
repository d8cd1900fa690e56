package io.slipstream.simulator.input;

import io.slipstream.api.spec.Resources;
import io.slipstream.scheduler.NodeState;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The simulated cluster: pools of identical nodes, and its topology ({@code topology}, broadest level first; empty:
 * none). Each level's domains take consecutive nodes, pool after pool in the order listed and by number within a pool:
 * with racks of 4, {@code node-00000..00003} are {@code rack-1}. When the nodes do not divide evenly the last domain of
 * a level takes what is left (it is smaller).
 */
public record ClusterSpec(List<NodePool> pools, List<TopologyLevel> topology) {
    public ClusterSpec {
        pools = List.copyOf(pools);
        topology = topology == null ? List.of() : List.copyOf(topology);
    }

    /** A cluster without a topology. */
    public ClusterSpec(List<NodePool> pools) {
        this(pools, List.of());
    }

    /**
     * Every node, named {@code <pool>-<n>} with zero-padded numbers so name order is pool order, with its domain at each
     * level ({@code <level>-<k>}, counted from 1 over the whole cluster, so a name alone tells the domain).
     */
    public List<NodeState> nodes() {
        List<NodeState> nodes = new ArrayList<>();
        for (NodePool pool : pools) {
            Resources capacity = new Resources(pool.milliCpu(), pool.memoryBytes(), pool.gpus(), pool.gpuModel());
            for (int i = 0; i < pool.count(); i++) {
                nodes.add(new NodeState(String.format(Locale.ROOT, "%s-%05d", pool.name(), i), capacity, true, domainsOf(nodes.size())));
            }
        }
        return nodes;
    }

    /** The domains of the node at {@code position} in {@link #nodes()}, broadest first. */
    private List<String> domainsOf(int position) {
        List<String> domains = new ArrayList<>(topology.size());
        for (TopologyLevel level : topology) {
            domains.add(level.name() + "-" + (position / level.nodes() + 1));
        }
        return domains;
    }

    /** The index of the level named so ({@code -1}: none). */
    public int levelIndex(String name) {
        for (int i = 0; i < topology.size(); i++) {
            if (topology.get(i).name().equals(name)) {
                return i;
            }
        }
        return -1;
    }

    public long gpus() {
        return pools.stream().mapToLong(p -> (long) p.count() * p.gpus()).sum();
    }

    public int nodeCount() {
        return pools.stream().mapToInt(NodePool::count).sum();
    }

    public long milliCpu() {
        return pools.stream().mapToLong(p -> p.count() * p.milliCpu()).sum();
    }

    public long memoryBytes() {
        return pools.stream().mapToLong(p -> p.count() * p.memoryBytes()).sum();
    }

    public String describe() {
        List<String> parts = new ArrayList<>();
        for (NodePool pool : pools) {
            parts.add(pool.count() + " nodes x " + pool.gpus() + " " + pool.gpuModel());
        }
        return String.join(" + ", parts) + " (" + gpus() + " GPUs)" + (topology.isEmpty() ? "" : ", " + describeTopology());
    }

    /** {@code 5 blocks of 32 nodes (the last of 8), 34 racks of 4}. */
    public String describeTopology() {
        int count = nodeCount();
        List<String> parts = new ArrayList<>();
        for (TopologyLevel level : topology) {
            int domains = (count + level.nodes() - 1) / level.nodes();
            int last = count - (domains - 1) * level.nodes();
            parts.add(String.format(Locale.ROOT, "%d %s%s of %d%s%s", domains, level.name(), domains == 1 ? "" : "s", domains == 1 ? last : level.nodes(),
                    parts.isEmpty() ? " nodes" : "", domains == 1 || last == level.nodes() ? "" : " (the last of " + last + ")"));
        }
        return String.join(", ", parts);
    }
}
