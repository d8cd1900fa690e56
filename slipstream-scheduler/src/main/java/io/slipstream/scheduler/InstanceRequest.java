package io.slipstream.scheduler;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.spec.Resources;

/**
 * One instance a run needs: its rank, its group, its resources ({@code gpuModel} {@code null}: any), and where its
 * group must or should be in the topology ({@code locality}; {@code null}: anywhere).
 */
public record InstanceRequest(int rank, String nodeGroup, Resources resources, Locality locality) {
    public InstanceRequest {
        requireNonNull(nodeGroup, "nodeGroup is null");
        requireNonNull(resources, "resources is null");
    }

    /** An instance that may go anywhere. */
    public InstanceRequest(int rank, String nodeGroup, Resources resources) {
        this(rank, nodeGroup, resources, null);
    }
}
