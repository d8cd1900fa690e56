package io.slipstream.scheduler;

import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.spec.QuotaType;
import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The quota ledger of one cycle, derived from the active runs (never stored, so it cannot drift from them).
 *
 * <ul>
 *   <li>A quota's own guarantee is its {@code min} less what its children are guaranteed: the part runs charged to
 *       it directly may use as InQuota.</li>
 *   <li>Guaranteed use: what its InQuota runs hold. It never exceeds the own guarantee.</li>
 *   <li>Total use: what all its runs hold, idle capacity included. It never exceeds {@code max}.</li>
 *   <li>Sharing pools: a General quota's pool is its tree (named by its root); Dedicated quotas pool by GPU model;
 *       runs without a quota have a pool of their own. A pool lends the unused part of its quotas' guarantees, plus
 *       whatever capacity no quota guarantees (which every pool may borrow).</li>
 * </ul>
 */
final class QuotaBook {
    static final String NO_POOL = "(no quota)";

    private final Map<String, QuotaState> quotas = new HashMap<>();
    private final Map<String, Amount> own = new HashMap<>();
    private final Map<String, Amount> guaranteed = new HashMap<>();
    private final Map<String, Amount> total = new HashMap<>();
    private final Map<String, String> pools = new HashMap<>();
    private final Map<String, Amount> lendable = new HashMap<>();
    private final Map<String, Amount> borrowed = new HashMap<>();
    private final Amount unguaranteed;

    QuotaBook(List<QuotaState> states, List<NodeState> nodes) {
        for (QuotaState quota : states) {
            quotas.put(quota.id(), quota);
        }
        Map<String, List<QuotaState>> children = new HashMap<>();
        for (QuotaState quota : states) {
            if (quota.parent() != null && quotas.containsKey(quota.parent())) {
                children.computeIfAbsent(quota.parent(), p -> new ArrayList<>()).add(quota);
            }
        }
        Amount allOwn = new Amount();
        for (QuotaState quota : states) {
            Amount mine = new Amount(quota.min());
            children.getOrDefault(quota.id(), List.of()).forEach(child -> mine.add(child.min(), -1));
            mine.clampAtZero();
            own.put(quota.id(), mine);
            guaranteed.put(quota.id(), new Amount());
            total.put(quota.id(), new Amount());
            String pool = poolFor(quota);
            pools.put(quota.id(), pool);
            lendable.computeIfAbsent(pool, p -> new Amount()).add(mine, 1);
            borrowed.computeIfAbsent(pool, p -> new Amount());
            allOwn.add(mine, 1);
        }
        borrowed.put(NO_POOL, new Amount());
        lendable.put(NO_POOL, new Amount());
        Amount capacity = new Amount();
        nodes.stream().filter(NodeState::schedulable).forEach(node -> capacity.add(node.capacity(), 1));
        capacity.add(allOwn, -1);
        capacity.clampAtZero();
        this.unguaranteed = capacity;
    }

    private String poolFor(QuotaState quota) {
        if (quota.type() == QuotaType.Dedicated) {
            return "dedicated:" + quota.gpuModel();
        }
        QuotaState root = quota;
        for (int depth = 0; root.parent() != null && quotas.containsKey(root.parent()) && depth < 64; depth++) {
            root = quotas.get(root.parent());
        }
        return "tree:" + root.id();
    }

    boolean exists(String quota) {
        return quota != null && quotas.containsKey(quota);
    }

    QuotaState quota(String id) {
        return quotas.get(id);
    }

    String poolOf(String quota) {
        return quota == null ? NO_POOL : pools.getOrDefault(quota, NO_POOL);
    }

    /** The GPU model a run of this quota is confined to ({@code null}: any). */
    String modelOf(String quota) {
        QuotaState state = quota == null ? null : quotas.get(quota);
        return state != null && state.type() == QuotaType.Dedicated ? state.gpuModel() : null;
    }

    boolean fitsGuarantee(String quota, Resources request) {
        return exists(quota) && guaranteed.get(quota).fitsWithin(request, own.get(quota));
    }

    boolean fitsMax(String quota, Resources request) {
        QuotaState state = quota == null ? null : quotas.get(quota);
        if (state == null || state.max() == null) {
            return true;
        }
        Resources max = state.max();
        Amount used = total.get(quota);
        return used.milliCpu + request.milliCpu() <= max.milliCpu() && used.memory + request.memoryBytes() <= max.memoryBytes()
                && (max.gpu() == Integer.MAX_VALUE || used.gpu + request.gpu() <= max.gpu());
    }

    /**
     * Whether the pool may lend {@code request} more: its quotas' unused guarantees plus capacity no quota guarantees.
     * The latter is shared by every pool, so what all pools borrow beyond their own unused guarantees must fit in it
     * together.
     */
    boolean idleAvailable(String pool, Resources request) {
        Amount own = lendable.getOrDefault(pool, new Amount());
        Amount limit = own.copy();
        limit.add(unguaranteed, 1);
        Amount mine = borrowed.getOrDefault(pool, new Amount());
        if (!mine.fitsWithin(request, limit)) {
            return false;
        }
        Amount beyond = new Amount();
        for (var entry : borrowed.entrySet()) {
            Amount over = entry.getValue().copy();
            if (entry.getKey().equals(pool)) {
                over.add(request, 1);
            }
            over.add(lendable.getOrDefault(entry.getKey(), new Amount()), -1);
            over.clampAtZero();
            beyond.add(over, 1);
        }
        return beyond.milliCpu <= unguaranteed.milliCpu && beyond.memory <= unguaranteed.memory && beyond.gpu <= unguaranteed.gpu;
    }

    /** Books a run's resources: on its quota's guarantee, or borrowed from its pool. */
    void charge(String quota, Resources amount, RealTimeResources where, int sign) {
        if (quota != null && total.containsKey(quota)) {
            total.get(quota).add(amount, sign);
        }
        if (where == RealTimeResources.InQuota && exists(quota)) {
            guaranteed.get(quota).add(amount, sign);
            lendable.get(poolOf(quota)).add(amount, -sign);
        } else {
            borrowed.computeIfAbsent(poolOf(quota), p -> new Amount()).add(amount, sign);
        }
    }

    /** A borrowing run of the quota becomes guaranteed. */
    void promote(String quota, Resources amount) {
        charge(quota, amount, RealTimeResources.NotInQuota, -1);
        charge(quota, amount, RealTimeResources.InQuota, 1);
    }

    /** What is left of a quota's own guarantee, for messages. */
    String freeGuarantee(String quota) {
        Amount left = own.get(quota).copy();
        left.add(guaranteed.get(quota), -1);
        return left.toString();
    }
}
