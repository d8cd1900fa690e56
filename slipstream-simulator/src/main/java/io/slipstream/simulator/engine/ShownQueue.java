package io.slipstream.simulator.engine;

import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.WaitReason;
import io.slipstream.scheduler.CycleResult;
import io.slipstream.scheduler.Decision;
import io.slipstream.scheduler.PendingRun;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * What each cycle shows the core of the queue: the jobs it could admit ({@link AdmissibleQueue}), those borrowers were
 * preempted for, and, when it holds, the guarantee cut ({@link #cut}). A job left out would only have waited, without
 * holding or being promised anything, so leaving it out changes no figure ({@code AdmissibleQueueTest}). With
 * preemption for fairness, borrowers that could preempt are shown too ({@link #showPreemptors}).
 */
final class ShownQueue {
    /**
     * @param quotaOfTenant       each tenant's quota, by index
     * @param preemptsWithinQuota per tenant: its quota preempts its own lower-priority runs (its jobs are always shown)
     * @param hasMax              per tenant: its quota has a max (its own borrowers make room under it: never cut)
     * @param largestNodeGpus     the most GPUs of a node
     * @param clusterGpus         the cluster's GPUs
     * @param fairPreemption      whether borrowers below their fair share preempt other quotas' borrowers
     */
    record Limits(int[] quotaOfTenant, boolean[] preemptsWithinQuota, boolean[] hasMax, int largestNodeGpus, long clusterGpus, boolean fairPreemption) {
    }

    private final AdmissibleQueue queued;
    private final Set<SimJob> reclaiming;
    private final Holdings holdings;
    private final Limits limits;
    /**
     * This cycle's number (a job shown this cycle has it as {@code SimJob.shownInCycle}: no set to fill and clear each
     * cycle), and its shown jobs in the order of the runs shown.
     */
    private long cycle;
    private final List<SimJob> shownJobs = new ArrayList<>();
    /** This cycle's jobs shown only for their quota's guarantee, the ids of those kept in the cut, and the cut. */
    private final List<SimJob> onlyForTheGuarantee = new ArrayList<>();
    private final Set<RunId> kept = new HashSet<>();
    private List<PendingRun> cut;

    ShownQueue(AdmissibleQueue queued, Set<SimJob> reclaiming, Holdings holdings, Limits limits) {
        this.queued = queued;
        this.reclaiming = reclaiming;
        this.holdings = holdings;
        this.limits = limits;
    }

    /**
     * The queued jobs this cycle could admit (see {@link AdmissibleQueue}), and those borrowers were preempted for.
     * {@code null} when the cycle can decide nothing: no such job, and no borrower its quota's free guarantee could
     * take (a promotion). Then the core is not called, as it would return no decision.
     */
    List<PendingRun> forCycle() {
        Holdings.CycleStart start = holdings.cycleStart();
        List<PendingRun> pending = new ArrayList<>();
        cycle++;
        shownJobs.clear();
        Consumer<SimJob> show = job -> {
            if (job.shownInCycle != cycle) {
                job.shownInCycle = cycle;
                pending.add(job.pending);
                shownJobs.add(job);
            }
        };
        reclaiming.forEach(show);
        // Elastic jobs' extras on idle capacity give way to a borrower's minimum: it could have what is free and them.
        long extras = start.extrasGpus();
        long[] borrowable = start.borrowable();
        if (extras > 0) {
            borrowable = borrowable.clone();
            for (int t = 0; t < borrowable.length; t++) {
                borrowable[t] = Math.max(0, borrowable[t]) + extras;
            }
        }
        long[] couldBorrowUpTo = borrowable;
        queued.forEachAdmissible(start.freeGuarantee(), couldBorrowUpTo, limits.preemptsWithinQuota(), job -> {
            boolean placeable = start.placeable(job);
            boolean couldBorrow = job.idleMode.mayBorrow() && (placeable || (extras > 0 && job.trace.gpus() <= limits.largestNodeGpus()
                    && job.queueGpus() <= start.freeGpus() + extras)) && job.queueGpus() <= couldBorrowUpTo[job.tenant];
            // A guaranteed job no node, or not the whole cluster, could ever hold waits (NoNodeFits) and changes nothing.
            // Every other one that fits its quota's guarantee is shown, placeable or not: one that waits for nodes may
            // hold nodes for itself, or reclaim or move runs, and it is promised the guarantee it fits, which changes
            // what the core tells the runs after it.
            boolean couldUseGuarantee = job.idleMode.mayUseGuarantee() && job.queueGpus() <= start.freeGuarantee()[job.tenant]
                    && job.trace.gpus() <= limits.largestNodeGpus() && job.queueGpus() <= limits.clusterGpus();
            if (couldBorrow || couldUseGuarantee || limits.preemptsWithinQuota()[job.tenant]) {
                // A job that may borrow and could preempt for fairness is never cut: the guarantee may not take it.
                if (!couldBorrow && placeable && !limits.preemptsWithinQuota()[job.tenant] && !limits.hasMax()[job.tenant]
                        && !(limits.fairPreemption() && job.idleMode.mayBorrow())
                        && job.trace.gpus() < limits.largestNodeGpus() && !reclaiming.contains(job) && job.shownInCycle != cycle) {
                    onlyForTheGuarantee.add(job);
                }
                show.accept(job);
            }
        });
        if (limits.fairPreemption() && start.borrowers()) {
            showPreemptors(start, show);
        }
        cutGuaranteeCandidates(pending, start.freeGuarantee());
        if (!pending.isEmpty()) {
            return pending;
        }
        return holdings.anyPromotable(start.freeGuarantee()) ? pending : null;
    }

    /**
     * Borrowers that could preempt for fairness although their pool lends too little now. The core tries a quota's
     * waiting borrowers in queue order and stops at the first that finds no victims; each that does takes its GPUs out
     * of what the pool lends now and what other quotas borrow, at most {@code borrowable + borrowedGpus}. So of each
     * tenant's jobs in queue order, those after jobs that together ask for more than that are never tried. Counted are
     * only jobs that would take something if they went (they may borrow, some node and the cluster could hold them,
     * they do not fit the free guarantee, they are not already holding capacity for themselves and ask for no more
     * than that bound): a job that waits for another reason neither takes anything nor stops its quota. Every job up to
     * there that may borrow is shown; of a quota with a max, every one.
     */
    private void showPreemptors(Holdings.CycleStart start, Consumer<SimJob> show) {
        for (int t = 0; t < start.borrowable().length; t++) {
            long budget = Math.max(0, start.borrowable()[t]) + start.borrowedGpus();
            long freeGuarantee = start.freeGuarantee()[t];
            boolean all = limits.hasMax()[t];
            long[] asked = {0};
            queued.inQueueOrder(t, job -> {
                if (!all && asked[0] > budget) {
                    return false;
                }
                if (job.idleMode.mayBorrow()) {
                    show.accept(job);
                    if (job.trace.gpus() <= limits.largestNodeGpus() && job.queueGpus() <= limits.clusterGpus() && job.queueGpus() > freeGuarantee
                            && job.queueGpus() <= budget && !reclaiming.contains(job)) {
                        asked[0] += job.queueGpus();
                    }
                }
                return true;
            });
        }
    }

    /**
     * The jobs shown only because they fit their quota's free guarantee (no borrowing, not whole-node gangs) are often
     * hundreds a cycle, of which the guarantee takes a few: of each quota's, in queue order, those past what the
     * guarantee would hold if every one before them started are left out of {@link #cut}. If every one kept in did take
     * its share of the guarantee ({@link #cutHeld}), the core's decisions are those of the whole set: each one left out
     * would have found its quota's guarantee too small, and waited, changing nothing else. If not, the cycle is decided
     * again with the whole set.
     */
    private void cutGuaranteeCandidates(List<PendingRun> pending, long[] freeGuarantee) {
        cut = null;
        kept.clear();
        if (onlyForTheGuarantee.isEmpty()) {
            return;
        }
        onlyForTheGuarantee.sort(Comparator.comparingInt((SimJob job) -> limits.quotaOfTenant()[job.tenant]).thenComparingInt(job -> job.queueRank));
        int left = 0;
        int quota = -1;
        long budget = 0;
        for (SimJob job : onlyForTheGuarantee) {
            if (limits.quotaOfTenant()[job.tenant] != quota) {
                quota = limits.quotaOfTenant()[job.tenant];
                budget = freeGuarantee[job.tenant];
            }
            if (job.queueGpus() <= budget) {
                budget -= job.queueGpus();
                kept.add(job.id());
            } else {
                job.cutInCycle = cycle;
                left++;
            }
        }
        onlyForTheGuarantee.clear();
        if (left == 0) {
            kept.clear();
            return;
        }
        cut = new ArrayList<>(pending.size() - left);
        for (SimJob job : shownJobs) {
            if (job.cutInCycle != cycle) {
                cut.add(job.pending);
            }
        }
    }

    /** This cycle's shown jobs less those the guarantee could not hold ({@code null}: none left out). */
    List<PendingRun> cut() {
        return cut;
    }

    /** Whether every job kept in the cut took its share of its quota's guarantee: started on it, or holds it while borrowers stop. */
    boolean cutHeld(CycleResult result) {
        Set<RunId> took = new HashSet<>();
        for (Decision decision : result.decisions()) {
            if ((decision instanceof Decision.Admit admit && admit.realTimeResources() == RealTimeResources.InQuota)
                    || (decision instanceof Decision.Wait wait && wait.reason() == WaitReason.WaitingForReclaim)) {
                took.add(decision.runId());
            }
        }
        return took.containsAll(kept);
    }
}
