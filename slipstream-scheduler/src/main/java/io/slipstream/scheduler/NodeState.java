package io.slipstream.scheduler;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.spec.Resources;
import java.util.List;

/**
 * A node as the scheduler sees it: what it has ({@code capacity.gpuModel()} names its GPUs), whether new instances may
 * go there, and where it is in the cluster's topology: its domain at each level, broadest first ({@code ""}: it has none
 * at that level, nor at any narrower one; empty: the cluster has no topology). What is allocated on it is derived from
 * the active runs of the snapshot.
 */
public record NodeState(String name, Resources capacity, boolean schedulable, List<String> domains) {
    public NodeState {
        requireNonNull(name, "name is null");
        requireNonNull(capacity, "capacity is null");
        domains = domains == null ? List.of() : List.copyOf(domains);
    }

    public NodeState(String name, Resources capacity, boolean schedulable) {
        this(name, capacity, schedulable, List.of());
    }

    public static NodeState of(String name, Resources capacity) {
        return new NodeState(name, capacity, true);
    }
}
