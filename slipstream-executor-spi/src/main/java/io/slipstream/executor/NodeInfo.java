package io.slipstream.executor;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.spec.Resources;
import java.util.List;
import java.util.Map;

/**
 * A node an executor can run instances on. {@code capacity.gpuModel()} names its GPUs; {@code gpuIds} are the
 * device ids to expose to an instance for GPU index i ({@code null} or empty: the index itself).
 */
public record NodeInfo(String name, Resources capacity, List<String> gpuIds, Map<String, String> labels) {
    public NodeInfo {
        requireNonNull(name, "name is null");
        requireNonNull(capacity, "capacity is null");
        gpuIds = gpuIds == null ? List.of() : List.copyOf(gpuIds);
        labels = labels == null ? Map.of() : Map.copyOf(labels);
        if (!gpuIds.isEmpty() && gpuIds.size() != capacity.gpu()) {
            throw new IllegalArgumentException("node " + name + " has " + capacity.gpu() + " GPUs but " + gpuIds.size() + " GPU ids");
        }
    }

    /** The id to put in {@code CUDA_VISIBLE_DEVICES} for GPU index {@code index} of this node. */
    public String gpuId(int index) {
        return gpuIds.isEmpty() ? Integer.toString(index) : gpuIds.get(index);
    }
}
