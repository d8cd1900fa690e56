package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.spec.QuotaType;
import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The quota ledger of one cycle, derived from the active runs (never stored, so it cannot drift from them). While a
 * {@link Tentative} is open, every charge is written to the {@link Journal}, to be undone with the cluster's changes.
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

    /** One quota's ledger entry: everything the cycle asks of a quota is one lookup away. */
    private static final class Entry {
        final QuotaState state;
        final Amount own;
        final Amount guaranteed = new Amount();
        final Amount total = new Amount();
        String pool;

        Entry(QuotaState state, Amount own) {
            this.state = state;
            this.own = own;
        }
    }

    private final Map<QuotaId, QuotaState> quotas = new HashMap<>();
    private final Map<QuotaId, Entry> entries = new HashMap<>();
    private final Map<QuotaId, Entry> byIdentity = new IdentityHashMap<>();
    /** The most id objects {@link #byIdentity} keeps before it starts again. */
    private static final int IDS_KEPT = 4096;
    /** Stands for "no such quota" in {@link #byIdentity}. */
    private static final Entry NONE = new Entry(null, null);
    private final Map<String, Amount> lendable = new HashMap<>();
    private final Map<String, Amount> borrowed = new HashMap<>();
    /** Each pool's own guarantees, all of them: the most it could ever lend (with the unguaranteed capacity). */
    private final Map<String, Amount> guaranteedByPool = new HashMap<>();
    private final Amount unguaranteed;
    private final Amount schedulable;
    /** Every quota's own guarantee, added up. */
    private final Amount allOwn = new Amount();
    /** Nodes closed to new instances (down, cordoned, draining): not capacity, but what charged runs hold there counts. */
    private final java.util.Set<String> closed = new java.util.HashSet<>();
    /** What charged runs hold on closed nodes ({@link #holdOnClosed}). */
    private final Amount closedHeld = new Amount();

    /** Where charges made during a cycle are written, to be undone (shared with the cycle's working cluster). */
    private final Journal journal;

    /** A book of its own (the ledger's): nothing it is charged is ever undone. */
    QuotaBook(List<QuotaState> states, List<NodeState> nodes) {
        this(states, nodes, new Journal());
    }

    QuotaBook(List<QuotaState> states, List<NodeState> nodes, Journal journal) {
        this.journal = journal;
        for (QuotaState quota : states) {
            quotas.put(quota.id(), quota);
        }
        Map<QuotaId, List<QuotaState>> children = new HashMap<>();
        for (QuotaState quota : states) {
            if (quota.parent() != null && quotas.containsKey(quota.parent())) {
                children.computeIfAbsent(quota.parent(), p -> new ArrayList<>()).add(quota);
            }
        }
        for (QuotaState quota : states) {
            Amount mine = new Amount(quota.min());
            children.getOrDefault(quota.id(), List.of()).forEach(child -> mine.add(child.min(), -1));
            mine.clampAtZero();
            Entry entry = new Entry(quota, mine);
            entries.put(quota.id(), entry);
            String pool = poolFor(quota);
            entry.pool = pool;
            lendable.computeIfAbsent(pool, p -> new Amount()).add(mine, 1);
            borrowed.computeIfAbsent(pool, p -> new Amount());
            allOwn.add(mine, 1);
        }
        borrowed.put(NO_POOL, new Amount());
        lendable.put(NO_POOL, new Amount());
        lendable.forEach((pool, own) -> guaranteedByPool.put(pool, own.copy()));
        Amount capacity = new Amount();
        nodes.stream().filter(NodeState::schedulable).forEach(node -> capacity.add(node.capacity(), 1));
        nodes.stream().filter(node -> !node.schedulable()).forEach(node -> closed.add(node.name()));
        schedulable = capacity.copy();
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

    /**
     * The entry of a quota ({@code null}: none), found by the id object first: a cycle asks about a run's quota many
     * times while it decides the run, by the id object the run holds, and an identity lookup does not hash the id's
     * strings. A server reads one id object per run, so the table is cleared when it grows ({@link #IDS_KEPT}).
     */
    private Entry entry(QuotaId quota) {
        if (quota == null) {
            return null;
        }
        Entry entry = byIdentity.get(quota);
        if (entry == null) {
            if (byIdentity.size() >= IDS_KEPT) {
                byIdentity.clear(); // a state kept for a long replay meets many id objects: they must not pile up
            }
            entry = entries.getOrDefault(quota, NONE);
            byIdentity.put(quota, entry);
        }
        return entry == NONE ? null : entry;
    }

    boolean exists(QuotaId quota) {
        return entry(quota) != null;
    }

    QuotaState quota(QuotaId id) {
        Entry entry = entry(id);
        return entry == null ? null : entry.state;
    }

    String poolOf(QuotaId quota) {
        Entry entry = entry(quota);
        return entry == null ? NO_POOL : entry.pool;
    }

    /** The GPU model a run of this quota is confined to ({@code null}: any). */
    String modelOf(QuotaId quota) {
        QuotaState state = quota(quota);
        return state != null && state.type() == QuotaType.Dedicated ? state.gpuModel() : null;
    }

    boolean fitsGuarantee(QuotaId quota, Resources request) {
        Entry entry = entry(quota);
        return entry != null && entry.guaranteed.fitsWithin(request, entry.own);
    }

    boolean fitsMax(QuotaId quota, Resources request) {
        Entry entry = entry(quota);
        if (entry == null || entry.state.max() == null) {
            return true;
        }
        Resources max = entry.state.max();
        Amount used = entry.total;
        return used.milliCpu + request.milliCpu() <= max.milliCpu() && used.memory + request.memoryBytes() <= max.memoryBytes()
                && (max.gpu() == Integer.MAX_VALUE || used.gpu + request.gpu() <= max.gpu());
    }

    /** Whether {@code request} fits the quota's max with nothing else of the quota running. */
    boolean maxCouldEverHold(QuotaId quota, Resources request) {
        Entry entry = entry(quota);
        if (entry == null || entry.state.max() == null) {
            return true;
        }
        Resources max = entry.state.max();
        return request.milliCpu() <= max.milliCpu() && request.memoryBytes() <= max.memoryBytes()
                && (max.gpu() == Integer.MAX_VALUE || request.gpu() <= max.gpu());
    }

    /**
     * Whether the pool may lend {@code request} more: its quotas' unused guarantees plus capacity no quota guarantees.
     * The latter is shared by every pool, so what all pools borrow beyond their own unused guarantees must fit in it
     * together.
     */
    boolean idleAvailable(String pool, Resources request) {
        // The arithmetic of Amount (saturating sums, plain comparisons) on longs: this runs for every borrower of a
        // cycle, and allocating a few amounts each time was most of its cost.
        Amount own = lendable.get(pool);
        Amount mine = borrowed.get(pool);
        long ownCpu = own == null ? 0 : own.milliCpu;
        long ownMemory = own == null ? 0 : own.memory;
        long ownGpu = own == null ? 0 : own.gpu;
        long mineCpu = mine == null ? 0 : mine.milliCpu;
        long mineMemory = mine == null ? 0 : mine.memory;
        long mineGpu = mine == null ? 0 : mine.gpu;
        if (mineCpu + request.milliCpu() > Amount.plus(ownCpu, unguaranteed.milliCpu) || mineMemory + request.memoryBytes() > Amount.plus(ownMemory, unguaranteed.memory)
                || mineGpu + request.gpu() > Amount.plus(ownGpu, unguaranteed.gpu)) {
            return false;
        }
        long beyondCpu = 0;
        long beyondMemory = 0;
        long beyondGpu = 0;
        for (var entry : borrowed.entrySet()) {
            Amount used = entry.getValue();
            boolean asking = entry.getKey().equals(pool);
            long cpu = asking ? Amount.plus(used.milliCpu, request.milliCpu()) : used.milliCpu;
            long memory = asking ? Amount.plus(used.memory, request.memoryBytes()) : used.memory;
            long gpu = asking ? Amount.plus(used.gpu, (long) request.gpu()) : used.gpu;
            Amount lends = lendable.get(entry.getKey());
            if (lends != null) {
                cpu = Amount.plus(cpu, -lends.milliCpu);
                memory = Amount.plus(memory, -lends.memory);
                gpu = Amount.plus(gpu, -lends.gpu);
            }
            beyondCpu = Amount.plus(beyondCpu, Math.max(0, cpu));
            beyondMemory = Amount.plus(beyondMemory, Math.max(0, memory));
            beyondGpu = Amount.plus(beyondGpu, Math.max(0, gpu));
        }
        return beyondCpu <= unguaranteed.milliCpu && beyondMemory <= unguaranteed.memory && beyondGpu <= unguaranteed.gpu;
    }

    /**
     * Whether the pool could lend {@code request} at all: if every guarantee in it were unused and nothing else were
     * borrowed. If not, a borrower waits until quotas change, not until runs end.
     */
    boolean couldEverLend(String pool, Resources request) {
        return new Amount().fitsWithin(request, lendLimit(pool));
    }

    /** Whether the quota's own guarantee could hold {@code request} if none of it were in use. */
    boolean guaranteeCouldEverHold(QuotaId quota, Resources request) {
        Entry entry = entry(quota);
        return entry != null && new Amount().fitsWithin(request, entry.own);
    }

    /** Whether all schedulable nodes together could hold {@code request}. */
    boolean clusterCouldHold(Resources request) {
        return new Amount().fitsWithin(request, schedulable);
    }

    Resources schedulableCapacity() {
        return schedulable.toResources();
    }

    /** The most the pool could ever lend: all its own guarantees and the capacity no quota guarantees. */
    Amount lendLimit(String pool) {
        Amount limit = guaranteedByPool.getOrDefault(pool, new Amount()).copy();
        limit.add(unguaranteed, 1);
        return limit;
    }

    /** Books a run's resources: on its quota's guarantee, or borrowed from its pool. */
    void charge(QuotaId quota, Resources amount, RealTimeResources where, int sign) {
        Entry entry = entry(quota);
        if (entry != null) {
            add(entry.total, amount, sign);
        }
        if (where == RealTimeResources.InQuota && entry != null) {
            add(entry.guaranteed, amount, sign);
            add(lendable.get(entry.pool), amount, -sign);
        } else {
            String pool = entry == null ? NO_POOL : entry.pool;
            Amount used = borrowed.get(pool);
            if (used == null) {
                used = new Amount();
                borrowed.put(pool, used);
                journal.record(() -> borrowed.remove(pool));
            }
            add(used, amount, sign);
        }
    }

    /** Changes one running sum, journaled: its value before is put back when the change is undone. */
    private void add(Amount sum, Resources amount, int sign) {
        save(sum);
        sum.add(amount, sign);
    }

    /** Journals a sum about to change, if a tentative is open: its value now is put back when the change is undone. */
    private void save(Amount sum) {
        if (journal.recording()) {
            long milliCpu = sum.milliCpu;
            long memory = sum.memory;
            long gpu = sum.gpu;
            journal.record(() -> {
                sum.milliCpu = milliCpu;
                sum.memory = memory;
                sum.gpu = gpu;
            });
        }
    }

    /**
     * A charged run's allocations are added ({@code sign} 1) or taken out (-1): what they hold on closed nodes counts as
     * capacity no quota guarantees while they hold it, so that the runs left on a cordoned node borrow from its capacity,
     * not from the capacity of the nodes still open. Its placements stay on the open nodes ({@link #schedulableCapacity}).
     */
    void holdOnClosed(List<Allocation> allocations, int sign) {
        if (closed.isEmpty()) {
            return;
        }
        boolean changed = false;
        for (Allocation allocation : allocations) {
            if (closed.contains(allocation.node())) {
                add(closedHeld, allocation.resources(), sign);
                changed = true;
            }
        }
        if (changed) {
            Amount next = schedulable.copy();
            next.add(closedHeld, 1);
            next.add(allOwn, -1);
            next.clampAtZero();
            save(unguaranteed);
            unguaranteed.setTo(next);
        }
    }

    /** What charged runs hold on closed nodes (a copy). */
    Amount closedHeld() {
        return closedHeld.copy();
    }

    /** A borrowing run of the quota becomes guaranteed. */
    void promote(QuotaId quota, Resources amount) {
        charge(quota, amount, RealTimeResources.NotInQuota, -1);
        charge(quota, amount, RealTimeResources.InQuota, 1);
    }

    /** A quota's own guarantee: its {@code min} less what its children are guaranteed ({@code null}: no such quota). */
    Amount own(QuotaId quota) {
        Entry entry = entry(quota);
        return entry == null ? null : entry.own.copy();
    }

    /** Every quota of the book, in no particular order. */
    java.util.Collection<QuotaState> quotas() {
        return quotas.values();
    }

    /** What all runs of a quota hold now, borrowed included (a copy; {@code null}: no such quota). */
    Amount totalOf(QuotaId quota) {
        Entry entry = entry(quota);
        return entry == null ? null : entry.total.copy();
    }

    /** Capacity of schedulable nodes that no quota guarantees: every pool may borrow it. */
    Amount unguaranteed() {
        return unguaranteed.copy();
    }

    /** GPUs left in a quota's own guarantee (0: none, or no such quota). */
    long freeGuaranteeGpus(QuotaId quota) {
        Entry entry = entry(quota);
        return entry == null ? 0 : Math.max(0, entry.own.gpu - entry.guaranteed.gpu);
    }

    /** What is left of a quota's own guarantee, for messages. */
    String freeGuarantee(QuotaId quota) {
        Entry entry = entry(quota);
        if (entry == null) {
            return Resources.NONE.toString();
        }
        Amount left = entry.own.copy();
        left.add(entry.guaranteed, -1);
        return left.toString();
    }

    /** Every running sum, as text, for tests that check a rollback puts them all back. */
    String contents() {
        StringBuilder out = new StringBuilder();
        new TreeMap<>(entries).forEach((id, entry) -> out.append(id).append(": guaranteed ").append(entry.guaranteed.exact())
                .append(", total ").append(entry.total.exact()).append('\n'));
        new TreeMap<>(lendable).forEach((pool, amount) -> out.append("lendable ").append(pool).append(' ').append(amount.exact()).append('\n'));
        new TreeMap<>(borrowed).forEach((pool, amount) -> out.append("borrowed ").append(pool).append(' ').append(amount.exact()).append('\n'));
        return out.toString();
    }
}
