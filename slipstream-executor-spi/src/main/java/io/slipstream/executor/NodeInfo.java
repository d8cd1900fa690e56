package io.slipstream.executor;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.spec.Resources;
import java.util.List;
import java.util.Map;

/**
 * A node an executor can run instances on. {@code capacity.gpuModel()} names its GPUs; {@code gpuIds} are the
 * device ids to expose to an instance for GPU index i ({@code null} or empty: the index itself); {@code gpuDevices}
 * the device node of GPU index i ({@code /dev/nvidia3}), where an executor fences GPUs ({@code null} or empty: none
 * known, as for simulated GPUs); {@code cpuset} the cores its instances are pinned to, in the kernel's list format
 * ({@code 2-15}), where an executor pins them ({@code null}: not pinned).
 */
public record NodeInfo(String name, Resources capacity, List<String> gpuIds, Map<String, String> labels, List<String> gpuDevices,
                       String cpuset) {
    public NodeInfo {
        requireNonNull(name, "name is null");
        requireNonNull(capacity, "capacity is null");
        gpuIds = gpuIds == null ? List.of() : List.copyOf(gpuIds);
        labels = labels == null ? Map.of() : Map.copyOf(labels);
        gpuDevices = gpuDevices == null ? List.of() : List.copyOf(gpuDevices);
        if (!gpuIds.isEmpty() && gpuIds.size() != capacity.gpu()) {
            throw new IllegalArgumentException("node " + name + " has " + capacity.gpu() + " GPUs but " + gpuIds.size() + " GPU ids");
        }
        if (!gpuDevices.isEmpty() && gpuDevices.size() != capacity.gpu()) {
            throw new IllegalArgumentException("node " + name + " has " + capacity.gpu() + " GPUs but " + gpuDevices.size() + " GPU devices");
        }
    }

    /** A node whose instances are not pinned to cores. */
    public NodeInfo(String name, Resources capacity, List<String> gpuIds, Map<String, String> labels, List<String> gpuDevices) {
        this(name, capacity, gpuIds, labels, gpuDevices, null);
    }

    /** A node whose GPUs' device nodes are not known. */
    public NodeInfo(String name, Resources capacity, List<String> gpuIds, Map<String, String> labels) {
        this(name, capacity, gpuIds, labels, null);
    }

    /** The id to put in {@code CUDA_VISIBLE_DEVICES} for GPU index {@code index} of this node. */
    public String gpuId(int index) {
        return gpuIds.isEmpty() ? Integer.toString(index) : gpuIds.get(index);
    }
}
