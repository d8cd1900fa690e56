package io.slipstream.model;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.JobSpec;
import java.time.Instant;

/**
 * A run as stored. {@code spec} is the effective job spec it runs (shapes resolved). {@code cancelRequestedAt} is set
 * once a cancel was accepted, so that a restart finishes the cancel. {@code outcome} is where a {@code TERMINATING} run
 * goes once all its processes are confirmed gone: a final state, or {@code QUEUED} after a preemption.
 * {@code realTimeResources} says where a run holding resources got them; {@code reclaimFor} names the run a
 * preempted run's resources go to while it stops; {@code capacityReclaimed} says that a run preempted for this one is
 * gone, so what it held is this one's until it is admitted. {@code attemptStartedAt} is when the current attempt was
 * admitted (from then on it holds resources) and {@code priorRuntimeMillis} how long earlier attempts ran: queued time
 * never counts towards {@code maxRuntime}. {@code world} is an elastic run's current world while it holds resources
 * ({@code null}: a rigid run, or one queued).
 */
public record RunRecord(
        RunId id,
        String workspace,
        String job,
        long jobVersion,
        RunState state,
        String reason,
        RunState outcome,
        int attempt,
        int priority,
        JobSpec spec,
        Instant createdAt,
        Instant startedAt,
        Instant finishedAt,
        Instant cancelRequestedAt,
        RealTimeResources realTimeResources,
        RunId reclaimFor,
        boolean capacityReclaimed,
        RunOrigin origin,
        Instant attemptStartedAt,
        long priorRuntimeMillis,
        FaultState faults,
        ElasticWorld world,
        long version) {

    public RunRecord {
        requireNonNull(id, "id is null");
        requireNonNull(workspace, "workspace is null");
        requireNonNull(job, "job is null");
        requireNonNull(state, "state is null");
        requireNonNull(reason, "reason is null");
        requireNonNull(spec, "spec is null");
        requireNonNull(createdAt, "createdAt is null");
        origin = origin == null ? RunOrigin.MANUAL : origin;
        faults = faults == null ? FaultState.NONE : faults;
    }

    /** A run stored before elastic runs: no world. */
    public RunRecord(RunId id, String workspace, String job, long jobVersion, RunState state, String reason, RunState outcome, int attempt, int priority,
                     JobSpec spec, Instant createdAt, Instant startedAt, Instant finishedAt, Instant cancelRequestedAt,
                     RealTimeResources realTimeResources, RunId reclaimFor, boolean capacityReclaimed, RunOrigin origin, Instant attemptStartedAt,
                     long priorRuntimeMillis, FaultState faults, long version) {
        this(id, workspace, job, jobVersion, state, reason, outcome, attempt, priority, spec, createdAt, startedAt, finishedAt, cancelRequestedAt,
                realTimeResources, reclaimFor, capacityReclaimed, origin, attemptStartedAt, priorRuntimeMillis, faults, null, version);
    }

    /** A new queued run at version 0 (the store makes it version 1). */
    public static RunRecord queued(RunId id, String workspace, String job, long jobVersion, JobSpec spec, Instant now) {
        return queued(id, workspace, job, jobVersion, spec, RunOrigin.MANUAL, now);
    }

    public static RunRecord queued(RunId id, String workspace, String job, long jobVersion, JobSpec spec, RunOrigin origin, Instant now) {
        return new RunRecord(id, workspace, job, jobVersion, RunState.QUEUED, origin.scheduleTime() != null ? "Scheduled" : "Submitted", null, 1,
                spec.priority(), spec, now, null, null, null, null, null, false, origin, null, 0, FaultState.NONE, null, 0);
    }

    /** How many times it was preempted and queued again. */
    public int preemptions() {
        return faults.preemptions();
    }

    /** How long the run has run, over all its attempts, at {@code now}. */
    public java.time.Duration runtime(Instant now) {
        long current = attemptStartedAt == null || !state.holdsResources() ? 0 : java.time.Duration.between(attemptStartedAt, now).toMillis();
        return java.time.Duration.ofMillis(priorRuntimeMillis + Math.max(0, current));
    }

    /** How long the current attempt has run at {@code now}. */
    public java.time.Duration attemptRuntime(Instant now) {
        return java.time.Duration.ofMillis(state.holdsResources() ? currentAttemptMillis(now) : 0);
    }

    /** The quota the run is charged to (one of its workspace), or {@code null}. */
    public QuotaId quotaId() {
        return spec.quota() == null ? null : new QuotaId(workspace, spec.quota());
    }

    /**
     * This run moved to {@code next}. Sets {@code startedAt} on first reaching RUNNING and {@code finishedAt} on a
     * final state.
     *
     * @throws IllegalStateException if the state machine does not allow the move
     */
    public RunRecord moveTo(RunState next, String why, Instant now) {
        if (!state.canMoveTo(next)) {
            throw new IllegalStateException("run " + id + " cannot move from " + state + " to " + next);
        }
        return new RunRecord(id, workspace, job, jobVersion, next, why, next == RunState.TERMINATING ? outcome : null, attempt,
                priority, spec, createdAt,
                startedAt == null && next == RunState.RUNNING ? now : startedAt,
                next.isFinal() ? now : finishedAt,
                cancelRequestedAt, next.holdsResources() ? realTimeResources : null, next == RunState.TERMINATING ? reclaimFor : null,
                capacityReclaimed, origin, next == RunState.RUNNING && attemptStartedAt == null ? now : attemptStartedAt,
                next.isFinal() ? priorRuntimeMillis + currentAttemptMillis(now) : priorRuntimeMillis, faults, world, version);
    }

    /** Admitted on its quota's guarantee or on idle capacity. */
    public RunRecord admitted(RealTimeResources where, String why, Instant now) {
        RunRecord starting = moveTo(RunState.STARTING, why, now);
        // Its runtime counts from here: it holds its resources from admission on, while it starts too.
        return new RunRecord(id, workspace, job, jobVersion, starting.state, why, null, attempt, priority, spec, createdAt, startedAt,
                finishedAt, cancelRequestedAt, where, null, false, origin, now, priorRuntimeMillis, faults, world, version);
    }

    /** From idle capacity onto its quota's guarantee, without a restart. */
    public RunRecord promoted() {
        return new RunRecord(id, workspace, job, jobVersion, state, reason, outcome, attempt, priority, spec, createdAt, startedAt,
                finishedAt, cancelRequestedAt, RealTimeResources.InQuota, reclaimFor, capacityReclaimed, origin, attemptStartedAt, priorRuntimeMillis, faults,
                world == null ? null : world.allGuaranteed(), version);
    }

    /** This run starts stopping its instances and will end in {@code finalState} once they are gone. */
    public RunRecord terminating(RunState finalState, String why) {
        if (!finalState.isFinal()) {
            throw new IllegalArgumentException("not a final state: " + finalState);
        }
        // A preempted run that is then cancelled still frees its resources for the run they were reclaimed for.
        return stopping(finalState, state == RunState.TERMINATING ? reclaimFor : null, why).withFaults(faults.restarting(null));
    }

    /** This run is preempted: its instances are stopped, then it is queued again; its resources go to {@code forRun}. */
    public RunRecord preempting(RunId forRun, String why) {
        return stopping(RunState.QUEUED, forRun, why).withFaults(faults.restarting(FaultState.RestartCause.PREEMPTION));
    }

    /** This run stops all its instances, then is queued again as a new attempt because of {@code cause}. */
    public RunRecord restarting(FaultState.RestartCause cause, String why) {
        return stopping(RunState.QUEUED, null, why).withFaults(faults.restarting(cause));
    }

    /** Why this run is stopping to be queued again, or {@code null} if it is not. */
    public FaultState.RestartCause restartCause() {
        if (state != RunState.TERMINATING || outcome != RunState.QUEUED) {
            return null;
        }
        return faults.restarting() == null ? FaultState.RestartCause.PREEMPTION : faults.restarting();
    }

    private RunRecord stopping(RunState next, RunId forRun, String why) {
        if (state != RunState.TERMINATING && !state.canMoveTo(RunState.TERMINATING)) {
            throw new IllegalStateException("run " + id + " cannot move from " + state + " to TERMINATING");
        }
        return new RunRecord(id, workspace, job, jobVersion, RunState.TERMINATING, why, next, attempt, priority, spec,
                createdAt, startedAt, finishedAt, cancelRequestedAt, realTimeResources, forRun, capacityReclaimed, origin, attemptStartedAt,
                priorRuntimeMillis, faults, world, version);
    }

    /** A preempted run whose instances are all gone, queued again for its next attempt. */
    public RunRecord requeued(String why, Instant now) {
        return requeued(why, now, null);
    }

    /**
     * A restarting run whose instances are all gone, queued again for its next attempt, which is not admitted before
     * {@code notBefore} ({@code null}: at once). Its restart is counted under its cause.
     */
    public RunRecord requeued(String why, Instant now, Instant notBefore) {
        FaultState.RestartCause cause = restartCause();
        if (cause == null) {
            throw new IllegalStateException("run " + id + " is not being restarted");
        }
        return new RunRecord(id, workspace, job, jobVersion, RunState.QUEUED, why, null, attempt + 1, priority, spec, createdAt,
                startedAt, null, cancelRequestedAt, null, null, capacityReclaimed, origin, null,
                priorRuntimeMillis + currentAttemptMillis(now), faults.restarting(cause).restarted(notBefore), null, version);
    }

    public RunRecord withFaults(FaultState newFaults) {
        return new RunRecord(id, workspace, job, jobVersion, state, reason, outcome, attempt, priority, spec, createdAt, startedAt,
                finishedAt, cancelRequestedAt, realTimeResources, reclaimFor, capacityReclaimed, origin, attemptStartedAt, priorRuntimeMillis, newFaults,
                world, version);
    }

    private long currentAttemptMillis(Instant now) {
        return attemptStartedAt == null || now == null ? 0 : Math.max(0, java.time.Duration.between(attemptStartedAt, now).toMillis());
    }

    /**
     * A run it preempted is gone: the capacity that run held is this queued run's, and the scheduler places it first
     * until it is admitted.
     */
    public RunRecord withCapacityReclaimed() {
        return new RunRecord(id, workspace, job, jobVersion, state, reason, outcome, attempt, priority, spec, createdAt, startedAt,
                finishedAt, cancelRequestedAt, realTimeResources, reclaimFor, true, origin, attemptStartedAt, priorRuntimeMillis, faults, world, version);
    }

    /** Its elastic world changed ({@code null}: none). */
    public RunRecord withWorld(ElasticWorld newWorld) {
        return new RunRecord(id, workspace, job, jobVersion, state, reason, outcome, attempt, priority, spec, createdAt, startedAt,
                finishedAt, cancelRequestedAt, realTimeResources, reclaimFor, capacityReclaimed, origin, attemptStartedAt, priorRuntimeMillis, faults,
                newWorld, version);
    }

    /** Whether its spec lets it change size: some node group is elastic. */
    public boolean elastic() {
        return spec.nodeGroups().stream().anyMatch(io.slipstream.api.spec.NodeGroupSpec::elastic);
    }

    public RunRecord withCancelRequestedAt(Instant at) {
        return new RunRecord(id, workspace, job, jobVersion, state, reason, outcome, attempt, priority, spec, createdAt, startedAt,
                finishedAt, at, realTimeResources, reclaimFor, capacityReclaimed, origin, attemptStartedAt, priorRuntimeMillis, faults, world, version);
    }

    public RunRecord withVersion(long newVersion) {
        return new RunRecord(id, workspace, job, jobVersion, state, reason, outcome, attempt, priority, spec, createdAt, startedAt,
                finishedAt, cancelRequestedAt, realTimeResources, reclaimFor, capacityReclaimed, origin, attemptStartedAt, priorRuntimeMillis, faults, world, newVersion);
    }
}
