package io.slipstream.simulator.engine;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.scheduler.ActiveRun;
import io.slipstream.scheduler.Allocation;
import io.slipstream.scheduler.ClusterSnapshot;
import io.slipstream.scheduler.ClusterState;
import io.slipstream.scheduler.NodeState;
import io.slipstream.scheduler.QuotaState;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.TreeMap;

/**
 * What the running and stopping jobs hold, kept up to date as they start, stop, are promoted and end: the core's
 * {@link ClusterState} and the figures a cycle's admissible queue is cut by ({@link CycleStart}). Rebuilding both from
 * every job for every cycle was most of a long replay's time; now a cycle costs what changed since the last one.
 *
 * <p>A run's last checkpoint changes as time passes, with no event. The core reads it only to order victims and to
 * tell movable runs: for borrowers, and for guaranteed runs of quotas that preempt within or let runs be moved. Those
 * runs are refreshed at the times their checkpoints are saved; others keep the checkpoint they started with.
 */
final class Holdings {
    private static final Instant EPOCH = Simulation.EPOCH;

    private final List<NodeState> nodes;
    private final List<QuotaState> quotas;
    private final Progress progress;
    /** Whether the core is given a state kept between cycles (false: one built from a snapshot each cycle, to test that it makes no difference). */
    private final boolean kept;
    private final ClusterState state;
    /** The state this cycle starts from (see {@link #beginCycle}). */
    private ClusterState current;
    /** Each tenant's quota, and whether what its pool can lend only shrinks within a cycle (no quota has a max or preempts within). */
    private final QuotaId[] quotaIdOfTenant;
    private final boolean lendingOnlyShrinks;
    private final TreeMap<RunId, SimJob> holding = new TreeMap<>();
    /** Running elastic jobs that could grow (vacant slots, no shrink in flight). */
    private final TreeMap<RunId, SimJob> growable = new TreeMap<>();
    /** Per tenant: whether the core reads its guaranteed runs' checkpoints (moves, or preemption within the quota). */
    private final boolean[] checkpointsOfGuaranteedRead;
    private record Refresh(long time, SimJob job, int attempt, int segment) {
    }
    private final PriorityQueue<Refresh> refreshes = new PriorityQueue<>(Comparator.comparingLong(Refresh::time));

    private final int[] quotaOfTenant;
    private final long[] ownGuaranteeGpus;
    private final long[] usedByQuota;
    /** Per quota, the GPUs of its elastic runs' extras on its guarantee: they give way to its queued runs. */
    private final long[] quotaExtras;
    private long freeGpus;
    private final Map<String, Integer> nodeIndex;
    private final int[] freeOnNode;
    /** How many nodes have each number of free GPUs: the emptiest node without a scan. */
    private final int[] nodesWithFree;
    private int borrowers;
    /** GPUs the running borrowers hold (stopping ones left out). */
    private long borrowedGpus;
    /** GPUs of running elastic jobs' extras on idle capacity: what a queued borrower's minimum may take. */
    private long extrasGpus;
    /** Per tenant: the GPUs of its running borrowers that may use its guarantee (GPUs -> how many). */
    private final List<TreeMap<Integer, Integer>> promotable = new ArrayList<>();

