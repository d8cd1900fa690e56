package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A mutable copy of a node's free capacity, used while one cycle tries placements. Not thread-safe. */
final class WorkingNode {
    final int index;
    final String name;
    final Resources capacity;
    final String model;
    final boolean schedulable;
    long freeMilliCpu;
    long freeMemory;
    final BitSet freeGpus = new BitSet();
    /**
     * The node's domain at each topology level, as a path from the broadest ({@code block-1/rack-3}), so that equal
     * names under different parents differ; {@code null} where it has none.
     */
    final String[] domainPaths;
    /** Its domain at each level, where it has one and is schedulable ({@link Domains} sets them). */
    final Domains.Domain[] domains;
    /** GPUs held here by guaranteed runs (not stopping), by quota: work no reclaim can clear from the node. */
    final Map<QuotaId, Integer> pinnedByQuota = new HashMap<>(2);

    WorkingNode(int index, NodeState node) {
        this.index = index;
        this.name = node.name();
        this.capacity = node.capacity();
        this.model = node.capacity().gpuModel() == null ? "" : node.capacity().gpuModel();
        this.schedulable = node.schedulable();
        this.freeMilliCpu = node.capacity().milliCpu();
        this.freeMemory = node.capacity().memoryBytes();
        freeGpus.set(0, node.capacity().gpu());
        this.domainPaths = new String[node.domains().size()];
        this.domains = new Domains.Domain[domainPaths.length];
        String path = "";
        for (int level = 0; level < domainPaths.length; level++) {
            String domain = node.domains().get(level);
            if (domain.isEmpty()) {
                break; // none here, so none below
            }
            path = level == 0 ? domain : path + "/" + domain;
            domainPaths[level] = path;
        }
    }

    /** Its domain at {@code level} as a path, or {@code null}. */
    String domainAt(int level) {
        return level < domainPaths.length ? domainPaths[level] : null;
    }

    /** What a cycle may change of a node, as it was before. */
    record Saved(long freeMilliCpu, long freeMemory, BitSet freeGpus, Map<QuotaId, Integer> pinnedByQuota) {
    }

    Saved save() {
        return new Saved(freeMilliCpu, freeMemory, (BitSet) freeGpus.clone(), pinnedByQuota.isEmpty() ? Map.of() : new HashMap<>(pinnedByQuota));
    }

    void restore(Saved state) {
        freeMilliCpu = state.freeMilliCpu();
        freeMemory = state.freeMemory();
        freeGpus.clear();
        freeGpus.or(state.freeGpus());
        pinnedByQuota.clear();
        pinnedByQuota.putAll(state.pinnedByQuota());
    }

    int freeGpuCount() {
        return freeGpus.cardinality();
    }

    boolean wholeFree() {
        return capacity.gpu() > 0 && freeGpus.cardinality() == capacity.gpu();
    }

    /** Whether the request could fit on this node if it were empty. */
    boolean couldEverFit(Resources request) {
        return capacity.milliCpu() >= request.milliCpu() && capacity.memoryBytes() >= request.memoryBytes() && capacity.gpu() >= request.gpu();
    }

    boolean fitsNow(Resources request) {
        return freeMilliCpu >= request.milliCpu() && freeMemory >= request.memoryBytes() && freeGpus.cardinality() >= request.gpu();
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

    /** Takes exactly these GPU indices (an allocation that exists already). */
    void takeExactly(Resources request, List<Integer> gpus) {
        freeMilliCpu -= request.milliCpu();
        freeMemory -= request.memoryBytes();
        gpus.forEach(freeGpus::clear);
    }

    void giveBack(Resources request, List<Integer> gpus) {
        freeMilliCpu += request.milliCpu();
        freeMemory += request.memoryBytes();
        for (int gpu : gpus) {
            if (gpu >= 0 && gpu < capacity.gpu()) { // an allocation from before the node shrank names GPUs it no longer has
                freeGpus.set(gpu);
            }
        }
    }
}
