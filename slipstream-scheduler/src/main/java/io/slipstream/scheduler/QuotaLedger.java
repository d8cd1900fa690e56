package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.ToLongFunction;

/**
 * What each quota and sharing pool holds and asks for now, derived from one snapshot (never stored, so it cannot drift
 * from the runs), with the scheduler's own rules for guarantees and pools ({@link QuotaBook}):
 *
 * <ul>
 *   <li><b>used</b>: what the quota's runs hold on nodes, runs being stopped included (their processes still hold
 *       it). <b>inQuota</b> and <b>borrowed</b> are its InQuota and NotInQuota parts: they add up to used.</li>
 *   <li><b>lent</b>: the part of its unused own guarantee that borrowers of its pool hold. A pool's borrowers are
 *       counted against its quotas' unused guarantees first (as the scheduler lends them), shared out among the quotas
 *       in proportion to what each leaves unused, and beyond that against capacity no quota guarantees.</li>
 *   <li><b>pending</b>: what its queued runs ask for, all instances together.</li>
 *   <li><b>weightedShare</b>: its share of its pool's idle capacity, as borrowers are ordered by ({@link FairShares}):
 *       what it (with its subtree) holds beyond its guarantee over what the pool could lend, in its dominant resource,
 *       divided by its weight; infinite for weight 0 while it borrows. <b>fairShare</b>: what it is compared with, the
 *       weighted share each quota of its level that borrows or has borrowers queued would hold were what they borrow
 *       together divided by weight ({@link FairShares#fairShare}): a quota above it is the one preemption for
 *       fairness takes from, and its borrowers wait {@code WaitingForFairShare}.</li>
 *   <li><b>subtreeUsed</b>: for a quota with children, what it and every quota below it hold ({@code null} for a leaf).</li>
 * </ul>
 */
public final class QuotaLedger {
    /** The runs without a quota (or whose quota is gone) form a pool of their own, which only borrows. */
    public static final String NO_QUOTA_POOL = QuotaBook.NO_POOL;

    /**
     * One quota's line. {@code guaranteed} is its {@code min}; {@code ownGuarantee} what of it its own runs may use
     * as InQuota (min less its children's); {@code max} is {@code null} when it has none; {@code weight} its
     * {@code fairSharing.weight}.
     */
    public record QuotaLine(QuotaId quota, String pool, Resources guaranteed, Resources ownGuarantee, Resources max, Resources used,
                            Resources inQuota, Resources borrowed, Resources lent, Resources pending, int admittedRuns, int pendingRuns,
                            double weight, double weightedShare, double fairShare, Resources subtreeUsed) {
    }

    /**
     * One sharing pool's line: its quotas' own guarantees and their runs' use, added up. {@code lendable}: the most it
     * could lend (its quotas' own guarantees and the capacity no quota guarantees), which shares are fractions of.
     */
    public record PoolLine(String pool, Resources guaranteed, Resources lendable, Resources used, Resources inQuota, Resources borrowed,
                           Resources lent, Resources pending, int admittedRuns, int pendingRuns) {
    }

    private final Map<QuotaId, QuotaLine> quotas;
    private final Map<String, PoolLine> pools;
    private final Resources capacity;
    private final Resources unguaranteed;

    private QuotaLedger(Map<QuotaId, QuotaLine> quotas, Map<String, PoolLine> pools, Resources capacity, Resources unguaranteed) {
        this.quotas = quotas;
        this.pools = pools;
        this.capacity = capacity;
        this.unguaranteed = unguaranteed;
    }

    /** Quotas by id. */
    public List<QuotaLine> quotas() {
        return List.copyOf(quotas.values());
    }

    public Optional<QuotaLine> quota(QuotaId id) {
        return Optional.ofNullable(quotas.get(id));
    }

    /** Pools by name; the pool of runs without a quota is there when such runs hold or ask for something. */
    public List<PoolLine> pools() {
        return List.copyOf(pools.values());
    }

    public Optional<PoolLine> pool(String name) {
        return Optional.ofNullable(pools.get(name));
    }

    /** What schedulable nodes have, and what runs hold on nodes closed to new instances (cordoned). */
    public Resources capacity() {
        return capacity;
    }

    /** What schedulable nodes have that no quota guarantees: every pool may borrow it. */
    public Resources unguaranteed() {
        return unguaranteed;
    }

