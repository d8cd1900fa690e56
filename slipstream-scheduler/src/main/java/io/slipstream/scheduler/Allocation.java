package io.slipstream.scheduler;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.spec.Resources;
import java.util.List;

/** What one live instance holds: its resources and GPU indices on a node. */
public record Allocation(int rank, String node, Resources resources, List<Integer> gpus) {
    public Allocation {
        requireNonNull(node, "node is null");
        requireNonNull(resources, "resources is null");
        gpus = List.copyOf(gpus);
    }
}
