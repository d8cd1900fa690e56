package io.slipstream.scheduler;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.spec.Resources;

/** One instance a run needs: its rank, its group, and its resources ({@code gpuModel} {@code null}: any). */
public record InstanceRequest(int rank, String nodeGroup, Resources resources) {
    public InstanceRequest {
        requireNonNull(nodeGroup, "nodeGroup is null");
        requireNonNull(resources, "resources is null");
    }
}
