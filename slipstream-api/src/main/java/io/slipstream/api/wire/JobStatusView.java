package io.slipstream.api.wire;

import java.time.Instant;

/**
 * What the server says of a scheduled job beside its document: {@code nextRunAt}, the next due time of its schedule
 * (absent while the schedule is suspended).
 */
public record JobStatusView(Instant nextRunAt) {
}
