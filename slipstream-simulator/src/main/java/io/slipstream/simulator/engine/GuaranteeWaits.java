package io.slipstream.simulator.engine;

import io.slipstream.api.run.RunId;
import io.slipstream.api.run.WaitReason;
import io.slipstream.scheduler.Decision;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The guarantee-wait clock of the queued jobs (docs/simulation.md, "guarantee wait"). It runs while a job fits its
 * quota's guarantee but waits for capacity: for nodes, or for borrowers to give the capacity back. It stops while the
 * job no longer fits (its quota's own runs took the room: the core tells it so, or does not show it), and a borrower
 * waiting for runs stopped for it (for fairness, or extras giving way to its minimum) is not waiting for its guarantee.
 * What it ran is counted when the job starts on its guarantee.
 */
final class GuaranteeWaits {
    /** Jobs whose clock runs: a cycle that tells one of them anything else, or nothing, stops it. */
    private final Set<RunId> running = new HashSet<>();

    /** Whether a wait of this reason for this run must be looked at: it may start a clock, or stop one. */
    boolean matters(Decision.Wait wait) {
        return wait.reason() == WaitReason.WaitingForReclaim || wait.reason() == WaitReason.WaitingForResources
                || wait.reason() == WaitReason.WaitingForTopology || !running.isEmpty() && running.contains(wait.runId());
    }

    /** The cycle at {@code now} tells the job why it waits; {@code changedAt}: the change the cycle saw first. */
    void told(SimJob job, WaitReason reason, long now, long changedAt) {
        job.toldAt = now;
        if (fitsItsGuarantee(job, reason)) {
            if (job.entitledAt < 0) {
                job.entitledAt = Math.max(job.queuedSince, changedAt);
                running.add(job.id());
            }
        } else if (job.entitledAt >= 0) {
            stop(job, changedAt);
        }
    }

    /**
     * After the cycle at {@code now}: a job whose clock runs but which the cycle told nothing was not shown to the core,
     * or was cut, because it no longer fits its guarantee (given the whole queue, the core would have said so).
     */
    void cycleEnded(Map<RunId, SimJob> jobs, long now, long changedAt) {
        if (running.isEmpty()) {
            return;
        }
        for (RunId id : List.copyOf(running)) {
            SimJob job = jobs.get(id);
            if (job.toldAt != now) {
                stop(job, changedAt);
            }
        }
    }

    /** The job starts at {@code now}: its guarantee wait in seconds, or -1 if it has none (it did not wait for its guarantee). */
    double started(SimJob job, long now) {
        running.remove(job.id());
        if (!job.inQuota || (job.entitledAt < 0 && job.entitledBefore == 0)) {
            return -1;
        }
        return (job.entitledBefore + (job.entitledAt >= 0 ? now - job.entitledAt : 0)) / 1000.0;
    }

    private void stop(SimJob job, long changedAt) {
        job.entitledBefore += Math.max(job.entitledAt, changedAt) - job.entitledAt;
        job.entitledAt = -1;
        running.remove(job.id());
    }

    /**
     * Whether a run told this fits its quota's guarantee but not the nodes: others' guaranteed work is in the way, or
     * borrowers stop to give its quota's capacity back. A run told it waits for its quota or idle capacity does not fit.
     */
    private static boolean fitsItsGuarantee(SimJob job, WaitReason reason) {
        return switch (reason) {
            case WaitingForResources, WaitingForTopology -> true;
            case WaitingForReclaim -> !job.reclaimAsBorrower;
            case WaitingForQuota, WaitingForIdleCapacity, WaitingForFairShare, NothingToBorrow, ExceedsQuotaMax, ExceedsGuarantee, QuotaNotFound,
                 NoNodeFits, BackingOff -> false;
        };
    }
}
