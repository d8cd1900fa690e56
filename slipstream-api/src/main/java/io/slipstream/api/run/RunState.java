package io.slipstream.api.run;

import java.util.EnumSet;
import java.util.Set;

/**
 * The life of a run. {@code TERMINATING} means the platform is stopping its instances (cancel, one instance failed,
 * or its resources are reclaimed) and waits for every process to be confirmed gone before the run moves on: to its
 * final state, or back to {@code QUEUED} after a preemption.
 */
public enum RunState {
    QUEUED,
    STARTING,
    RUNNING,
    TERMINATING,
    SUCCEEDED,
    FAILED,
    CANCELLED,
    TIMED_OUT;

    public boolean isFinal() {
        return this == SUCCEEDED || this == FAILED || this == CANCELLED || this == TIMED_OUT;
    }

    /** Whether a run in this state holds resources on nodes. */
    public boolean holdsResources() {
        return this == STARTING || this == RUNNING || this == TERMINATING;
    }

    /** The states a run may move to from this one; anything else is a bug and is refused. */
    public Set<RunState> successors() {
        return switch (this) {
            case QUEUED -> EnumSet.of(STARTING, CANCELLED, FAILED);
            case STARTING -> EnumSet.of(RUNNING, TERMINATING, SUCCEEDED, FAILED);
            case RUNNING -> EnumSet.of(TERMINATING, SUCCEEDED, FAILED);
            case TERMINATING -> EnumSet.of(SUCCEEDED, FAILED, CANCELLED, TIMED_OUT, QUEUED);
            case SUCCEEDED, FAILED, CANCELLED, TIMED_OUT -> EnumSet.noneOf(RunState.class);
        };
    }

    public boolean canMoveTo(RunState next) {
        return successors().contains(next);
    }
}
