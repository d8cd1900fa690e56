package io.slipstream.server.service;

import static io.slipstream.scheduler.QuotaState.parentId;

import io.slipstream.api.problem.Problems;
import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.QuotaSpec;
import io.slipstream.api.spec.QuotaType;
import io.slipstream.api.spec.Quantities;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.NodeInfo;
import io.slipstream.store.Store;
import io.slipstream.store.StoredDocument;
import io.slipstream.store.StoreReads;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What must hold for quotas as a whole, checked on the state an apply would leave: parents exist and form no cycle,
 * children are guaranteed no more than their parent, and guarantees fit the cluster: Dedicated quotas of a GPU model
 * within the nodes of that model, General quotas within the rest. A quota with {@code overcommit: true} is left out
 * of the capacity check (an admin's explicit choice).
 */
final class QuotaRules {
    private QuotaRules() {
    }

    /** Records a problem for {@code path} (the quota's document) for every rule it breaks. */
    static void check(StoreReads tx, String workspace, String name, String path, List<NodeInfo> nodes, Problems problems) {
        Map<QuotaId, StoredDocument> quotas = new TreeMap<>();
        for (StoredDocument stored : tx.documents().list(Kind.Quota, null)) {
            quotas.put(new QuotaId(stored.document().workspace(), stored.document().name()), stored);
        }
        QuotaId id = new QuotaId(workspace, name);
        QuotaSpec spec = (QuotaSpec) quotas.get(id).document().spec();
        if (spec.type() == QuotaType.Dedicated && spec.parent() != null) {
            problems.add(path + "spec.parent", "a Dedicated quota takes no parent: Dedicated quotas share by GPU model, not by tree");
            return;
        }
        if (spec.parent() != null) {
            QuotaId parentId = parentId(workspace, spec.parent());
            if (!quotas.containsKey(parentId)) {
                problems.add(path + "spec.parent", "quota '" + parentId + "' does not exist");
            } else if (cycles(id, quotas)) {
                problems.add(path + "spec.parent", "quota '" + parentId + "' is below '" + id + "' already: quotas form a tree");
            } else {
                childrenWithin(parentId, quotas, path + "spec.parent", problems);
            }
        }
        childrenWithin(id, quotas, path + "spec.min", problems);
        if (!spec.overcommit()) {
            capacity(quotas, nodes, path + "spec.min", problems);
        }
    }

    /** Sums that saturate instead of wrapping: 1Ei guarantees must not add up to a negative number. */
    private static long plus(long a, long b) {
        long sum = a + b;
        if (((a ^ sum) & (b ^ sum)) < 0) {
            return sum < 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
        }
        return sum;
    }

    private static boolean cycles(QuotaId id, Map<QuotaId, StoredDocument> quotas) {
        QuotaId current = id;
        for (int depth = 0; depth <= quotas.size(); depth++) {
            StoredDocument stored = quotas.get(current);
            QuotaSpec spec = stored == null ? null : (QuotaSpec) stored.document().spec();
            if (spec == null || spec.parent() == null) {
                return false;
            }
            current = parentId(stored.document().workspace(), spec.parent());
            if (current.equals(id)) {
                return true;
            }
        }
        return true;
    }

    private static void childrenWithin(QuotaId parentId, Map<QuotaId, StoredDocument> quotas, String path, Problems problems) {
        QuotaSpec parent = (QuotaSpec) quotas.get(parentId).document().spec();
        long cpu = 0;
        long memory = 0;
        long gpu = 0;
        for (StoredDocument stored : quotas.values()) {
            QuotaSpec child = (QuotaSpec) stored.document().spec();
            if (child.parent() != null && parentId(stored.document().workspace(), child.parent()).equals(parentId)) {
                cpu = plus(cpu, child.min().milliCpu());
                memory = plus(memory, child.min().memoryBytes());
                gpu = plus(gpu, child.min().gpu());
            }
        }
        Resources min = parent.min();
        if (cpu > min.milliCpu() || memory > min.memoryBytes() || gpu > min.gpu()) {
            problems.add(path, "the quotas under '" + parentId + "' would be guaranteed " + describe(cpu, memory, gpu)
                    + ", more than its own min (" + describe(min.milliCpu(), min.memoryBytes(), min.gpu()) + ")");
        }
    }

    private static void capacity(Map<QuotaId, StoredDocument> quotas, List<NodeInfo> nodes, String path, Problems problems) {
        Map<String, long[]> capacityByModel = new HashMap<>();
        long[] capacity = new long[3];
        for (NodeInfo node : nodes) {
            String model = node.capacity().gpuModel() == null ? "" : node.capacity().gpuModel();
            add(capacityByModel.computeIfAbsent(model, m -> new long[3]), node.capacity(), 1);
            add(capacity, node.capacity(), 1);
        }
        Map<String, long[]> dedicated = new TreeMap<>();
        long[] general = new long[3];
        long[] allDedicated = new long[3];
        for (StoredDocument stored : quotas.values()) {
            QuotaSpec quota = (QuotaSpec) stored.document().spec();
            if (quota.overcommit()) {
                continue;
            }
            if (quota.type() == QuotaType.Dedicated) {
                add(dedicated.computeIfAbsent(quota.gpuModel(), m -> new long[3]), quota.min(), 1);
                add(allDedicated, quota.min(), 1);
            } else if (quota.parent() == null) {
                add(general, quota.min(), 1);
            }
        }
        // Both checks, whatever the kind applied: a new Dedicated quota takes capacity General quotas counted on.
        for (var entry : dedicated.entrySet()) {
            long[] have = capacityByModel.getOrDefault(entry.getKey(), new long[3]);
            if (exceeds(entry.getValue(), have)) {
                problems.add(path, "Dedicated " + entry.getKey() + " quotas would be guaranteed " + describe(entry.getValue())
                        + ", but the nodes with " + entry.getKey() + " GPUs have " + describe(have) + " (an admin may set overcommit: true)");
            }
        }
        long[] left = capacity.clone();
        add(left, allDedicated, -1);
        if (exceeds(general, left)) {
            problems.add(path, "General quotas would be guaranteed " + describe(general) + ", but the cluster has "
                    + describe(left) + " beyond what Dedicated quotas are guaranteed (an admin may set overcommit: true)");
        }
    }

    private static void add(long[] sum, Resources resources, int sign) {
        sum[0] = plus(sum[0], sign * resources.milliCpu());
        sum[1] = plus(sum[1], sign * resources.memoryBytes());
        sum[2] = plus(sum[2], sign * (long) resources.gpu());
    }

    private static void add(long[] sum, long[] other, int sign) {
        for (int i = 0; i < 3; i++) {
            sum[i] = plus(sum[i], sign * other[i]);
        }
    }

    private static boolean exceeds(long[] guaranteed, long[] have) {
        return guaranteed[0] > have[0] || guaranteed[1] > have[1] || guaranteed[2] > have[2];
    }

    private static String describe(long[] amount) {
        return describe(amount[0], amount[1], amount[2]);
    }

    private static String describe(long milliCpu, long memory, long gpu) {
        return "cpu " + Quantities.formatMilliCpu(Math.max(0, milliCpu)) + ", memory " + Quantities.approximateBytes(Math.max(0, memory))
                + ", " + Math.max(0, gpu) + " GPUs";
    }
}
