package io.slipstream.simulator.input;

import io.slipstream.api.spec.Resources;
import io.slipstream.scheduler.NodeState;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The simulated cluster: pools of identical nodes. */
public record ClusterSpec(List<NodePool> pools) {
    public ClusterSpec {
        pools = List.copyOf(pools);
    }

    /** Every node, named {@code <pool>-<n>} with zero-padded numbers so name order is pool order. */
    public List<NodeState> nodes() {
        List<NodeState> nodes = new ArrayList<>();
        for (NodePool pool : pools) {
            Resources capacity = new Resources(pool.milliCpu(), pool.memoryBytes(), pool.gpus(), pool.gpuModel());
            for (int i = 0; i < pool.count(); i++) {
                nodes.add(NodeState.of(String.format(Locale.ROOT, "%s-%05d", pool.name(), i), capacity));
            }
        }
        return nodes;
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
        return String.join(" + ", parts) + " (" + gpus() + " GPUs)";
    }
}
