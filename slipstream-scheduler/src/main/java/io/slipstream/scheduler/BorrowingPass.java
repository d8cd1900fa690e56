package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.WaitReason;
import io.slipstream.api.spec.Resources;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Step 4 of a cycle: the runs that may use idle capacity, as far as their pools lend, in share order
 * ({@link BorrowingOrder}). A run that cannot borrow now is told why as soon as it is its quota's first, so that it
 * never holds its quota's place in the order; one whose quota holds more than its fair share is told that.
 */
final class BorrowingPass {
    /** What the cycle does with a decision: it owns the decisions, the waits and the allowed models' bookkeeping. */
    interface Outcomes {
        void admit(PendingRun run, List<Placement> placements, Resources request);

        /** The run ({@code borrower}: its place in {@link BorrowingPass#run}'s list) waits. */
        void wait(int borrower, PendingRun run, WaitReason reason, String message);
    }

    private final QuotaBook book;
    private final WorkingCluster cluster;
    private final AllowedModels allowed;
    private final Outcomes outcomes;
    /** Guarantees do not change in this pass: one message per quota, however long its queue. */
    private final Map<QuotaId, String> quotaInUse = new HashMap<>();
    /**
     * What is idle changes only when a run is admitted: the messages that tell it, by what they depend on, until the
     * next admission. Formatting them for each of tens of thousands of waiting runs was most of this pass's time.
     */
    private final Map<List<Object>, String> idleMessages = new HashMap<>();
    private int admitted;
    private int idleMessagesAt;
    /**
     * By place in {@link #run}'s list, for each run told to wait for idle capacity or for its fair share (who may preempt for
     * fairness), the member its quota is counted at; {@code null} for the others.
     */
    private FairShares.Member[] waitingForIdle = new FairShares.Member[0];
    /** By place in {@link #run}'s list, the runs told to wait for idle capacity or for their fair share, with a quota or without. */
    private boolean[] toldToWaitForIdle = new boolean[0];
    /** By place in {@link #run}'s list, the runs found to pass every condition that this pass does not change: not checked again. */
    private boolean[] cleared = new boolean[0];

    BorrowingPass(QuotaBook book, WorkingCluster cluster, AllowedModels allowed, Outcomes outcomes) {
        this.book = book;
        this.cluster = cluster;
        this.allowed = allowed;
        this.outcomes = outcomes;
    }

    /**
     * @param borrowers the runs the guaranteed pass left undecided, in queue order; {@code requests}: what each asks for,
     *                  all instances together; {@code quotas}: their quotas
     */
    void run(List<PendingRun> borrowers, List<Resources> requests, Set<QuotaId> quotas) {
        if (borrowers.isEmpty()) {
            return;
        }
        // The least any borrower asks for, per resource: a pool that cannot lend it (or a cluster without it free) gives
        // nobody anything this pass.
        long cpu = Long.MAX_VALUE;
        long memory = Long.MAX_VALUE;
        int gpu = Integer.MAX_VALUE;
        for (Resources request : requests) {
            cpu = Math.min(cpu, request.milliCpu());
            memory = Math.min(memory, request.memoryBytes());
            gpu = Math.min(gpu, request.gpu());
        }
        Resources least = new Resources(cpu, memory, gpu, null);
        waitingForIdle = new FairShares.Member[borrowers.size()];
        toldToWaitForIdle = new boolean[borrowers.size()];
        cleared = new boolean[borrowers.size()];
        BorrowingOrder order = new BorrowingOrder(borrowers, requests, quotas, FairShares.of(book), this::refusedUpFront, this::waitsNow,
                pool -> !book.idleAvailable(pool, least) || !cluster.freeWhere(null).covers(least));
        for (PendingRun run = order.next(); run != null; run = order.next()) {
            order.decided(admit(run, order.request(), order));
        }
    }

    /** Admits the run if its pool lends what it asks for and it fits now, else tells it why not; returns whether it was admitted. */
    private boolean admit(PendingRun run, Resources request, BorrowingOrder order) {
        Set<String> model = allowed.of(run.quota(), RealTimeResources.NotInQuota, request);
        // Unless it was found able to borrow with nothing admitted since, what it was checked against may have been
        // taken: checked again, but for the rough placement (the placement below is the exact one).
        if (!order.checkedSinceLastAdmission() && (refusedForGood(run, request, model, order) || mayNotBorrowNow(run, request, model, order))) {
            return false;
        }
        List<Placement> placements = cluster.placeGang(run.instances(), model);
        if (placements == null) {
            waitForIdleCapacity(run, order, noFit(run, request, model));
            return false;
        }
        outcomes.admit(run, placements, request);
        admitted++;
        return true;
    }

