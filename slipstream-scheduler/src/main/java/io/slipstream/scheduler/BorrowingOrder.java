package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The order of a cycle's borrowing pass (step 4). Among the borrowers of a pool, the run whose quota's share
 * ({@link FairShares}) would be lowest once it is admitted goes first, then by priority, age and id: the share after
 * admission, so that a large run does not go before a small one of a quota that holds as much. Level by level down
 * a quota tree, as Kueue does: at each level the member whose share would be lowest with its own best run. Within a
 * quota, runs keep the queue order. Pools do not divide idle capacity among each other by weight: the next runs of
 * each are taken in queue order, as all borrowers were before.
 *
 * <p>A run that cannot be admitted now (a necessary condition fails, and capacity only shrinks in this pass) is
 * decided ({@link Refusal}) as soon as it would be its quota's first (or when it is first looked at, if no admission
 * could change that), and never holds its quota's place: else a run that could not be admitted would decide when its
 * quota's next runs go, and leaving it out of the queue (as the simulator does with runs that cannot fit) would change
 * the order.
 *
 * <p>Cost: the shares are built once per cycle; a decision compares again only the members on the decided run's path
 * (its quota's level and the levels above), never run against run. A pool that can lend none of its borrowers
 * anything (dry: the least any asks for is not idle in it, or not free in the cluster) is not ordered at all: its runs
 * are decided in queue order, from the start or once it went dry, since none of them can borrow.
 */
final class BorrowingOrder {
    /** A queued borrower and what its instances ask for together. */
    private static final class Queued {
        final PendingRun run;
        final Resources request;
        /** The slot it is queued in. */
        final Slot leaf;
        /** Its place in the list of runs (queue order). */
        final int position;
        /** The count of all admissions when it was last found able to borrow: it need not be checked again until the next. */
        int checkedAt = -1;
        /** Handed out, or found unable to borrow: decided. */
        boolean decided;

        Queued(PendingRun run, Resources request, Slot leaf, int position) {
            this.run = run;
            this.request = request;
            this.leaf = leaf;
            this.position = position;
        }

        PendingRun run() {
            return run;
        }

        Resources request() {
            return request;
        }
    }

    /** A member of the shares with borrowers queued in it or below it. */
    private static final class Slot {
        final FairShares.Member member;
        final Slot parent;
        /** Its pool's top. */
        final Slot top;
        final List<Slot> children = new ArrayList<>();
        /** The member's own queue, in queue order (members with children have none). */
        final ArrayDeque<Queued> queue = new ArrayDeque<>();
        /** The slot whose first run goes first in this subtree ({@code null}: none left). */
        Slot best;
        /** The member's share with that run admitted: what its parent compares (it changes only when this slot is stale). */
        double share;
        boolean stale = true;
        /** A pool's top: its admissions so far, which change every share of the pool. */
        int poolAdmissions;
        /** A pool's top: none of its runs could borrow from the start of the pass. */
        boolean dryFromStart;
        /** The reason last worked out for this slot's runs, and the count of its pool's admissions then. */
        String overShare;
        int overShareAt = -1;

        Slot(FairShares.Member member, Slot parent) {
            this.member = member;
            this.parent = parent;
            this.top = parent == null ? this : parent.top;
        }

        Queued first() {
            return best.queue.peek();
        }
    }

    /** How far over its fair part a quota must be for a wait to be put down to it (below, figures round to 1.0). */
    private static final double OVER = 1.05;

    /** Decides a run that cannot be admitted now (it waits), and says so; or says it may be. */
    interface Refusal {
        boolean waitsNow(PendingRun run, Resources request, BorrowingOrder order);
    }

    private final FairShares shares;
    private final Refusal upFront;
    private final Refusal refusal;
    private final Map<FairShares.Member, Slot> slots = new IdentityHashMap<>();
    private final PriorityQueue<Slot> pools = new PriorityQueue<>(Comparator.comparing((Slot top) -> top.first().run(), Scheduler.QUEUE_ORDER));
    /** The slot of the run last handed out, until it is decided. */
    private Slot current;
    private Queued handedOut;
    /** The slot whose first run is being decided (handed out, or found unable to borrow): whose figures a wait tells. */
    private Slot deciding;
    /** That run's place in the list of runs. */
    private int decidingPosition;
    /** Admissions so far, in every pool: each one takes capacity that a run checked before it may have counted on. */
    private int admissions;
    private final Predicate<String> dry;
    /**
     * Every run queued, by its place in the list ({@code null}: decided before it was queued): those of pools that went
     * dry are handed out in this order once every other pool's are decided.
     */
    private final Queued[] all;
    private boolean draining;
    private int leftover;

    /**
     * @param runs    the borrowers, in queue order; {@code requests}: what each asks for, all instances together
     * @param quotas  the quotas of the runs, so that every slot exists before any run is looked at
     * @param upFront decides the runs that can never be admitted in this pass, whatever is admitted before them: each run
     *                of a pool that can lend is asked when it is first looked at, in queue order, and is not queued if so
     * @param refusal decides the runs that cannot be admitted now (a condition that, once it holds, holds for the rest of the pass)
     * @param dry     whether a pool can give none of the runs anything for the rest of the pass (the least any asks for is not
     *                idle in it, or not free in the cluster): its runs are decided in queue order, not by share
     */
    BorrowingOrder(List<PendingRun> runs, List<Resources> requests, Set<QuotaId> quotas, FairShares shares, Refusal upFront,
            Refusal refusal, Predicate<String> dry) {
        this.shares = shares;
        this.upFront = upFront;
        this.refusal = refusal;
        this.dry = dry;
        List<Slot> tops = new ArrayList<>();
        // By equal ids, not id objects: a server reads one id object per run, and a table as large as the queue costs
        // more to probe than hashing two short names.
        Map<QuotaId, Slot> byQuota = new HashMap<>();
        for (QuotaId quota : quotas) {
            byQuota.computeIfAbsent(quota, q -> slotOf(shares.leafOf(q), tops));
        }
        for (Slot top : tops) {
            top.dryFromStart = dry.test(top.member.pool);
        }
        // Every slot exists now (whose quotas want idle capacity is known). The runs of a pool dry from the start are
        // decided here, in queue order, each looked at once: deciding them quota by quota walked the queue's objects out
        // of the order they were made in, and took several times as long in a full cluster. So are those of the other
        // pools that can never borrow in this pass (no decision before theirs could change that), which are most of a
        // long queue's; the others are queued.
        all = new Queued[runs.size()];
        for (int i = 0; i < runs.size(); i++) {
            PendingRun run = runs.get(i);
            Slot leaf = byQuota.get(run.quota());
            if (leaf == null) {
                leaf = slotOf(shares.leafOf(run.quota()), tops); // a quota the caller did not name: counted all the same
                byQuota.put(run.quota(), leaf);
                leaf.top.dryFromStart = leaf.top.dryFromStart || dry.test(leaf.top.member.pool);
            }
            deciding = leaf;
            decidingPosition = i;
            if (leaf.top.dryFromStart ? refusal.waitsNow(run, requests.get(i), this) : upFront.waitsNow(run, requests.get(i), this)) {
                continue;
            }
            all[i] = new Queued(run, requests.get(i), leaf, i);
            leaf.queue.add(all[i]);
        }
        for (Slot top : tops) {
            if (!top.dryFromStart) {
                refresh(top);
                if (top.best != null) {
                    pools.add(top);
                }
            }
        }
    }

    private Slot slotOf(FairShares.Member member, List<Slot> tops) {
        Slot slot = slots.get(member);
        if (slot == null) {
            Slot parent = member.parent == null ? null : slotOf(member.parent, tops);
            slot = new Slot(member, parent);
            if (parent == null) {
                tops.add(slot);
            } else {
                parent.children.add(slot);
            }
            slots.put(member, slot);
        }
        return slot;
    }

    /** The next run to decide ({@code null}: none is left); {@link #decided} must follow before the next call. */
    PendingRun next() {
        if (current != null) {
            throw new IllegalStateException("run " + handedOut.run().id() + " was not decided");
        }
        Slot top = pools.poll();
        if (top != null) {
            current = top.best;
            handedOut = current.queue.poll();
        } else {
            // What is left is the runs of pools that went dry: in queue order (no order among them matters: none can
            // borrow), each handed out as any other.
            draining = true;
            Queued next = null;
            while (next == null && leftover < all.length) {
                Queued queued = all[leftover++];
                next = queued == null || queued.decided ? null : queued;
            }
            if (next == null) {
                return null;
            }
            handedOut = next;
            current = handedOut.leaf;
        }
        handedOut.decided = true;
        deciding = current;
        decidingPosition = handedOut.position;
        return handedOut.run();
    }

    /** Whether the run last handed out was found able to borrow with nothing admitted since: then it still is. */
    boolean checkedSinceLastAdmission() {
        return handedOut.checkedAt == admissions;
    }

    /** The place in the list of runs of the run being decided (handed out, or found unable to borrow). */
    int position() {
        return decidingPosition;
    }

    /** The member that run's quota is counted at. */
    FairShares.Member leaf() {
        return deciding.member;
    }

    /** What the run last handed out asks for, all its instances together. */
    Resources request() {
        return handedOut.request();
    }

    /** The run last handed out was admitted (it now holds its request) or waits. */
    void decided(boolean admitted) {
        Slot top = current.top;
        for (Slot slot = current; slot != null; slot = slot.parent) {
            slot.stale = true;
        }
        if (admitted) {
            shares.charge(current.member, handedOut.request());
            top.poolAdmissions++;
            admissions++;
        }
        current = null;
        // A pool that went dry is not refreshed (that would walk its queues): its runs are left to the end. Only an
        // admission takes capacity, so only after one can a pool have gone dry.
        if (!draining && !(admitted && dry.test(top.member.pool))) {
            refresh(top);
            if (top.best != null) {
                pools.add(top);
            }
        }
    }

    /** Finds the slot whose first run goes first below {@code slot}, comparing anew only the children that changed. */
    private void refresh(Slot slot) {
        if (!slot.stale) {
            return;
        }
        slot.stale = false;
        if (slot.children.isEmpty()) {
            deciding = slot;
            while (!slot.queue.isEmpty()) {
                Queued head = slot.queue.peek();
                if (head.checkedAt == admissions) {
                    break; // found able with nothing admitted since: it still is
                }
                decidingPosition = head.position;
                if (!refusal.waitsNow(head.run, head.request, this)) {
                    head.checkedAt = admissions;
                    break;
                }
                slot.queue.poll().decided = true;
            }
            slot.best = slot.queue.isEmpty() ? null : slot;
        } else {
            Slot best = null;
            for (Slot child : slot.children) {
                refresh(child);
                if (child.best != null && (best == null || child.share < best.share
                        || (child.share == best.share && Scheduler.QUEUE_ORDER.compare(child.first().run(), best.first().run()) < 0))) {
                    best = child;
                }
            }
            slot.best = best == null ? null : best.best;
        }
        if (slot.best != null && slot.parent != null) {
            slot.share = shares.share(slot.member, slot.first().request());
        }
    }

    /**
     * Whether the run being decided, which waits for idle capacity, waits because its quota (or a subtree above it)
     * holds more than its fair part, so that others of its pool go first: the figures, else {@code null}.
     */
    String overFairShare() {
        Slot leaf = deciding;
        Slot top = leaf.top;
        if (leaf.overShareAt == top.poolAdmissions) {
            return leaf.overShare;
        }
        String reason = null;
        double worst = OVER;
        for (FairShares.Member member = leaf.member; member.parent != null; member = member.parent) {
            double times = shares.timesFairShare(member, slots::containsKey);
            if (times >= worst && member.quota != null) {
                worst = times;
                reason = Double.isInfinite(times)
                        ? "quota " + member.quota + " has fairSharing weight 0 and borrows already: it borrows only what no other quota of pool "
                        + member.pool + " asks for"
                        : "quota " + member.quota + " holds " + tenths(times) + " times its fair share of pool " + member.pool
                        + "; idle capacity goes first to the quotas below theirs";
            }
        }
        leaf.overShare = reason;
        leaf.overShareAt = top.poolAdmissions;
        return reason;
    }

    /** {@code 2.0}, {@code 12.3}: a figure to one decimal, the same in every locale. */
    static String tenths(double value) {
        long tenths = Math.round(value * 10);
        return tenths / 10 + "." + tenths % 10;
    }
}