    Holdings(List<NodeState> nodes, List<QuotaState> quotas, Progress progress, boolean kept, int[] quotaOfTenant, long[] ownGuaranteeGpus,
            boolean[] checkpointsOfGuaranteedRead, Map<String, Integer> nodeIndex, int[] nodeGpus, long clusterGpus, QuotaId[] quotaIdOfTenant,
            boolean lendingOnlyShrinks) {
        this.quotaIdOfTenant = quotaIdOfTenant;
        this.lendingOnlyShrinks = lendingOnlyShrinks;
        this.nodes = nodes;
        this.quotas = quotas;
        this.progress = progress;
        this.kept = kept;
        this.state = kept ? new ClusterState(nodes, quotas) : null;
        this.quotaOfTenant = quotaOfTenant;
        this.ownGuaranteeGpus = ownGuaranteeGpus;
        this.checkpointsOfGuaranteedRead = checkpointsOfGuaranteedRead;
        this.usedByQuota = new long[quotaOfTenant.length];
        this.quotaExtras = new long[quotaOfTenant.length];
        this.freeGpus = clusterGpus;
        this.nodeIndex = nodeIndex;
        this.freeOnNode = nodeGpus.clone();
        int most = 0;
        for (int gpus : nodeGpus) {
            most = Math.max(most, gpus);
        }
        this.nodesWithFree = new int[most + 1];
        for (int gpus : nodeGpus) {
            nodesWithFree[gpus]++;
        }
        for (int t = 0; t < quotaOfTenant.length; t++) {
            promotable.add(new TreeMap<>());
        }
    }

    // --- changes, as the simulation applies them ---

    /** The job started an attempt (RUNNING, with its allocations). */
    void started(SimJob job, long now) {
        holding.put(job.id(), job);
        freeGpus -= job.liveGpus();
        for (Allocation allocation : job.allocations) {
            changeNodeFree(allocation, -1);
        }
        countRunning(job, 1);
        growable(job);
        if (kept) {
            state.add(activeRun(job, now));
            watch(job, now);
        }
    }

    /**
     * An elastic job's instances change while it runs ({@code change}: a grow, a shrink decided, or instances a shrink
     * removed gone): {@code taken} are allocations it holds now that it did not, {@code given} those it gives back.
     */
    void resized(SimJob job, long now, Runnable change, List<Allocation> taken, List<Allocation> given) {
        boolean running = job.state == SimJob.State.RUNNING;
        int segment = job.segment;
        if (running) {
            countRunning(job, -1);
        }
        change.run();
        job.viewChanged();
        for (Allocation allocation : taken) {
            freeGpus -= allocation.resources().gpu();
            changeNodeFree(allocation, -1);
        }
        for (Allocation allocation : given) {
            freeGpus += allocation.resources().gpu();
            changeNodeFree(allocation, 1);
        }
        if (running) {
            countRunning(job, 1);
        }
        growable(job);
        if (kept) {
            state.update(activeRun(job, now));
            if (running && job.segment != segment) {
                watch(job, now); // a new segment: its checkpoints, once (the last segment's refreshes are stale)
            }
        }
    }

    /** Whether some running elastic job could grow into free GPUs (then a cycle calls the core though nothing is queued). */
    boolean mayGrow() {
        return !growable.isEmpty() && freeGpus > 0;
    }

    private void growable(SimJob job) {
        if (job.mayGrow()) {
            growable.put(job.id(), job);
        } else if (!growable.isEmpty()) {
            growable.remove(job.id());
        }
    }

    /** The job was told to stop (STOPPING, with whom it stops for). */
    void stopping(SimJob job, long now) {
        countRunning(job, -1);
        growable.remove(job.id());
        if (kept) {
            state.update(activeRun(job, now));
        }
    }

    /** A borrowing job became guaranteed ({@code job.inQuota} is set already). */
    void promoted(SimJob job, long now) {
        countRunning(job, -1);
        job.viewChanged();
        countRunning(job, 1);
        if (kept) {
            state.update(activeRun(job, now));
            watch(job, now);
        }
    }

    /** The job holds nothing any more; called before its state changes (it is RUNNING or STOPPING). */
    void released(SimJob job) {
        holding.remove(job.id());
        growable.remove(job.id());
        for (Allocation allocation : job.held()) {
            freeGpus += allocation.resources().gpu();
            changeNodeFree(allocation, 1);
        }
        if (job.state == SimJob.State.RUNNING) {
            countRunning(job, -1);
        }
        if (kept) {
            state.remove(job.id());
        }
    }

