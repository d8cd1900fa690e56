package io.slipstream.store;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.JobSpec;
import java.time.Instant;

/**
 * A run as stored. {@code spec} is the effective job spec it runs (shapes resolved). {@code cancelRequestedAt}
 * is set once a cancel was accepted, so that a restart finishes the cancel. {@code outcome} is the final state a
 * {@code TERMINATING} run will reach once all its processes are confirmed gone.
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
        long version) {

    public RunRecord {
        requireNonNull(id, "id is null");
        requireNonNull(workspace, "workspace is null");
        requireNonNull(job, "job is null");
        requireNonNull(state, "state is null");
        requireNonNull(reason, "reason is null");
        requireNonNull(spec, "spec is null");
        requireNonNull(createdAt, "createdAt is null");
    }

    /** A new queued run at version 0 (the store makes it version 1). */
    public static RunRecord queued(RunId id, String workspace, String job, long jobVersion, JobSpec spec, Instant now) {
        return new RunRecord(id, workspace, job, jobVersion, RunState.QUEUED, "Submitted", null, 1, spec.priority(), spec,
                now, null, null, null, 0);
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
                cancelRequestedAt, version);
    }

    /** This run starts stopping its instances and will end in {@code finalState} once they are gone. */
    public RunRecord terminating(RunState finalState, String why) {
        if (!finalState.isFinal()) {
            throw new IllegalArgumentException("not a final state: " + finalState);
        }
        if (state != RunState.TERMINATING && !state.canMoveTo(RunState.TERMINATING)) {
            throw new IllegalStateException("run " + id + " cannot move from " + state + " to TERMINATING");
        }
        return new RunRecord(id, workspace, job, jobVersion, RunState.TERMINATING, why, finalState, attempt, priority, spec,
                createdAt, startedAt, finishedAt, cancelRequestedAt, version);
    }

    public RunRecord withCancelRequestedAt(Instant at) {
        return new RunRecord(id, workspace, job, jobVersion, state, reason, outcome, attempt, priority, spec, createdAt, startedAt,
                finishedAt, at, version);
    }

    public RunRecord withVersion(long newVersion) {
        return new RunRecord(id, workspace, job, jobVersion, state, reason, outcome, attempt, priority, spec, createdAt, startedAt,
                finishedAt, cancelRequestedAt, newVersion);
    }
}
