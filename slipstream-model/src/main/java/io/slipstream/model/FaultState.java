package io.slipstream.model;

import java.time.Instant;

/**
 * What the platform remembers of a run's faults and progress across its attempts.
 *
 * @param failures       restarts after retryable failures
 * @param nodeLost       restarts after a node was lost
 * @param hangs          restarts after the run was declared hung
 * @param preemptions    restarts after its resources were reclaimed (never counted against the others' budgets)
 * @param lastError      the last failure's signature (exit code and matched rule), for "the same error N times"
 * @param sameErrorCount how many failures in a row had {@code lastError}
 * @param restarting     why a {@code TERMINATING} run is stopping to be queued again ({@code null}: not restarting)
 * @param retryAt        a requeued run is not admitted before this (backoff); {@code null}: at once
 * @param checkpointStep the step of the last checkpoint a workload reported ({@code null}: none yet)
 * @param checkpointAt   when that checkpoint was saved
 * @param progressStep   the last step a workload reported
 * @param progressAt     when it reported it
 * @param workLostMillis instance-milliseconds of work done after the last checkpoint and thrown away by stops
 */
public record FaultState(
        int failures,
        int nodeLost,
        int hangs,
        int preemptions,
        String lastError,
        int sameErrorCount,
        RestartCause restarting,
        Instant retryAt,
        Long checkpointStep,
        Instant checkpointAt,
        Long progressStep,
        Instant progressAt,
        long workLostMillis) {

    public static final FaultState NONE = new FaultState(0, 0, 0, 0, null, 0, null, null, null, null, null, null, 0);

    /** Why a run is started again. */
    public enum RestartCause {
        PREEMPTION,
        FAILURE,
        NODE_LOST,
        HANG
    }

    public FaultState restarting(RestartCause cause) {
        return new FaultState(failures, nodeLost, hangs, preemptions, lastError, sameErrorCount, cause, retryAt, checkpointStep, checkpointAt, progressStep,
                progressAt, workLostMillis);
    }

    /** A failure with {@code signature} happened: counts it towards "the same error in a row". */
    public FaultState failedWith(String signature) {
        int same = signature.equals(lastError) ? sameErrorCount + 1 : 1;
        return new FaultState(failures, nodeLost, hangs, preemptions, signature, same, restarting, retryAt, checkpointStep, checkpointAt, progressStep,
                progressAt, workLostMillis);
    }

    /** The restart is done: its cause is counted and the next attempt waits until {@code notBefore}. */
    public FaultState restarted(Instant notBefore) {
        RestartCause cause = restarting;
        return new FaultState(failures + (cause == RestartCause.FAILURE ? 1 : 0), nodeLost + (cause == RestartCause.NODE_LOST ? 1 : 0),
                hangs + (cause == RestartCause.HANG ? 1 : 0), preemptions + (cause == RestartCause.PREEMPTION ? 1 : 0), lastError, sameErrorCount, null, notBefore, checkpointStep, checkpointAt,
                progressStep, progressAt, workLostMillis);
    }

    /**
     * One instance was restarted in place after a failure (runType Async): counted as a failure restart of the run, and
     * the restarted instance waits until {@code notBefore} ({@code null}: at once).
     */
    public FaultState restartedInstance(Instant notBefore) {
        return new FaultState(failures + 1, nodeLost, hangs, preemptions, lastError, sameErrorCount, restarting, notBefore, checkpointStep, checkpointAt,
                progressStep, progressAt, workLostMillis);
    }

    /** What the workload last reported; only ever moves forward. */
    public FaultState progressed(Long step, Instant at, Long checkpoint, Instant checkpointTime) {
        boolean newCheckpoint = checkpoint != null && checkpointTime != null && (checkpointAt == null || checkpointTime.isAfter(checkpointAt));
        boolean newProgress = step != null && at != null && (progressAt == null || at.isAfter(progressAt));
        return new FaultState(failures, nodeLost, hangs, preemptions, lastError, sameErrorCount, restarting, retryAt,
                newCheckpoint ? checkpoint : checkpointStep, newCheckpoint ? checkpointTime : checkpointAt, newProgress ? step : progressStep,
                newProgress ? at : progressAt, workLostMillis);
    }

    /** With at least {@code count} preemptions (runs stored before the count moved here kept it in a column of its own). */
    public FaultState withPreemptionsAtLeast(int count) {
        return count <= preemptions ? this : new FaultState(failures, nodeLost, hangs, count, lastError, sameErrorCount, restarting, retryAt,
                checkpointStep, checkpointAt, progressStep, progressAt, workLostMillis);
    }

    public FaultState lost(long instanceMillis) {
        return new FaultState(failures, nodeLost, hangs, preemptions, lastError, sameErrorCount, restarting, retryAt, checkpointStep, checkpointAt,
                progressStep, progressAt, workLostMillis + Math.max(0, instanceMillis));
    }
}
