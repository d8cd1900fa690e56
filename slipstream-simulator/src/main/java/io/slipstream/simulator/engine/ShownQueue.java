package io.slipstream.simulator.engine;

import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.WaitReason;
import io.slipstream.scheduler.CycleResult;
import io.slipstream.scheduler.Decision;
import io.slipstream.scheduler.PendingRun;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
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
    /**
     * This cycle's number (a job shown this cycle has it as {@code SimJob.shownInCycle}: no set to fill and clear each
     * cycle), its shown jobs in the order of the runs shown; whether some that fit their guarantee were left out; the
     * free guarantees it started from.
     */
    private long cycle;
    private final List<SimJob> shownJobs = new ArrayList<>();
    private boolean leftOutEntitled;
    private long[] freeGuaranteeAtStart;
    private final long[] noBorrowing;
    /** This cycle's jobs shown only for their quota's guarantee, the ids of those kept in the cut, and the cut. */
    private final List<SimJob> onlyForTheGuarantee = new ArrayList<>();
    private final Set<RunId> kept = new HashSet<>();
    private List<PendingRun> cut;

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
                if (!couldBorrow && !limits.preemptsWithinQuota()[job.tenant] && !limits.hasMax()[job.tenant] && job.trace.gpus() < limits.largestNodeGpus()
                        && !reclaiming.contains(job) && job.shownInCycle != cycle) {
                    onlyForTheGuarantee.add(job);
                }
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
        cutGuaranteeCandidates(pending, start.freeGuarantee());
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
            if (job.gpus() <= budget) {
                budget -= job.gpus();
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
            if (job.shownInCycle == cycle || job.trace.gpus() > limits.largestNodeGpus() || job.gpus() > limits.clusterGpus()) {
                return;
            }
            long free = freeGuaranteeAtStart[job.tenant];
            for (SimJob admitted : givenGuarantee) {
                if (limits.quotaOfTenant()[admitted.tenant] == limits.quotaOfTenant()[job.tenant] && admitted.queueRank < job.queueRank) {
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