    public static QuotaLedger of(ClusterSnapshot snapshot) {
        QuotaBook book = new QuotaBook(snapshot.quotas(), snapshot.nodes());
        Map<QuotaId, Sums> byQuota = new TreeMap<>();
        for (QuotaState quota : snapshot.quotas()) {
            byQuota.put(quota.id(), new Sums());
        }
        Map<String, Sums> byPool = new TreeMap<>();
        for (ActiveRun run : snapshot.active()) {
            // Each instance as it stands: an elastic run's extras may be on idle capacity while its minimum is guaranteed,
            // and those a shrink is removing still hold what they borrowed until they are gone.
            Amount inQuotaHeld = new Amount();
            Amount borrowedHeld = new Amount();
            for (Allocation a : run.allocations()) {
                (run.onIdleCapacity(a) ? borrowedHeld : inQuotaHeld).add(a.resources(), 1);
            }
            if (run.elastic() != null) {
                run.elastic().releasing().forEach(r -> (r.standing() == io.slipstream.api.run.RealTimeResources.InQuota ? inQuotaHeld : borrowedHeld)
                        .add(r.allocation().resources(), 1));
            }
            if (!run.stopping()) {
                book.holdOnClosed(run.allocations(), 1); // as the scheduler's book: a run left on a cordoned node holds its part
            }
            for (Sums sums : sumsOf(run.quota(), book, byQuota, byPool)) {
                sums.used.add(inQuotaHeld, 1);
                sums.used.add(borrowedHeld, 1);
                sums.inQuota.add(inQuotaHeld, 1);
                sums.borrowed.add(borrowedHeld, 1);
                sums.admitted++;
            }
        }
        for (PendingRun run : snapshot.pending()) {
            Amount asked = new Amount();
            run.instances().forEach(i -> asked.add(i.resources(), 1));
            for (Sums sums : sumsOf(run.quota(), book, byQuota, byPool)) {
                sums.pending.add(asked, 1);
                sums.waiting++;
            }
        }
        Map<String, List<QuotaState>> members = new TreeMap<>();
        for (QuotaState quota : snapshot.quotas()) {
            String pool = book.poolOf(quota.id());
            members.computeIfAbsent(pool, p -> new ArrayList<>()).add(quota);
            byPool.computeIfAbsent(pool, p -> new Sums()).guaranteed.add(book.own(quota.id()), 1);
        }
        Map<QuotaId, Amount> lent = new HashMap<>();
        members.forEach((pool, inPool) -> lent.putAll(lentBy(inPool, byPool.get(pool).borrowed, book, byQuota)));

        FairShares shares = FairShares.of(book, id -> byQuota.containsKey(id) ? byQuota.get(id).used : null);
        // Who wants idle capacity, as a cycle counts it: the quotas with borrowers queued, and every level above them.
        Set<FairShares.Member> wanting = Collections.newSetFromMap(new IdentityHashMap<>());
        for (PendingRun run : snapshot.pending()) {
            if (run.idleMode().mayBorrow() && book.exists(run.quota())) {
                FairShares.Member member = shares.leafOf(run.quota());
                while (member != null && wanting.add(member)) {
                    member = member.parent; // up to the pool's top, or to a level already marked
                }
            }
        }
        // A parent's own runs are often none: what its subtree holds is what one asks of it (its children's and its own).
        Map<QuotaId, Amount> subtree = new HashMap<>();
        Map<QuotaId, QuotaState> byId = new HashMap<>();
        snapshot.quotas().forEach(q -> byId.put(q.id(), q));
        for (QuotaState quota : snapshot.quotas()) {
            Set<QuotaId> seen = new java.util.HashSet<>();
            for (QuotaId up = quota.parent(); up != null && byId.containsKey(up) && seen.add(up); up = byId.get(up).parent()) {
                subtree.computeIfAbsent(up, id -> byQuota.get(id).used.copy()).add(byQuota.get(quota.id()).used, 1);
            }
        }
        Map<QuotaId, QuotaLine> quotaLines = new TreeMap<>();
        for (QuotaState quota : snapshot.quotas()) {
            Sums sums = byQuota.get(quota.id());
            quotaLines.put(quota.id(), new QuotaLine(quota.id(), book.poolOf(quota.id()), quota.min(), book.own(quota.id()).toResources(), quota.max(),
                    sums.used.toResources(), sums.inQuota.toResources(), sums.borrowed.toResources(), lent.get(quota.id()).toResources(),
                    sums.pending.toResources(), sums.admitted, sums.waiting, quota.weight(), shares.weightedShare(quota.id()),
                    shares.fairShare(shares.subtreeOf(quota.id()), wanting::contains),
                    subtree.containsKey(quota.id()) ? subtree.get(quota.id()).toResources() : null));
        }
        Map<String, PoolLine> poolLines = new TreeMap<>();
        byPool.forEach((pool, sums) -> {
            Amount poolLent = new Amount();
            members.getOrDefault(pool, List.of()).forEach(q -> poolLent.add(lent.get(q.id()), 1));
            poolLines.put(pool, new PoolLine(pool, sums.guaranteed.toResources(), book.lendLimit(pool).toResources(), sums.used.toResources(), sums.inQuota.toResources(),
                    sums.borrowed.toResources(), poolLent.toResources(), sums.pending.toResources(), sums.admitted, sums.waiting));
        });
        Amount capacity = new Amount();
        snapshot.nodes().stream().filter(NodeState::schedulable).forEach(node -> capacity.add(node.capacity(), 1));
        capacity.add(book.closedHeld(), 1);
        return new QuotaLedger(quotaLines, poolLines, capacity.toResources(), book.unguaranteed().toResources());
    }

