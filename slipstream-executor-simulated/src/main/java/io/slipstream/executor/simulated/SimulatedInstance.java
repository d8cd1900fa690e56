package io.slipstream.executor.simulated;

import java.time.Duration;
import java.time.Instant;

/**
 * One simulated instance as it is kept on disk: what it was told at launch and at a stop, and how it ended. When it ends
 * follows from these alone ({@link #dueAt}), so an executor that adopts it after a restart ends it when it would have
 * ended had the server not stopped: its clock went on.
 *
 * @param token      tells this launch apart from another of the same instance id (the handle's identity)
 * @param runMillis  how long it runs unless stopped
 * @param exitCode   what it exits with when it ends by itself
 * @param stopAt     when it was told to stop ({@code null}: never)
 * @param graceMillis the grace period it was given then
 * @param ackMillis  how long after the notice it acknowledges it and exits (the executor's setting at the time)
 * @param endedAt    when it ended ({@code null}: it runs)
 */
record SimulatedInstance(String token, String node, Instant startedAt, long runMillis, int exitCode, Instant stopAt, long graceMillis,
                         long ackMillis, String stopReason, Instant endedAt, int endCode, boolean terminated) {
    static SimulatedInstance started(String token, String node, Instant at, Duration runs, int exitCode) {
        return new SimulatedInstance(token, node, at, runs.toMillis(), exitCode, null, 0, 0, null, null, 0, false);
    }

    boolean ended() {
        return endedAt != null;
    }

    /**
     * Told to stop now, with {@code grace}; acknowledging after {@code ack}. A second stop changes nothing unless it
     * ends the instance sooner (a stop without grace period after a reclaim's notice kills it at once).
     */
    SimulatedInstance stopped(Instant at, Duration grace, Duration ack, String reason) {
        SimulatedInstance stop = new SimulatedInstance(token, node, startedAt, runMillis, exitCode, at, grace.toMillis(), ack.toMillis(), reason, null, 0,
                false);
        return stopAt == null || stop.stopEnd().isBefore(stopEnd()) ? stop : this;
    }

    /** When a stop ends it: acknowledged, or killed when its grace period ends. */
    private Instant stopEnd() {
        return stopAt.plusMillis(Math.min(ackMillis, graceMillis));
    }

    /** When it ends, unless something else ends it first: by itself, or on a stop (acknowledged, or killed at the end of its grace). */
    Instant dueAt() {
        Instant byItself = startedAt.plusMillis(runMillis);
        if (stopAt == null) {
            return byItself;
        }
        Instant onStop = stopEnd();
        return onStop.isBefore(byItself) ? onStop : byItself;
    }

    /** Ended at {@link #dueAt}: with its own exit code by itself; 143 when it acknowledged a stop; 137 when killed. */
    SimulatedInstance ended(Instant at) {
        Instant byItself = startedAt.plusMillis(runMillis);
        boolean onStop = stopAt != null && at.isBefore(byItself);
        int code = !onStop ? exitCode : graceMillis == 0 || ackMillis >= graceMillis ? 137 : 143;
        return new SimulatedInstance(token, node, startedAt, runMillis, exitCode, stopAt, graceMillis, ackMillis, stopReason, at, code, stopAt != null);
    }
}