    /**
     * Counts ({@code sign} 1) the job's live instances as they stand now, or takes out (-1) what was counted for it: on
     * its quota's guarantee, borrowed, and, on idle capacity with an idle mode that may use its guarantee, promotable.
     */
    private void countRunning(SimJob job, int sign) {
        if (sign > 0) {
            long live = job.liveGpus();
            long borrowed = job.inQuota ? job.borrowedLiveGpus() : live;
            job.countedGuaranteed = live - borrowed;
            job.countedBorrowed = borrowed;
            job.countedBorrower = !job.inQuota || borrowed > 0;
            job.countedPromotable = !job.inQuota && job.idleMode.mayUseGuarantee() ? (int) live : -1;
            job.countedExtras = job.shrinkableGpus();
            job.countedQuotaExtras = job.inQuotaExtraGpus();
        }
        extrasGpus += sign * job.countedExtras;
        quotaExtras[quotaOfTenant[job.tenant]] += sign * job.countedQuotaExtras;
        usedByQuota[quotaOfTenant[job.tenant]] += sign * job.countedGuaranteed;
        if (job.countedBorrower) {
            borrowers += sign;
            borrowedGpus += sign * job.countedBorrowed;
        }
        if (job.countedPromotable >= 0) {
            promotable.get(job.tenant).merge(job.countedPromotable, sign, (a, b) -> a + b == 0 ? null : a + b);
        }
    }

    private void changeNodeFree(Allocation allocation, int sign) {
        int node = nodeIndex.get(allocation.node());
        nodesWithFree[freeOnNode[node]]--;
        freeOnNode[node] += sign * allocation.gpus().size();
        nodesWithFree[freeOnNode[node]]++;
    }

    // --- what a cycle reads ---

    /** The core's input for the cycle at {@code now}, until the next call. */
    ClusterState state() {
        return current;
    }

    /** A cycle at {@code now} starts: the kept state with checkpoints brought up to date, or a new one. */
    void beginCycle(long now) {
        current = kept ? refreshed(now) : built(now);
    }

    private ClusterState built(long now) {
        List<ActiveRun> active = new ArrayList<>(holding.size());
        holding.values().forEach(job -> active.add(activeRun(job, now)));
        return ClusterState.of(new ClusterSnapshot(nodes, quotas, active, List.of()));
    }

    private ClusterState refreshed(long now) {
        while (!refreshes.isEmpty() && refreshes.peek().time() <= now) {
            Refresh due = refreshes.poll();
            SimJob job = due.job();
            if (job.attempt == due.attempt() && job.segment == due.segment() && job.state == SimJob.State.RUNNING && checkpointRead(job)) {
                ActiveRun before = job.active;
                ActiveRun after = activeRun(job, now);
                if (after != before) {
                    state.update(after);
                }
                watch(job, now);
            }
        }
        return state;
    }

    /** Free guarantees, what each tenant could borrow, free GPUs, the emptiest node, whether there are borrowers: as the cycle starts. */
    CycleStart cycleStart() {
        long[] freeGuarantee = new long[quotaOfTenant.length];
        long[] borrowable = new long[quotaOfTenant.length];
        for (int t = 0; t < freeGuarantee.length; t++) {
            // What its queued runs could have of it: what is free, and what its elastic runs' extras use (they give way).
            freeGuarantee[t] = ownGuaranteeGpus[t] < 0 ? -1 : ownGuaranteeGpus[t] - usedByQuota[quotaOfTenant[t]] + quotaExtras[quotaOfTenant[t]];
            borrowable[t] = lendingOnlyShrinks ? Math.min(freeGpus, current.lendableGpus(quotaIdOfTenant[t])) : freeGpus;
        }
        int mostFreeOnANode = nodesWithFree.length - 1;
        while (mostFreeOnANode > 0 && nodesWithFree[mostFreeOnANode] == 0) {
            mostFreeOnANode--;
        }
        return new CycleStart(freeGuarantee, borrowable, freeGpus, mostFreeOnANode, borrowers > 0, borrowedGpus, extrasGpus);
    }