    /** Where a run counts: its quota's line (if the quota exists) and its pool's. */
    private static List<Sums> sumsOf(QuotaId quota, QuotaBook book, Map<QuotaId, Sums> byQuota, Map<String, Sums> byPool) {
        Sums pool = byPool.computeIfAbsent(book.poolOf(quota), p -> new Sums());
        Sums own = book.exists(quota) ? byQuota.get(quota) : null;
        return own == null ? List.of(pool) : List.of(own, pool);
    }

    /**
     * Shares what the pool's borrowers hold out among its quotas' unused own guarantees, dimension by dimension: in
     * proportion to each quota's unused part, rounding down, and the units left to the largest remainders (then by id).
     * What a quota's own runs borrow (OnlyIdle on its own idle guarantee) is counted against its own unused guarantee
     * first: a team is not its own lender.
     */
    private static Map<QuotaId, Amount> lentBy(List<QuotaState> inPool, Amount poolBorrowed, QuotaBook book, Map<QuotaId, Sums> byQuota) {
        Map<QuotaId, Amount> unused = new TreeMap<>();
        Amount borrowed = poolBorrowed.copy();
        for (QuotaState quota : inPool) {
            Amount free = book.own(quota.id());
            free.add(byQuota.get(quota.id()).inQuota, -1);
            free.clampAtZero();
            Amount own = byQuota.get(quota.id()).borrowed;
            Amount self = new Amount();
            self.milliCpu = Math.min(own.milliCpu, free.milliCpu);
            self.memory = Math.min(own.memory, free.memory);
            self.gpu = Math.min(own.gpu, free.gpu);
            free.add(self, -1);
            borrowed.add(self, -1);
            unused.put(quota.id(), free);
        }
        borrowed.clampAtZero();
        Map<QuotaId, Amount> lent = new TreeMap<>();
        unused.keySet().forEach(id -> lent.put(id, new Amount()));
        share(unused, borrowed.milliCpu, a -> a.milliCpu, lent, (a, v) -> a.milliCpu = v);
        share(unused, borrowed.memory, a -> a.memory, lent, (a, v) -> a.memory = v);
        share(unused, borrowed.gpu, a -> a.gpu, lent, (a, v) -> a.gpu = v);
        return lent;
    }

    private interface Setter {
        void set(Amount amount, long value);
    }

    private static void share(Map<QuotaId, Amount> unused, long borrowed, ToLongFunction<Amount> dimension, Map<QuotaId, Amount> lent, Setter set) {
        BigInteger total = BigInteger.ZERO;
        for (Amount free : unused.values()) {
            total = total.add(BigInteger.valueOf(dimension.applyAsLong(free)));
        }
        if (total.signum() == 0 || borrowed <= 0) {
            return;
        }
        BigInteger lend = BigInteger.valueOf(borrowed).min(total);
        long left = lend.longValueExact();
        List<Map.Entry<QuotaId, BigInteger>> remainders = new ArrayList<>();
        for (var entry : unused.entrySet()) {
            BigInteger[] split = lend.multiply(BigInteger.valueOf(dimension.applyAsLong(entry.getValue()))).divideAndRemainder(total);
            long share = split[0].longValueExact();
            set.set(lent.get(entry.getKey()), share);
            left -= share;
            remainders.add(Map.entry(entry.getKey(), split[1]));
        }
        remainders.sort(Map.Entry.<QuotaId, BigInteger>comparingByValue(Comparator.reverseOrder()).thenComparing(Map.Entry.comparingByKey()));
        for (int i = 0; left > 0; i++, left--) {
            Amount amount = lent.get(remainders.get(i).getKey());
            set.set(amount, dimension.applyAsLong(amount) + 1);
        }
    }

    /** Running sums of one quota or pool. */
    private static final class Sums {
        final Amount guaranteed = new Amount();
        final Amount used = new Amount();
        final Amount inQuota = new Amount();
        final Amount borrowed = new Amount();
        final Amount pending = new Amount();
        int admitted;
        int waiting;
    }
}
