package io.slipstream.model;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.RunId;
import java.time.Instant;

/**
 * One entry of a run's history. {@code seq} is assigned by the store (0 before). {@code instance} names the
 * instance ({@code worker-2}) if any.
 */
public record RunEvent(long seq, RunId runId, Instant time, EventType type, String state, String reason, String message, String instance) {
    public RunEvent {
        requireNonNull(runId, "runId is null");
        requireNonNull(time, "time is null");
        requireNonNull(type, "type is null");
    }

    public static RunEvent of(RunId runId, Instant time, EventType type, String state, String reason, String message, String instance) {
        return new RunEvent(0, runId, time, type, state, reason, message, instance);
    }
}
