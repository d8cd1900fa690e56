package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Weighted shares of each sharing pool's idle capacity: a pure function of the quotas and of what their runs hold.
 *
 * <p>A quota's share is what its runs hold beyond its guarantee, as a fraction of what its pool could lend (the pool's
 * own guarantees and the capacity no quota guarantees, {@link QuotaBook#lendLimit}), in the resource (GPU, cpu or
 * memory) where that fraction is largest, divided by its weight. Weight 0: an infinite share while it holds anything
 * beyond its guarantee, so it is served after every other quota of its pool.
 *
 * <p>Quotas are compared level by level down their tree, as Kueue's hierarchical fair sharing: a quota with children
 * counts its whole subtree (its runs and its descendants', beyond all their guarantees), so a subtree's part is
 * divided among its children by their weights. A quota's own runs stand beside its children as one more member of
 * that level, with the quota's weight. Dedicated quotas (no parents) are the members of their pool's one level.
 *
 * <p>Built once per cycle (or per ledger); {@link #charge} keeps it current as a cycle admits borrowers: only the
 * members on the path from the quota to its pool's top change. Not thread-safe.
 */
final class FairShares {
    /** The deepest a quota tree is followed: as {@link QuotaBook}'s pools, and a cycle of parents ends there. */
    private static final int MAX_DEPTH = 64;

    /** One member of a level: a quota's subtree, the own runs of a quota that has children, or a pool's top. */
    static final class Member {
        /** The quota ({@code null}: a pool's top). */
        final QuotaId quota;
        final String pool;
        final Member parent;
        final double weight;
        final List<Member> children = new ArrayList<>();
        final Amount guarantee = new Amount();
        final Amount used = new Amount();

        Member(QuotaId quota, String pool, Member parent, double weight) {
            this.quota = quota;
            this.pool = pool;
            this.parent = parent;
            this.weight = weight;
            if (parent != null) {
                parent.children.add(this);
            }
        }
    }

    private final Map<String, Member> tops = new TreeMap<>();
    /** Where each quota's own runs are counted. */
    private final Map<QuotaId, Member> leaves = new HashMap<>();
    /** Each quota's subtree (its leaf when it has no children). */
    private final Map<QuotaId, Member> subtrees = new HashMap<>();
    private final Map<String, Amount> lendLimits = new HashMap<>();
    /** The runs without a quota (or with a quota that is gone): a pool of one member, which shares with nobody. */
    private final Member noQuota;

    private FairShares(QuotaBook book, Function<QuotaId, Amount> used) {
        List<QuotaState> quotas = new ArrayList<>(book.quotas());
        quotas.sort(Comparator.comparing(QuotaState::id));
        Map<QuotaId, List<QuotaState>> children = new HashMap<>();
        List<QuotaState> roots = new ArrayList<>();
        for (QuotaState quota : quotas) {
            QuotaId parent = treeParent(quota, book);
            if (parent == null) {
                roots.add(quota);
            } else {
                children.computeIfAbsent(parent, p -> new ArrayList<>()).add(quota);
            }
        }
        for (QuotaState root : roots) {
            String pool = book.poolOf(root.id());
            Member top = tops.computeIfAbsent(pool, p -> new Member(null, p, null, 1));
            lendLimits.computeIfAbsent(pool, book::lendLimit);
            add(root, top, children, book, used, 0);
        }
        Member noQuotaTop = tops.computeIfAbsent(QuotaBook.NO_POOL, p -> new Member(null, p, null, 1));
        lendLimits.computeIfAbsent(QuotaBook.NO_POOL, book::lendLimit);
        noQuota = new Member(null, QuotaBook.NO_POOL, noQuotaTop, 1);
    }

    /** The shares of a cycle's book: what each quota's runs hold as the book has it now. */
    static FairShares of(QuotaBook book) {
        return new FairShares(book, book::totalOf);
    }

    /** The shares of quotas whose runs hold {@code used} (by quota id; {@code null}: nothing). */
    static FairShares of(QuotaBook book, Function<QuotaId, Amount> used) {
        return new FairShares(book, used);
    }

    /** The parent a quota has in its pool's tree: none if it has none, it is gone, of another pool, or parents go round. */
    private static QuotaId treeParent(QuotaState quota, QuotaBook book) {
        QuotaId parent = quota.parent();
        if (parent == null || !book.exists(parent) || !book.poolOf(parent).equals(book.poolOf(quota.id()))) {
            return null;
        }
        QuotaId above = parent;
        for (int depth = 0; above != null; depth++) {
            if (above.equals(quota.id()) || depth >= MAX_DEPTH) {
                return null;
            }
            QuotaState next = book.quota(above);
            above = next == null ? null : next.parent();
        }
        return parent;
    }

    private void add(QuotaState quota, Member parent, Map<QuotaId, List<QuotaState>> children, QuotaBook book, Function<QuotaId, Amount> used,
            int depth) {
        List<QuotaState> mine = depth < MAX_DEPTH ? children.getOrDefault(quota.id(), List.of()) : List.of();
        Member subtree = new Member(quota.id(), parent.pool, parent, quota.weight());
        subtrees.put(quota.id(), subtree);
        Member leaf = mine.isEmpty() ? subtree : new Member(quota.id(), parent.pool, subtree, quota.weight());
        leaves.put(quota.id(), leaf);
        Amount own = book.own(quota.id());
        Amount holds = used.apply(quota.id());
        for (Member m = leaf; m != null; m = m.parent) {
            m.guarantee.add(own, 1);
            if (holds != null) {
                m.used.add(holds, 1);
            }
        }
        for (QuotaState child : mine) {
            add(child, subtree, children, book, used, depth + 1);
        }
    }

    /** Where the runs of a quota are counted (the pool of runs without a quota for {@code null} or a quota that is gone). */
    Member leafOf(QuotaId quota) {
        Member leaf = quota == null ? null : leaves.get(quota);
        return leaf == null ? noQuota : leaf;
    }

    /** A quota's weighted share: of its whole subtree (0 for a quota that is not in the book). */
    double weightedShare(QuotaId quota) {
        Member subtree = subtrees.get(quota);
        return subtree == null ? 0 : share(subtree, Resources.NONE);
    }

    /** The member's weighted share if it held {@code extra} more. */
    double share(Member member, Resources extra) {
        return share(member, extra, 1);
    }

    /** The member's weighted share if it held {@code amount} more ({@code sign} 1) or less (-1). */
    double share(Member member, Resources amount, int sign) {
        Amount lend = lendLimits.get(member.pool);
        long gpu = beyond(member.used.gpu, sign * (long) amount.gpu(), member.guarantee.gpu);
        long cpu = beyond(member.used.milliCpu, sign * amount.milliCpu(), member.guarantee.milliCpu);
        long memory = beyond(member.used.memory, sign * amount.memoryBytes(), member.guarantee.memory);
        if (gpu == 0 && cpu == 0 && memory == 0) {
            return 0;
        }
        if (member.weight == 0) {
            return Double.POSITIVE_INFINITY;
        }
        // A resource the pool cannot lend has no fraction (it cannot be borrowed either).
        double dominant = Math.max(fraction(gpu, lend.gpu), Math.max(fraction(cpu, lend.milliCpu), fraction(memory, lend.memory)));
        return dominant / member.weight;
    }

    /** What {@code used + extra} is beyond {@code guarantee} (0 if not). */
    private static long beyond(long used, long extra, long guarantee) {
        return Math.max(0, Amount.plus(Amount.plus(used, extra), -guarantee));
    }

    private static double fraction(long part, long whole) {
        return whole > 0 ? (double) part / whole : 0;
    }

    /** A run of the quota now holds {@code amount} more: its members up to its pool's top count it. */
    void charge(QuotaId quota, Resources amount) {
        charge(leafOf(quota), amount);
    }

    /** A run counted at {@code leaf} now holds {@code amount} more. */
    void charge(Member leaf, Resources amount) {
        charge(leaf, amount, 1);
    }

    /** A run counted at {@code leaf} now holds {@code amount} more ({@code sign} 1) or less (-1). */
    void charge(Member leaf, Resources amount, int sign) {
        for (Member m = leaf; m != null; m = m.parent) {
            m.used.add(amount, sign);
        }
    }

    /**
     * How many times its fair part the member holds among its siblings that want some ({@code wants}: borrow now or
     * have borrowers queued): its weighted share against {@link #fairShare}. 0 while it borrows nothing; infinite for
     * weight 0 while it borrows.
     */
    double timesFairShare(Member member, Predicate<Member> wants) {
        double mine = share(member, Resources.NONE);
        if (mine == 0 || Double.isInfinite(mine)) {
            return mine;
        }
        double fair = fairShare(member, wants);
        return fair == 0 ? 1 : mine / fair;
    }

    /**
     * The member's fair share, in the units of its weighted share: the weighted share each of its level's members that
     * want some ({@code wants}, or borrow now; the member itself if it does) would hold, were what they borrow
     * together divided by their weights. 0 while none of them borrows; the member's own share at a pool's top.
     */
    double fairShare(Member member, Predicate<Member> wants) {
        if (member.parent == null) {
            return share(member, Resources.NONE);
        }
        double weights = 0;
        double weighted = 0;
        for (Member sibling : member.parent.children) {
            double share = share(sibling, Resources.NONE);
            if (sibling.weight > 0 && Double.isFinite(share) && (share > 0 || wants.test(sibling))) {
                weights += sibling.weight;
                weighted += sibling.weight * share;
            }
        }
        return weights == 0 ? 0 : weighted / weights;
    }

    /** A quota's whole subtree, as {@link #weightedShare} counts it ({@code null}: not in the book). */
    Member subtreeOf(QuotaId quota) {
        return subtrees.get(quota);
    }
}
