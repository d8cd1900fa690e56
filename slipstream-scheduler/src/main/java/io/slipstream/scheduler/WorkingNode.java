package io.slipstream.scheduler;

import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/** A mutable copy of a node's free capacity, used while one cycle tries placements. Not thread-safe. */
final class WorkingNode {
    final String name;
    final Resources capacity;
    final boolean schedulable;
    long freeMilliCpu;
    long freeMemory;
    final BitSet freeGpus = new BitSet();

    WorkingNode(NodeState node) {
        this.name = node.name();
        this.capacity = node.capacity();
        this.schedulable = node.schedulable();
        this.freeMilliCpu = node.capacity().milliCpu() - node.allocated().milliCpu();
        this.freeMemory = node.capacity().memoryBytes() - node.allocated().memoryBytes();
        freeGpus.set(0, node.capacity().gpu());
        node.usedGpus().forEach(freeGpus::clear);
    }

    /** Whether the request could fit on this node if it were empty (a permanent fit, ignoring current use). */
    boolean couldEverFit(Resources request) {
        return modelMatches(request) && capacity.milliCpu() >= request.milliCpu() && capacity.memoryBytes() >= request.memoryBytes()
                && capacity.gpu() >= request.gpu();
    }

    boolean fitsNow(Resources request) {
        return schedulable && modelMatches(request) && freeMilliCpu >= request.milliCpu() && freeMemory >= request.memoryBytes()
                && freeGpus.cardinality() >= request.gpu();
    }

    private boolean modelMatches(Resources request) {
        return request.gpuModel() == null || request.gpu() == 0 || request.gpuModel().equals(capacity.gpuModel());
    }

    /** Takes the resources and the lowest free GPU indices; returns the indices. */
    List<Integer> take(Resources request) {
        freeMilliCpu -= request.milliCpu();
        freeMemory -= request.memoryBytes();
        List<Integer> gpus = new ArrayList<>(request.gpu());
        for (int i = freeGpus.nextSetBit(0); gpus.size() < request.gpu(); i = freeGpus.nextSetBit(i + 1)) {
            gpus.add(i);
        }
        gpus.forEach(freeGpus::clear);
        return gpus;
    }

    void giveBack(Resources request, List<Integer> gpus) {
        freeMilliCpu += request.milliCpu();
        freeMemory += request.memoryBytes();
        gpus.forEach(freeGpus::set);
    }
}
