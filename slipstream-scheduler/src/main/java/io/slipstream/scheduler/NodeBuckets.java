package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The working cluster's schedulable nodes indexed by free GPUs, so that a best-fit node is found without scanning
 * every node: for each GPU model, buckets[free GPUs] hold node indices (a bit set: index order, as ties go by name);
 * the same again for the nodes holding each quota's guaranteed work, and any quota's ({@link #ANY}). A node leaves
 * its buckets before it changes and joins them after ({@link WorkingCluster} does both around every change). Also
 * counts the whole free nodes. Not thread-safe.
 */
final class NodeBuckets {
    /** The key of the buckets of nodes holding any quota's guaranteed work. */
    static final Object ANY = new Object();

    private final List<WorkingNode> nodes;
    /** model -> buckets[free GPUs] -> schedulable node indices. */
    private final Map<String, List<BitSet>> buckets = new TreeMap<>();
    /** model -> quota (or {@link #ANY}) -> buckets[free GPUs] -> schedulable nodes holding that quota's guaranteed work. */
    private final Map<String, Map<Object, List<BitSet>>> pinned = new TreeMap<>();
    private int wholeFree;

    /** {@code nodes}: the cluster's nodes, by index. */
    NodeBuckets(List<WorkingNode> nodes) {
        this.nodes = nodes;
    }

    /** A new schedulable node, as it is now. */
    void add(WorkingNode node) {
        List<BitSet> modelBuckets = buckets.computeIfAbsent(node.model, m -> new ArrayList<>());
        while (modelBuckets.size() <= node.capacity.gpu()) {
            modelBuckets.add(new BitSet());
        }
        join(node);
    }

    /** Schedulable nodes with every GPU free. */
    int wholeFree() {
        return wholeFree;
    }

    /**
     * Best fit among the nodes of {@code key}'s pinned buckets ({@code null}: all nodes) of the allowed models: the
     * node left with the fewest free GPUs, then the first by name. With {@code wholeReserve} whole free nodes held for
     * gangs, a smaller request breaks one only while there are more.
     */
    WorkingNode best(Resources request, Set<String> models, Object key, int wholeReserve) {
        WorkingNode best = null;
        for (var entry : buckets.entrySet()) {
            if (!WorkingCluster.allowed(entry.getKey(), request, models)) {
                continue;
            }
            List<BitSet> modelBuckets = key == null ? entry.getValue() : pinnedBuckets(entry.getKey(), key, false);
            if (modelBuckets == null) {
                continue;
            }
            int limit = best == null ? modelBuckets.size() : Math.min(modelBuckets.size(), best.freeGpuCount() + 1);
            boolean wholeHeld = request.gpu() > 0 && wholeFree <= wholeReserve;
            for (int free = request.gpu(); free < limit; free++) {
                if (wholeHeld && free == modelBuckets.size() - 1 && free > request.gpu()) {
                    continue; // the largest nodes' whole-free bucket: held for gangs (no need to look at each)
                }
                WorkingNode found = firstFitting(modelBuckets.get(free), request, wholeReserve);
                if (found != null) {
                    if (best == null || free < best.freeGpuCount() || (free == best.freeGpuCount() && found.index < best.index)) {
                        best = found;
                    }
                    break;
                }
            }
        }
        return best;
    }

    private WorkingNode firstFitting(BitSet bucket, Resources request, int wholeReserve) {
        for (int index = bucket.nextSetBit(0); index >= 0; index = bucket.nextSetBit(index + 1)) {
            WorkingNode node = nodes.get(index);
            if (node.fitsNow(request) && mayBreak(node, request, wholeReserve)) {
                return node;
            }
        }
        return null;
    }

    /** Whether taking {@code request} on the node keeps the {@code wholeReserve} whole nodes held for gangs. */
    boolean mayBreak(WorkingNode node, Resources request, int wholeReserve) {
        return request.gpu() == 0 || request.gpu() >= node.capacity.gpu() || !node.wholeFree() || wholeFree > wholeReserve;
    }

    private List<BitSet> pinnedBuckets(String model, Object key, boolean create) {
        Map<Object, List<BitSet>> byKey = create ? pinned.computeIfAbsent(model, m -> new HashMap<>()) : pinned.get(model);
        if (byKey == null) {
            return null;
        }
        List<BitSet> list = byKey.get(key);
        if (list == null && create) {
            list = new ArrayList<>();
            for (int i = 0; i < buckets.get(model).size(); i++) {
                list.add(new BitSet());
            }
            byKey.put(key, list);
        }
        return list;
    }

    /** Takes a schedulable node out of the buckets its free GPUs put it in, before they change. */
    void leave(WorkingNode node) {
        List<BitSet> modelBuckets = node.schedulable ? buckets.get(node.model) : null;
        if (modelBuckets == null) {
            return;
        }
        modelBuckets.get(node.freeGpuCount()).clear(node.index);
        if (node.wholeFree()) {
            wholeFree--;
        }
        for (QuotaId quota : node.pinnedByQuota.keySet()) {
            pinnedBuckets(node.model, quota, true).get(node.freeGpuCount()).clear(node.index);
        }
        if (!node.pinnedByQuota.isEmpty()) {
            pinnedBuckets(node.model, ANY, true).get(node.freeGpuCount()).clear(node.index);
        }
    }

    /** Puts a schedulable node back into the buckets of its free GPUs, once they changed. */
    void join(WorkingNode node) {
        List<BitSet> modelBuckets = node.schedulable ? buckets.get(node.model) : null;
        if (modelBuckets == null) {
            return;
        }
        modelBuckets.get(node.freeGpuCount()).set(node.index);
        if (node.wholeFree()) {
            wholeFree++;
        }
        for (QuotaId quota : node.pinnedByQuota.keySet()) {
            pinnedBuckets(node.model, quota, true).get(node.freeGpuCount()).set(node.index);
        }
        if (!node.pinnedByQuota.isEmpty()) {
            pinnedBuckets(node.model, ANY, true).get(node.freeGpuCount()).set(node.index);
        }
    }

    /** Which buckets hold which nodes, as text (for {@link WorkingCluster#contents}). */
    String contents() {
        StringBuilder out = new StringBuilder("whole free " + wholeFree + "\n");
        buckets.forEach((model, list) -> out.append("buckets ").append(model).append(' ').append(list).append('\n'));
        List<String> pins = new ArrayList<>(); // empty bucket lists made on the way are no change
        pinned.forEach((model, byKey) -> byKey.forEach((key, list) -> {
            if (list.stream().anyMatch(bits -> !bits.isEmpty())) {
                pins.add("pinned " + model + " " + (key == ANY ? "(any)" : key) + " " + list);
            }
        }));
        pins.sort(Comparator.naturalOrder());
        pins.forEach(line -> out.append(line).append('\n'));
        return out.toString();
    }
}