    /**
     * Whether the run cannot borrow now (it then waits, with its reason): every condition of admission but the placement
     * itself, which is only roughly checked. Once one fails it fails for the rest of the pass: capacity only shrinks.
     */
    private boolean waitsNow(PendingRun run, Resources request, BorrowingOrder order) {
        Set<String> model = allowed.of(run.quota(), RealTimeResources.NotInQuota, request);
        if (refusedForGood(run, request, model, order) || mayNotBorrowNow(run, request, model, order)) {
            return true;
        }
        if (!cluster.mayFitNow(run.instances(), run.largestInstance(), model)) {
            waitForIdleCapacity(run, order, noFit(run, request, model));
            return true;
        }
        return false;
    }

    /**
     * Whether the run can never borrow in this pass, whatever is admitted before it (it then waits, with its reason):
     * decided when it is first looked at, so that it is never queued.
     */
    private boolean refusedUpFront(PendingRun run, Resources request, BorrowingOrder order) {
        return refusedForGood(run, request, allowed.of(run.quota(), RealTimeResources.NotInQuota, request), order);
    }

    /**
     * The conditions of admission that what is admitted in this pass does not change (a run that fails one waits, with
     * its reason; one that passed them all is not checked again): they are told first, since the run waits for more
     * than what runs hold (for quotas or nodes to change).
     */
    private boolean refusedForGood(PendingRun run, Resources request, Set<String> model, BorrowingOrder order) {
        if (cleared[order.position()]) {
            return false;
        }
        if (!book.maxCouldEverHold(run.quota(), request)) {
            wait(order, run, WaitReason.ExceedsQuotaMax, "it asks for " + request + ", more than its quota's max allows even with nothing"
                    + " else of the quota running: it waits until the max grows");
            return true;
        }
        if (!run.idleMode().mayBorrow() && book.exists(run.quota()) && !book.guaranteeCouldEverHold(run.quota(), request)) {
            wait(order, run, WaitReason.ExceedsGuarantee, "it asks for " + request + ", more than its quota guarantees its own runs ("
                    + book.own(run.quota()).toResources() + "), and it may not borrow (idleResources: Disabled): it waits until the quota grows");
            return true;
        }
        if (!run.idleMode().mayBorrow()) {
            String message = quotaInUse.computeIfAbsent(run.quota(), q -> "its quota's guarantee is in use (" + book.freeGuarantee(q) + " left)");
            wait(order, run, WaitReason.WaitingForQuota, message);
            return true;
        }
        Resources largest = run.largestInstance();
        if (!cluster.couldEverFit(largest, model)) {
            wait(order, run, WaitReason.NoNodeFits, "no node can ever hold its largest instance (" + largest + ")");
            return true;
        }
        if (!book.clusterCouldHold(request)) {
            wait(order, run, WaitReason.NoNodeFits, "its instances together ask for " + request + ", more than all schedulable nodes have ("
                    + book.schedulableCapacity() + ")");
            return true;
        }
        String never = cluster.localityNeverFits(run.instances());
        if (never != null) {
            wait(order, run, WaitReason.NoNodeFits, never);
            return true;
        }
        String pool = book.poolOf(run.quota());
        if (!book.couldEverLend(pool, request)) {
            wait(order, run, WaitReason.NothingToBorrow, run.quota() == null || !book.exists(run.quota())
                    ? "it has no quota, and runs without one may only use what no quota guarantees: " + book.unguaranteed().toResources()
                    + " of this cluster, less than it asks for (" + request + "); give its job a quota (spec.quota) or make the guarantees smaller"
                    : "its pool (" + pool + ") could lend at most " + book.lendLimit(pool).toResources() + " even with every guarantee in it unused, less than it asks for ("
                    + request + "); it waits until quotas change");
            return true;
        }
        cleared[order.position()] = true;
        return false;
    }

    /** The conditions of admission that admissions change: what its quota's runs hold, what its pool lends now. */
    private boolean mayNotBorrowNow(PendingRun run, Resources request, Set<String> model, BorrowingOrder order) {
        return exceedsMax(run, request, order) || waitsForIdle(run, request, model, order);
    }

