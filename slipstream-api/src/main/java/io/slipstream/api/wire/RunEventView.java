package io.slipstream.api.wire;

import java.time.Instant;

/** One entry of a run's history: a state change or something that happened to one of its instances. */
public record RunEventView(long seq, Instant time, String type, String state, String reason, String message, String instance) {
}
