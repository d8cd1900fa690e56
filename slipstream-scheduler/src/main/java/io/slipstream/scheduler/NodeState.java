package io.slipstream.scheduler;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.spec.Resources;

/**
 * A node as the scheduler sees it: what it has ({@code capacity.gpuModel()} names its GPUs) and whether new
 * instances may go there. What is allocated on it is derived from the active runs of the snapshot.
 */
public record NodeState(String name, Resources capacity, boolean schedulable) {
    public NodeState {
        requireNonNull(name, "name is null");
        requireNonNull(capacity, "capacity is null");
    }

    public static NodeState of(String name, Resources capacity) {
        return new NodeState(name, capacity, true);
    }
}