    /** How many instances of {@code gpus} GPUs the free GPUs of the nodes hold (as the cycle starts). */
    int instancesFree(int gpus) {
        if (gpus == 0) {
            return Integer.MAX_VALUE;
        }
        int held = 0;
        for (int free = gpus; free < nodesWithFree.length; free++) {
            held += nodesWithFree[free] * (free / gpus);
        }
        return held;
    }

    /** Whether some running borrower fits its quota's free guarantee: the core could promote it. */
    boolean anyPromotable(long[] freeGuarantee) {
        for (int t = 0; t < promotable.size(); t++) {
            TreeMap<Integer, Integer> sizes = promotable.get(t);
            if (!sizes.isEmpty() && sizes.firstKey() <= freeGuarantee[t]) {
                return true;
            }
        }
        return false;
    }

    // --- the core's view of a job ---

    private boolean checkpointRead(SimJob job) {
        return !job.inQuota || checkpointsOfGuaranteedRead[job.tenant];
    }

    /** Refreshes the job's view when its next checkpoint is saved, if the core reads it. */
    private void watch(SimJob job, long now) {
        if (checkpointRead(job)) {
            long next = progress.nextCheckpointTime(job, now);
            if (next >= 0) {
                refreshes.add(new Refresh(next, job, job.attempt, job.segment));
            }
        }
    }

    /** The job as the core sees it; the same object while nothing it shows changes. */
    ActiveRun activeRun(SimJob job, long now) {
        long checkpoint = job.state == SimJob.State.RUNNING ? progress.lastCheckpointTime(job, now) : -1;
        Instant workSince = checkpoint < 0 ? null : EPOCH.plusMillis(checkpoint);
        ActiveRun cached = job.active;
        RealTimeResources where = job.inQuota ? RealTimeResources.InQuota : RealTimeResources.NotInQuota;
        boolean stopping = job.state == SimJob.State.STOPPING;
        Instant movedAt = job.movedAt < 0 ? null : EPOCH.plusMillis(job.movedAt);
        // A new attempt has a new allocation list, so the same list means the same start (and an elastic job's view is
        // a new object at each change).
        if (cached != null && cached.allocations() == job.allocations && Objects.equals(cached.lastCheckpointAt(), workSince)
                && cached.realTimeResources() == where && cached.stopping() == stopping && Objects.equals(cached.reclaimFor(), job.reclaimFor)
                && Objects.equals(cached.movedAt(), movedAt) && cached.elastic() == job.elasticView) {
            return cached;
        }
        job.active = new ActiveRun(job.id(), job.pending.quota(), job.idleMode, job.trace.priority(), EPOCH.plusMillis(job.attemptStart), workSince, where,
                job.allocations, stopping, job.reclaimFor, movedAt, job.elasticView);
        return job.active;
    }

    /**
     * @param freeGuarantee   GPUs left on each tenant's quota's own guarantee
     * @param borrowable      GPUs each tenant could borrow: free, and lendable by its pool (-1: none)
     * @param mostFreeOnANode the most free GPUs of one node: an instance needs a node with as many free
     * @param borrowers       whether any run holds idle capacity it could be reclaimed from
     * @param borrowedGpus    the GPUs running borrowers hold: the most preemption for fairness could take from them
     * @param extrasGpus      the GPUs of running elastic jobs' extras on idle capacity: the most a queued borrower could take from them
     */
    record CycleStart(long[] freeGuarantee, long[] borrowable, long freeGpus, int mostFreeOnANode, boolean borrowers, long borrowedGpus, long extrasGpus) {
        /** A necessary condition for the job to fit the free GPUs (free GPUs only shrink during a cycle). */
        boolean placeable(SimJob job) {
            return job.trace.gpus() <= mostFreeOnANode && job.queueGpus() <= freeGpus;
        }
    }
}
