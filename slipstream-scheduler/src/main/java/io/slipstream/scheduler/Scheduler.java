package io.slipstream.scheduler;

import static io.slipstream.scheduler.ClusterState.total;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.WaitReason;
import io.slipstream.api.spec.Resources;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The scheduling core: a pure function of its input. No I/O, no clock reads, no randomness; ties are broken by
 * names and ids, never by hash order, so the same snapshot always gives the same decisions. Whatever a cycle tries
 * (a gang's placement, a set of victims, a plan of moves) it tries in a {@link Tentative}, kept only if it works; the
 * cycle itself runs in one that is never kept, so the state it works on is left as it was.
 *
 * <p>An elastic run ({@link PendingRun#minReplicas}, docs/elastic.md) is decided by its minimum in steps 3 to 5, as a
 * gang; its extras come in step 6. Extras are the lowest class of use: a queued run's minimum comes before them.
 *
 * <p>One cycle, in numbered steps:
 * <ol>
 *   <li>Build the working cluster and the quota ledger from the active runs; count the whole nodes that queued
 *       whole-node gangs fitting their guarantee will need, kept from smaller requests ({@link WholeNodeDemand}).</li>
 *   <li>Promote: a run of an {@code Acceptable} job on idle capacity whose quota now has room becomes InQuota.</li>
 *   <li>Guaranteed pass: queued runs that fit their quota's guarantee, by priority, then age, then id (but runs whose
 *       reclaimed capacity was just given back go first: it is theirs); its quota's own runs make room under its max or
 *       (LowerPriority) in its guarantee ({@link OwnQuotaRoom}). Each is placed (all instances or none); if it does
 *       not fit, borrowers are reclaimed ({@link VictimSearch}: only victims whose removal helps), and the freed
 *       capacity is held for it until the victims are gone ({@link ReclaimHolds}). If nothing can be reclaimed, a run
 *       with an instance of half a node or more may move smaller checkpointing guaranteed runs of quotas that allow it
 *       ({@link MovePlanner}, bounded by {@link Defragmentation}); else the first such run of each quota holds the nodes
 *       it will need, so small runs cannot starve it. Such runs are told their quota has room as far as its guarantee
 *       goes, in queue order: the others wait for their quota, and a later run that fits its guarantee and max may take
 *       that room only on free nodes (it reclaims, shrinks or moves nothing for it). Elastic runs' extras go first: a run its guarantee does not hold takes what its own
 *       quota's elastic runs' extras use of it, room under its max takes its quota's borrowed extras before it stops a
 *       borrower whole, and a reclaim takes extras on idle capacity before it stops any run whole ({@link ElasticReclaim},
 *       {@link Decision.Shrink}).</li>
 *   <li>Borrowing pass: the other runs that may use idle capacity, as far as their pool lends: of each pool, first the run
 *       whose quota's weighted share would be lowest once it is admitted, then by priority, age and id
 *       ({@link BorrowingPass}, {@link BorrowingOrder}, {@link FairShares}).</li>
 *   <li>Preemption for fairness (unless {@link FairSharingPreemption#Never}): a borrower still waiting may preempt other
 *       quotas' borrowers of its pool that hold more than their fair share ({@link FairPreemption}); what they free is
 *       held for it until they are gone, as for a reclaim; it takes elastic runs' extras on idle capacity first
 *       ({@link FairExtras}). Before it (5a), a borrower still waiting takes elastic runs' extras on idle capacity (of its
 *       priority or lower) when they make room for it.</li>
 *   <li>Elastic runs get extras: those admitted this cycle and the running ones with vacant slots and no shrink in
 *       flight, one instance at a time, on their guarantee first (less what runs that wait for nodes were promised of
 *       it), then on idle capacity ({@link ElasticPass}, {@link Decision.Grow}).</li>
 *   <li>Every run left queued gets a reason and its position in its quota's queue.</li>
 * </ol>
 */
public final class Scheduler {
    /**
     * Queue order: higher priority first, then older, then by id. Written out rather than composed of the JDK's
     * comparators: their shared lambdas call key extractors that every other comparator in the JVM calls too, so the
     * JIT did not inline them, and sorting a queue of 50,000 runs is the largest single part of a cycle.
     */
    public static final Comparator<PendingRun> QUEUE_ORDER = PendingRun::inQueueOrder;

    private final Defragmentation defragmentation;
    /** Step 5's rule ({@code null}: no preemption for fairness). */
    private final FairPreemption.Rule fairRule;

    public Scheduler() {
        this(Defragmentation.DEFAULT);
    }

    public Scheduler(Defragmentation defragmentation) {
        this(defragmentation, FairSharingPreemption.DEFAULT);
    }

    public Scheduler(Defragmentation defragmentation, FairSharingPreemption fairSharing) {
        this(defragmentation, FairPreemption.Rule.of(Objects.requireNonNull(fairSharing, "fairSharing is null")));
    }

    /** With a rule of its own (tests weaken it, to see that the property tests catch a loop). */
    Scheduler(Defragmentation defragmentation, FairPreemption.Rule fairRule) {
        this.defragmentation = Objects.requireNonNull(defragmentation, "defragmentation is null");
        this.fairRule = fairRule;
    }

    public CycleResult schedule(ClusterSnapshot snapshot, Instant now) {
        return schedule(ClusterState.of(snapshot), snapshot.pending(), now);
    }

    /**
     * One cycle over a state kept between cycles: the same decisions as for a snapshot of the same nodes, quotas and
     * active runs. The state is left as it was; applying the decisions is the caller's (who then updates the state).
     */
    public CycleResult schedule(ClusterState state, List<PendingRun> pending, Instant now) {
        Tentative cycle = state.cycle();
        try {
            return new Cycle(state, pending, now, defragmentation, fairRule).run();
        } finally {
            cycle.discard(); // never kept: every change of the cycle is undone
        }
    }

    /** The state of one cycle. */
    private static final class Cycle {
        private final ClusterState state;
        private final List<PendingRun> pending;
        private final Instant now;
        private final WorkingCluster cluster;
        private final QuotaBook book;
        private final List<Decision> decisions = new ArrayList<>();
        /** The queue, in queue order. */
        private List<PendingRun> queue;
        /**
         * By place in the queue: looked up by place, not by run, so that deciding a run that was looked at long before
         * (a borrower, in share order) does not read the run object again to hash it.
         */
        private Decision.Wait[] waits;
        /** The place in the queue of the run the guaranteed pass decides. */
        private int deciding;
        /** Active runs that may still be reclaimed this cycle (not stopping, not yet preempted or promoted). */
        private final CycleRuns reclaimable;
        /** Step 1b: what is held for runs whose victims are still stopping, until each is decided. */
        private final ReclaimHolds holds;
        private final FairPreemption.Rule fairRule;
        /** Victims already stopping, by the run their resources go to. */
        private final Map<RunId, List<ActiveRun>> stoppingFor = new HashMap<>();
        private final Set<QuotaId> reservedQuotas = new HashSet<>();
        /** What of each quota's guarantee the runs waiting for nodes were told is theirs, this cycle. */
        private final Map<QuotaId, Resources> promised = new HashMap<>();
        /** Of that, what runs that wait for nodes of any domain were promised: no later run stops others for it. */
        private final Map<QuotaId, Resources> promisedForNodes = new HashMap<>();
        /** Guaranteed runs that no reclaim or move made room for, by place in the queue: they wait for nodes (whatever the reason says). */
        private final BitSet waitingForNodes = new BitSet();
        /** Gang shapes (quota and instances) that found no move plan this cycle: the same shape would not find one either. */
        private final Set<String> noMovePlan = new HashSet<>();
        /** What the cycle decides of elastic runs: their shrinks (steps 3 and 5a) and their extras (step 6). */
        private final ElasticCycle elastic;
        /** Step 3b's planner, made when a first gang needs it. */
        private MovePlanner mover;
        /** Step 3a: the victims a guaranteed run may reclaim. */
        private final VictimSearch victims;
        /** The GPU models each run may use. */
        private final AllowedModels allowed;
        private final Defragmentation defragmentation;
        private int movesLeft;
        /** Whether some quota lets its runs be moved: if none does, nothing of defragmentation is computed. */
        private final boolean anyMovable;

        /** Works on the state's cluster and book (in a tentative the caller discards) and on copies of its small indexes. */
        Cycle(ClusterState state, List<PendingRun> pending, Instant now, Defragmentation defragmentation, FairPreemption.Rule fairRule) {
            this.state = state;
            this.fairRule = fairRule;
            this.pending = pending;
            this.now = now;
            this.defragmentation = defragmentation;
            this.movesLeft = defragmentation.maxMovesPerCycle();
            this.anyMovable = state.anyMovable;
            this.cluster = state.cluster;
            this.book = state.book;
            this.allowed = new AllowedModels(state);
            this.reclaimable = new CycleRuns(state);
            this.victims = new VictimSearch(state, book, reclaimable);
            this.elastic = new ElasticCycle(state, allowed, reclaimable, victims, decisions, stoppingFor, now, new ElasticCycle.Outcomes() {
                @Override
                public void preemptAndHold(PendingRun run, Resources request, Set<String> model, List<ActiveRun> victims, List<ActiveRun> freedBy,
                        List<ActiveRun> alreadyStopping, String what) {
                    Cycle.this.preemptAndHold(run, request, model, victims, freedBy, alreadyStopping, what);
                }

                @Override
                public void wait(int position, PendingRun run, WaitReason reason, String message) {
                    Cycle.this.wait(position, run, reason, message);
                }
            });
            state.stoppingFor.forEach((forRun, runs) -> stoppingFor.put(forRun, new ArrayList<>(runs.values())));
            this.holds = new ReclaimHolds(state, allowed, stoppingFor);
        }

        CycleResult run() {
            queue = new ArrayList<>(pending.size());
            for (PendingRun run : pending) {
                // An elastic run is decided by its minimum, as a gang; its extras come in step 6.
                queue.add(run.elastic() ? elastic.queued(run) : run);
            }
            queue.sort(QUEUE_ORDER);
            waits = new Decision.Wait[queue.size()];
            WholeNodeDemand wholeNodes = WholeNodeDemand.count(queue, state, allowed);
            holds.holdAll(queue);
            promote();
            List<PendingRun> borrowers = new ArrayList<>();
            List<Resources> borrowerRequests = new ArrayList<>();
            Set<QuotaId> borrowerQuotas = new HashSet<>();
            int[] borrowerAt = new int[queue.size()]; // each borrower's place in the queue
            for (int position : GuaranteedPassOrder.of(queue)) {
                PendingRun run = queue.get(position);
                deciding = position;
                wholeNodes.deciding(run);
                if (holds.heldAsBorrower(run)) {
                    wait(run, WaitReason.WaitingForReclaim, "waiting for " + stoppingFor.get(run.id()).size()
                            + " run(s) of quotas above their fair share of the pool's idle capacity to stop");
                    continue;
                }
                holds.giveBack(run);
                Resources request = total(run);
                boolean guarantee = run.idleMode().mayUseGuarantee() && book.fitsGuarantee(run.quota(), request);
                boolean underMax = run.idleMode().mayUseGuarantee() && book.fitsMax(run.quota(), request);
                if (run.quota() != null && !book.exists(run.quota())) {
                    wait(run, WaitReason.QuotaNotFound, "quota " + run.quota() + " does not exist");
                } else if (!book.clusterCouldHold(request)) {
                    // A gang restarted after a node went down may no longer fit the nodes that are left: say so.
                    wait(run, WaitReason.NoNodeFits, "its instances together ask for " + request + ", more than all schedulable nodes have ("
                            + book.schedulableCapacity() + ")");
                } else if (cluster.localityNeverFits(run.instances()) != null) {
                    wait(run, WaitReason.NoNodeFits, cluster.localityNeverFits(run.instances())); // the same answer, kept for the cycle
                } else if (guarantee && underMax) {
                    admitGuaranteed(run, request, false);
                } else if (guarantee && roomUnderMax(run, request)) {
                    admitGuaranteed(run, request, true);
                } else if (underMax && makeRoom(run, request, OwnQuotaRoom.IN_GUARANTEE)) {
                    admitGuaranteed(run, request, true);
                } else if (underMax && !state.elastic.isEmpty() && elastic.extrasGiveWay(run, request)) {
                    admitGuaranteed(run, request, true);
                } else {
                    borrowerAt[borrowers.size()] = position;
                    borrowers.add(run);
                    borrowerRequests.add(request);
                    borrowerQuotas.add(run.quota());
                }
                if (waits[position] != null && waitingForNodes.get(position)) {
                    wholeNodes.waitsForNodes(run);
                }
            }
            BorrowingPass borrowing = new BorrowingPass(book, cluster, allowed, new BorrowingPass.Outcomes() {
                @Override
                public void admit(PendingRun run, List<Placement> placements, Resources request) {
                    Cycle.this.admit(run, placements, RealTimeResources.NotInQuota, request);
                }

                @Override
                public void wait(int borrower, PendingRun run, WaitReason reason, String message) {
                    Cycle.this.wait(borrowerAt[borrower], run, reason, message);
                }
            });
            borrowing.run(borrowers, borrowerRequests, borrowerQuotas);
            if (!state.elastic.isEmpty()) {
                elastic.extrasForQueued(borrowers, borrowerRequests, borrowerAt, borrowing.waitingForIdlePlaces());
            }
            Map<QuotaId, ArrayDeque<Integer>> waitingForIdle = borrowing.waitingForIdleCapacity();
            if (fairRule != null) {
                new FairPreemption(state, allowed, reclaimable, fairRule, new FairPreemption.Outcomes() {
                    @Override
                    public boolean victimsStopping(PendingRun run) {
                        return !stoppingFor.getOrDefault(run.id(), List.of()).isEmpty();
                    }

                    @Override
                    public void preempt(ActiveRun victim, PendingRun forRun) {
                        reclaimable.remove(victim);
                        decisions.add(new Decision.Preempt(victim.id(), forRun.id(), FairPreemption.REASON, Decision.PreemptKind.FairSharing));
                    }

                    @Override
                    public void shrink(ActiveRun run, List<Allocation> instances, PendingRun forRun) {
                        elastic.shrinkForFairness(run, instances, forRun);
                    }

                    @Override
                    public void wait(int borrower, PendingRun run, WaitReason reason, String message) {
                        Cycle.this.wait(borrowerAt[borrower], run, reason, message);
                    }
                }).run(borrowers, borrowerRequests, waitingForIdle);
            }
            elastic.grow(promised);
            return new CycleResult(withPositions());
        }

        // --- step 2: promotion ---

        private void promote() {
            List<ActiveRun> candidates = new ArrayList<>();
            for (ActiveRun run : reclaimable.borrowers()) {
                // The guarantees only shrink as runs are promoted: one a run does not fit now it will not fit in this pass.
                if (run.realTimeResources() == RealTimeResources.NotInQuota && run.idleMode().mayUseGuarantee() && book.exists(run.quota())
                        && book.fitsGuarantee(run.quota(), total(run))) {
                    candidates.add(run);
                }
            }
            candidates.sort(Comparator.comparingInt(ActiveRun::priority).reversed().thenComparing(ActiveRun::startedAt).thenComparing(ActiveRun::id));
            for (ActiveRun run : candidates) {
                Resources request = total(run);
                if (book.fitsGuarantee(run.quota(), request) && onModels(run, allowed.of(run.quota(), RealTimeResources.InQuota, request))) {
                    book.promote(run.quota(), request);
                    run.allocations().forEach(a -> allowed.holds(run.quota(), a.node(), a.resources().gpu()));
                    reclaimable.remove(run);
                    decisions.add(new Decision.Promote(run.id()));
                }
            }
        }

        // --- step 3: guaranteed runs ---

        /** Room the quota's own runs make for the run ({@link OwnQuotaRoom}): they are preempted. Returns whether there is room now. */
        private boolean makeRoom(PendingRun run, Resources request, OwnQuotaRoom room) {
            List<ActiveRun> chosen = room.make(run, request, state, reclaimable);
            if (chosen == null) {
                return false;
            }
            for (ActiveRun victim : chosen) {
                reclaimable.remove(victim);
                stoppingFor.computeIfAbsent(run.id(), id -> new ArrayList<>()).add(victim);
                decisions.add(new Decision.Preempt(victim.id(), run.id(), room.reason(run)));
            }
            return true;
        }

        /** Room under its quota's max: its borrowers' extras go before any of them stops whole (docs/elastic.md). */
        private boolean roomUnderMax(PendingRun run, Resources request) {
            Boolean made = state.elastic.isEmpty() ? null : elastic.roomUnderMax(run, request);
            return made != null ? made : makeRoom(run, request, OwnQuotaRoom.UNDER_MAX);
        }

        /** {@code roomMade}: its quota's own runs were stopped or shrunk for it this cycle, so it goes on reclaiming if it must. */
        private void admitGuaranteed(PendingRun run, Resources request, boolean roomMade) {
            Set<String> model = allowed.of(run.quota(), RealTimeResources.InQuota, request);
            List<Placement> placements = cluster.placeGang(run.instances(), model, run.quota());
            if (placements != null) {
                admit(run, placements, RealTimeResources.InQuota, request);
                return;
            }
            List<ActiveRun> alreadyStopping = stoppingFor.getOrDefault(run.id(), List.of());
            Resources promisedAhead = promisedForNodes.getOrDefault(run.quota(), Resources.NONE);
            if (!roomMade && alreadyStopping.isEmpty() && !book.fitsGuarantee(run.quota(), promisedAhead.plus(request))
                    && cluster.couldEverFit(run.largestInstance(), model)) {
                // It may start on free nodes, but it stops no one (reclaims, shrinks, moves) for room its quota promised
                // to runs ahead of it that wait for nodes: the first of them to find nodes would take it back.
                waitingForNodes.set(deciding);
                waitForPromisedRoom(run);
                return;
            }
            ElasticReclaim.Plan plan = state.elastic.isEmpty() ? ElasticReclaim.Plan.NO_EXTRAS : elastic.reclaim(run, model, alreadyStopping);
            if (plan != null && plan != ElasticReclaim.Plan.NO_EXTRAS) {
                elastic.reclaimWithShrinks(run, request, model, plan, alreadyStopping);
                return;
            }
            List<ActiveRun> chosen = plan == null ? null : victims.choose(run, model, alreadyStopping);
            if (chosen == null) {
                if (!cluster.couldEverFit(run.largestInstance(), model)) {
                    wait(run, WaitReason.NoNodeFits, "no node can ever hold its largest instance (" + run.largestInstance() + ")");
                    return;
                }
                // Only a run with an instance of half a node or more is moved for (and only smaller runs are moved,
                // MovePlanner): smaller instances find room among the pieces, and moving a small run for another is churn.
                // Moves are planned node by node, not by domain: a gang that must be in one domain is not moved for.
                boolean largeInstances = anyMovable && !LocalityPlacement.binds(run.instances())
                        && run.instances().stream().anyMatch(i -> 2 * i.resources().gpu() >= cluster.maxNodeGpus());
                String shape = run.quota() + ":" + run.instances().stream().map(r -> r.resources().toString()).sorted().toList();
                boolean planned = largeInstances && movesLeft > 0 && alreadyStopping.isEmpty() && !noMovePlan.contains(shape);
                MovePlanner.MovePlan moves = planned ? mover().planMoves(run, model, movesLeft) : null;
                if (planned && moves == null) {
                    noMovePlan.add(shape); // not when no plan was tried: a run with victims stopping is not moved for
                }
                if (moves != null) {
                    movesLeft -= moves.moved().size();
                    for (ActiveRun moved : moves.moved()) {
                        reclaimable.remove(moved);
                        decisions.add(new Decision.Preempt(moved.id(), run.id(), Decision.Preempt.MOVED, Decision.PreemptKind.Move));
                    }
                    List<ActiveRun> all = new ArrayList<>(moves.reclaimed());
                    all.addAll(moves.moved());
                    preemptAndHold(run, request, model, moves.reclaimed(), all, alreadyStopping, "run(s) to stop: runs on borrowed capacity, and"
                            + " guaranteed runs moved to other nodes");
                    return;
                }
                String miss = cluster.localityMiss(run.instances(), model); // as things are, before nodes are held for it
                boolean held = reservedQuotas.add(run.quota()) && cluster.reserveFor(run.instances(), model); // by topology: in one domain
                waitingForNodes.set(deciding);
                // Its quota has room for it only if the runs before it that wait for nodes leave it some: each is told
                // the room is its own, as far as the guarantee goes, in queue order (the wait reason only: what
                // is admitted does not change).
                Resources before = promised.getOrDefault(run.quota(), Resources.NONE);
                if (!book.fitsGuarantee(run.quota(), before.plus(request))) {
                    waitForPromisedRoom(run);
                    return;
                }
                promised.put(run.quota(), before.plus(request));
                if (miss == null) {
                    // A run that waits for one domain to have room may wait long: runs after it still reclaim.
                    promisedForNodes.merge(run.quota(), request, Resources::plus);
                }
                wait(run, miss != null ? WaitReason.WaitingForTopology : WaitReason.WaitingForResources, "its quota has room, but "
                        + (miss != null ? miss : "the nodes are busy with guaranteed work") + (held ? "; nodes are held for it" : ""));
                return;
            }
            preemptAndHold(run, request, model, chosen, chosen, alreadyStopping, "run(s) on borrowed capacity to stop");
        }

        /** The run waits: its quota's guarantee is in use, or promised to runs before it that wait for nodes. */
        private void waitForPromisedRoom(PendingRun run) {
            wait(run, WaitReason.WaitingForQuota, "its quota's guarantee is in use (" + book.freeGuarantee(run.quota())
                    + " left) or promised to runs before it that wait for nodes (" + promised.getOrDefault(run.quota(), Resources.NONE) + ")");
        }

        /**
         * Preempts {@code victims} (reclaims) for the run, and holds for it whatever it needs beyond what everything
         * stopping for it ({@code freedBy}: the victims and moved runs, and those already stopping) will give back.
         */
        private void preemptAndHold(PendingRun run, Resources request, Set<String> model, List<ActiveRun> victims, List<ActiveRun> freedBy,
                List<ActiveRun> alreadyStopping, String what) {
            for (ActiveRun victim : victims) {
                reclaimable.remove(victim);
                decisions.add(new Decision.Preempt(victim.id(), run.id(), victim.quota() != null && victim.quota().equals(run.quota())
                        ? "Preempted by higher-priority run " + run.id() + " of the same quota"
                        // Another team's quota and run are not the victim's to know (it reads this in its notice file).
                        : "Reclaimed: the quota that guarantees the capacity it borrowed needs it back"));
                if (victim.realTimeResources() == RealTimeResources.NotInQuota || victim.mixed()) {
                    // Its pool no longer counts what it borrowed, as from the next cycle on (a stopping run is not charged):
                    // otherwise a preemption for fairness later in this cycle sees its quota's share, and the pool's
                    // borrowing, as if it stayed, and takes one victim more than the shares call for.
                    book.charge(victim.quota(), ClusterState.borrowed(victim), RealTimeResources.NotInQuota, -1);
                }
            }
            // Hold, for the run, whatever it needs beyond what the stopping victims will give back (they keep holding
            // theirs until they are gone). The book charges the run's guarantee for this cycle too.
            List<Allocation> freed = new ArrayList<>();
            alreadyStopping.forEach(v -> freed.addAll(v.allocations()));
            freedBy.forEach(v -> freed.addAll(v.allocations()));
            List<Placement> held = state.placeOnFreed(run.instances(), model, freed);
            if (held == null) {
                throw new IllegalStateException("run " + run.id() + " did not fit after reclaiming " + freedBy);
            }
            cluster.holdBeyond(held, run.instances(), freed);
            book.charge(run.quota(), request, RealTimeResources.InQuota, 1); // its guarantee is held too, for this cycle
            int stopping = alreadyStopping.size() + freedBy.size();
            wait(run, WaitReason.WaitingForReclaim, "waiting for " + stopping + " " + what);
        }

        // --- step 3b: defragmentation ---

        /** The cycle's move planner, made when a first gang needs it (it indexes the removable runs once). */
        private MovePlanner mover() {
            if (mover == null) {
                mover = new MovePlanner(state, reclaimable, defragmentation, now,
                        (quota, request) -> allowed.of(quota, RealTimeResources.InQuota, request));
            }
            return mover;
        }

        /** Whether all of a run's instances are on nodes of the given models. */
        private boolean onModels(ActiveRun run, Set<String> models) {
            return models == null || run.allocations().stream().allMatch(a -> cluster.hasNode(a.node()) && models.contains(cluster.modelOf(a.node())));
        }

        // --- decisions ---

        private void admit(PendingRun run, List<Placement> placements, RealTimeResources where, Resources request) {
            book.charge(run.quota(), request, where, 1);
            if (where == RealTimeResources.InQuota) {
                placements.forEach(p -> allowed.holds(run.quota(), p.node(), p.gpus().size()));
            }
            elastic.admitting(run);
            decisions.add(new Decision.Admit(run.id(), placements, where));
        }

        /** The run the guaranteed pass decides waits. */
        private void wait(PendingRun run, WaitReason reason, String message) {
            wait(deciding, run, reason, message);
        }

        private void wait(int position, PendingRun run, WaitReason reason, String message) {
            if (queue.get(position) != run) {
                throw new IllegalStateException("run " + run.id() + " is not the run at place " + position + " of the queue");
            }
            waits[position] = new Decision.Wait(run.id(), reason, message, 0);
        }

        /** Waits get their position among the waiting runs of their quota, in queue order. */
        private List<Decision> withPositions() {
            Map<QuotaId, Integer> positions = new HashMap<>(); // runs without a quota (null) queue together
            for (int i = 0; i < queue.size(); i++) {
                Decision.Wait wait = waits[i];
                if (wait != null) {
                    PendingRun run = queue.get(i);
                    int position = positions.merge(run.quota(), 1, Integer::sum);
                    decisions.add(new Decision.Wait(run.id(), wait.reason(), wait.message(), position));
                }
            }
            return decisions;
        }
    }
}
