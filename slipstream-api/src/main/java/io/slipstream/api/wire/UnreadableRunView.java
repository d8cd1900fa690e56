package io.slipstream.api.wire;

import java.time.Instant;

/**
 * A run whose stored record this server cannot read (see docs/operations.md): what its row still tells, and why the
 * rest cannot be read. The control loop leaves it alone; every other run goes on.
 */
public record UnreadableRunView(String id, String job, String workspace, String state, Instant createdAt, String storedDataError) {
}
