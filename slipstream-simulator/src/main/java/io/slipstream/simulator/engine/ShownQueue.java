package io.slipstream.simulator.engine;

import io.slipstream.scheduler.PendingRun;
import io.slipstream.scheduler.Scheduler;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * What each cycle shows the core of the queue: the jobs it could admit ({@link AdmissibleQueue}), those borrowers were
 * preempted for, and the first job of each quota that may hold nodes for itself; and which of the jobs left out start
 * a guarantee wait, as the core would have said. Leaving jobs out changes no figure ({@code AdmissibleQueueTest}).
 */
final class ShownQueue {
    /**
     * @param quotaOfTenant       each tenant's quota, by index
     * @param preemptsWithinQuota per tenant: its quota preempts its own lower-priority runs (its jobs are always shown)
     * @param hasMax              per tenant: its quota has a max (a guaranteed run over it waits without holding nodes)
     * @param largestNodeGpus     the most GPUs of a node
     * @param clusterGpus         the cluster's GPUs
     * @param movesAllowed        whether some quota lets the core move its runs to defragment
     */
    record Limits(int[] quotaOfTenant, boolean[] preemptsWithinQuota, boolean[] hasMax, int largestNodeGpus, long clusterGpus, boolean movesAllowed) {
    }

    private final AdmissibleQueue queued;
    private final AdmissibleQueue notYetEntitled;
    private final Set<SimJob> reclaiming;
    private final Holdings holdings;
    private final Limits limits;
    /** This cycle's jobs shown to the core; whether some that fit their guarantee were left out; the free guarantees it started from. */
    private final Set<SimJob> shown = Collections.newSetFromMap(new IdentityHashMap<>());
    private boolean leftOutEntitled;
    private long[] freeGuaranteeAtStart;
    private final long[] noBorrowing;

    ShownQueue(AdmissibleQueue queued, AdmissibleQueue notYetEntitled, Set<SimJob> reclaiming, Holdings holdings, Limits limits) {
        this.queued = queued;
        this.notYetEntitled = notYetEntitled;
        this.reclaiming = reclaiming;
        this.holdings = holdings;
        this.limits = limits;
        this.noBorrowing = new long[limits.quotaOfTenant().length];
        Arrays.fill(noBorrowing, -1);
    }

    /**
     * The queued jobs this cycle could admit (see {@link AdmissibleQueue}), and those borrowers were preempted for.
     * {@code null} when the cycle can decide nothing: no such job, and no borrower its quota's free guarantee could
     * take (a promotion). Then the core is not called, as it would return no decision.
     */
    List<PendingRun> forCycle() {
        Holdings.CycleStart start = holdings.cycleStart();
        List<PendingRun> pending = new ArrayList<>();
        shown.clear();
        Consumer<SimJob> show = job -> {
            if (shown.add(job)) {
                pending.add(job.pending);
            }
        };
        reclaiming.forEach(show);
        queued.forEachAdmissible(start.freeGuarantee(), start.borrowable(), limits.preemptsWithinQuota(), job -> {
            boolean placeable = start.placeable(job);
            boolean couldBorrow = job.idleMode.mayBorrow() && placeable && job.gpus() <= start.borrowable()[job.tenant];
            boolean couldUseGuarantee = job.idleMode.mayUseGuarantee() && job.gpus() <= start.freeGuarantee()[job.tenant];
            // With no borrowers to reclaim, a guaranteed job that fits no free GPUs can only wait, like the others;
            // only the first such job of its quota may hold nodes for itself (added below). Whole-node gangs are always
            // shown: the core keeps whole nodes for them from smaller runs, and may move runs out of their way.
            // With moves, the core may move runs out of any guaranteed job's way: then every one is shown.
            boolean couldPlaceOrReclaim = placeable || start.borrowers() || !reclaiming.isEmpty() || limits.hasMax()[job.tenant]
                    || job.trace.gpus() >= limits.largestNodeGpus() || limits.movesAllowed();
            if (couldBorrow || (couldUseGuarantee && couldPlaceOrReclaim) || limits.preemptsWithinQuota()[job.tenant]) {
                show.accept(job);
            }
        });
        leftOutEntitled = false;
        if (!start.borrowers() && reclaiming.isEmpty() && !limits.movesAllowed()) {
            for (int t = 0; t < limits.quotaOfTenant().length; t++) {
                showTheJobThatHoldsNodes(t, start, show);
            }
        }
        freeGuaranteeAtStart = start.freeGuarantee();
        if (!pending.isEmpty()) {
            return pending;
        }
        return holdings.anyPromotable(start.freeGuarantee()) ? pending : null;
    }

    /**
     * The core holds nodes for the first job of each quota (in queue order) that fits the quota's guarantee but not
     * the free nodes, when no borrower can be reclaimed for it. Which job that is depends on what the jobs before it
     * take of the guarantee, so every such job is shown up to the first that fits the guarantee whatever the jobs
     * before it take. Jobs that no node or the whole cluster could ever hold wait without holding anything.
     */
    private void showTheJobThatHoldsNodes(int tenant, Holdings.CycleStart start, Consumer<SimJob> show) {
        if (start.freeGuarantee()[tenant] <= 0) {
            return;
        }
        long[] taken = {0};
        boolean[] found = {false};
        leftOutEntitled = true;
        queued.inQueueOrder(tenant, job -> {
            if (!job.idleMode.mayUseGuarantee() || job.gpus() > start.freeGuarantee()[tenant] || job.trace.gpus() > limits.largestNodeGpus() || job.gpus() > limits.clusterGpus()) {
                return true; // it waits for its quota, or no node could ever hold it
            }
            if (start.placeable(job)) {
                taken[0] += job.gpus(); // shown already
                return true;
            }
            show.accept(job);
            found[0] = job.gpus() <= start.freeGuarantee()[tenant] - taken[0];
            taken[0] += job.gpus();
            return !found[0];
        });
    }

    /** Whether this cycle left out jobs that fit their quota's guarantee but no free GPUs (see {@link #leftOutEntitled}). */
    boolean leftOutSome() {
        return leftOutEntitled;
    }

    /**
     * Of the jobs this cycle left out, those whose guarantee wait starts: they fit their quota's guarantee but no free
     * GPUs, and the core would have said they wait for resources if the guarantee still fits them after what it gave
     * the jobs before them (in queue order, {@code givenGuarantee}: admitted on it, or told they wait for nodes and it
     * is theirs) took. Only jobs not marked yet are looked at.
     */
    List<SimJob> leftOutEntitled(List<SimJob> givenGuarantee) {
        List<SimJob> marked = new ArrayList<>();
        if (!leftOutEntitled) {
            return marked;
        }
        notYetEntitled.forEachAdmissible(freeGuaranteeAtStart, noBorrowing, new boolean[limits.quotaOfTenant().length], job -> {
            if (shown.contains(job) || job.trace.gpus() > limits.largestNodeGpus() || job.gpus() > limits.clusterGpus()) {
                return;
            }
            long free = freeGuaranteeAtStart[job.tenant];
            for (SimJob admitted : givenGuarantee) {
                if (limits.quotaOfTenant()[admitted.tenant] == limits.quotaOfTenant()[job.tenant] && Scheduler.QUEUE_ORDER.compare(admitted.pending, job.pending) < 0) {
                    free -= admitted.gpus();
                }
            }
            if (job.gpus() <= free) {
                marked.add(job);
            }
        });
        return marked;
    }
}
