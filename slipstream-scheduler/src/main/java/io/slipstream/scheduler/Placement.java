package io.slipstream.scheduler;

import static java.util.Objects.requireNonNull;

import java.util.List;

/** Where one instance goes: the node and the GPU indices on it. */
public record Placement(int rank, String node, List<Integer> gpus) {
    public Placement {
        requireNonNull(node, "node is null");
        gpus = List.copyOf(gpus);
    }
}
