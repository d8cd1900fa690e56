package io.slipstream.model.testing;

import io.slipstream.api.run.RunId;
import io.slipstream.model.EventType;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import java.time.Instant;

/**
 * Runs and instances for tests, with defaults that make a valid record in one call:
 * {@code aRun().workspace("team-b").running(t).build()}, {@code anInstance(run).rank(1).node("node-2").build()}.
 * Lifecycle steps go through {@link RunRecord}'s own moves, so a built record is one the state machine allows.
 */
public final class Runs {
    /** When built runs are created unless told otherwise. */
    public static final Instant T0 = Instant.parse("2026-03-01T10:00:00Z");

    private Runs() {
    }

    /** A queued run of job {@code job} in {@code team-a}, at job version 1, created at {@link #T0}, with a fresh id. */
    public static RunBuilder aRun() {
        return new RunBuilder("job");
    }

    /** A queued run of job {@code job} (its spec: {@code aJob(job)}). */
    public static RunBuilder aRun(String job) {
        return new RunBuilder(job);
    }

    /** The first instance (rank 0 of group {@code main} on {@code node-1}) of the run's current attempt. */
    public static InstanceBuilder anInstance(RunRecord run) {
        return new InstanceBuilder(run.id(), run.attempt());
    }

    /** The first instance (rank 0 of group {@code main} on {@code node-1}) of attempt 1 of {@code runId}. */
    public static InstanceBuilder anInstance(RunId runId) {
        return new InstanceBuilder(runId, 1);
    }

    /** The event a store records with a new run ({@code tx.createRun(run, created(run))}). */
    public static RunEvent created(RunRecord run) {
        return RunEvent.of(run.id(), run.createdAt(), EventType.StateChanged, run.state().name(), run.reason(), null, null);
    }
}
