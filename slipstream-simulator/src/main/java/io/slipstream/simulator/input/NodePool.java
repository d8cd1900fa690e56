package io.slipstream.simulator.input;

import static java.util.Objects.requireNonNull;

/** {@code count} identical nodes: GPUs each and their model, cpu in millicores, memory in bytes. */
public record NodePool(String name, int count, int gpus, String gpuModel, long milliCpu, long memoryBytes) {
    public NodePool {
        requireNonNull(name, "name is null");
        requireNonNull(gpuModel, "gpuModel is null");
        if (count < 1 || gpus < 0) {
            throw new IllegalArgumentException("a node pool needs at least one node and no negative GPU count");
        }
    }
}