    /** Whether its quota's max does not hold it, with what the quota's runs hold now (it then waits, with its reason). */
    private boolean exceedsMax(PendingRun run, Resources request, BorrowingOrder order) {
        if (book.fitsMax(run.quota(), request)) {
            return false;
        }
        wait(order, run, WaitReason.WaitingForQuota, "its quota's max would be exceeded, with what its other runs hold");
        return true;
    }

    /** Whether its pool cannot lend it what it asks for now (it then waits, with its reason). */
    private boolean waitsForIdle(PendingRun run, Resources request, Set<String> model, BorrowingOrder order) {
        String pool = book.poolOf(run.quota());
        if (book.idleAvailable(pool, request)) {
            return false;
        }
        waitForIdleCapacity(run, order, idleMessage(List.of(pool, request, model == null ? List.of() : model),
                () -> "its sharing pool cannot lend " + request + " now: its quotas' unused guarantees and what no quota guarantees, less what"
                        + " is borrowed already, are less (idle on the nodes it may use: " + cluster.freeWhere(model) + ")"));
        return true;
    }

    /** A message about what is idle: made once per key until the next admission. */
    private String idleMessage(List<Object> key, java.util.function.Supplier<String> message) {
        if (idleMessagesAt != admitted) {
            idleMessages.clear();
            idleMessagesAt = admitted;
        }
        return idleMessages.computeIfAbsent(key, k -> message.get());
    }

    /** Why it does not fit what is idle: too little of it, or in pieces its instances do not fit (a gang of whole nodes). */
    private String noFit(PendingRun run, Resources request, Set<String> model) {
        String miss = cluster.localityMiss(run.instances(), model);
        if (miss != null) {
            return "no idle capacity where its instances fit now: " + miss;
        }
        return idleMessage(List.of("noFit", run.instances().size(), run.largestInstance(), request, model == null ? List.of() : model),
                () -> noFitNow(run, request, model));
    }

    private String noFitNow(PendingRun run, Resources request, Set<String> model) {
        Resources idle = cluster.freeWhere(model);
        return idle.covers(request)
                ? "no idle capacity where its instances fit now: " + idle + " is idle where it may run, but not in pieces that hold its "
                        + run.instances().size() + " instance(s) (the largest asks for " + run.largestInstance() + ")"
                : "no idle capacity where its instances fit now: " + idle + " is idle where it may run, less than it asks for (" + request + ")";
    }

    /**
     * The borrowers told to wait for idle capacity or for their fair share, those that preemption for fairness may serve:
     * by quota (runs without one, or of a quota that is gone, are left out), each quota's by their place in {@link #run}'s
     * list, in queue order. Grouped by the members the pass found for them: the runs' quota ids (one object per run, as
     * a server reads them) are not hashed again.
     */
    Map<QuotaId, ArrayDeque<Integer>> waitingForIdleCapacity() {
        Map<FairShares.Member, ArrayDeque<Integer>> byLeaf = new IdentityHashMap<>();
        Map<QuotaId, ArrayDeque<Integer>> byQuota = new LinkedHashMap<>();
        for (int i = 0; i < waitingForIdle.length; i++) {
            FairShares.Member leaf = waitingForIdle[i];
            if (leaf != null && leaf.quota != null) {
                byLeaf.computeIfAbsent(leaf, l -> byQuota.computeIfAbsent(l.quota, q -> new ArrayDeque<>())).add(i);
            }
        }
        return byQuota;
    }

    /** The places in {@link #run}'s list of every run told to wait for idle capacity or for its fair share, in queue order. */
    List<Integer> waitingForIdlePlaces() {
        List<Integer> places = new java.util.ArrayList<>();
        for (int i = 0; i < toldToWaitForIdle.length; i++) {
            if (toldToWaitForIdle[i]) {
                places.add(i);
            }
        }
        return places;
    }

    /** The run being decided waits. */
    private void wait(BorrowingOrder order, PendingRun run, WaitReason reason, String message) {
        outcomes.wait(order.position(), run, reason, message);
    }

    /** Other quotas of its pool go first while its quota holds more than its fair share: say so, with the figures. */
    private void waitForIdleCapacity(PendingRun run, BorrowingOrder order, String message) {
        waitingForIdle[order.position()] = order.leaf();
        toldToWaitForIdle[order.position()] = true;
        String unfair = order.overFairShare();
        if (unfair != null) {
            wait(order, run, WaitReason.WaitingForFairShare, unfair);
        } else {
            wait(order, run, WaitReason.WaitingForIdleCapacity, message);
        }
    }
}
