package io.slipstream.scheduler;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.spec.Resources;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * A node as the scheduler sees it: what it has, what is allocated, which GPU indices are taken, and whether new
 * instances may go there.
 */
public record NodeState(String name, Resources capacity, Resources allocated, Set<Integer> usedGpus, boolean schedulable) {
    public NodeState {
        requireNonNull(name, "name is null");
        requireNonNull(capacity, "capacity is null");
        requireNonNull(allocated, "allocated is null");
        usedGpus = Set.copyOf(usedGpus);
    }

    public static NodeState empty(String name, Resources capacity) {
        return new NodeState(name, capacity, Resources.NONE, Set.of(), true);
    }

    /** This node with an instance's resources and GPU indices added (used to build snapshots). */
    public NodeState withAllocation(Resources resources, List<Integer> gpus) {
        Set<Integer> used = new TreeSet<>(usedGpus);
        used.addAll(gpus);
        return new NodeState(name, capacity, allocated.plus(resources), used, schedulable);
    }
}
