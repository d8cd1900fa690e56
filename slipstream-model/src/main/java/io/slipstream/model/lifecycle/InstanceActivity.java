package io.slipstream.model.lifecycle;

import java.time.Instant;

/**
 * What an instance last showed of its life, as the control loop read it from the executor or the progress API:
 * its last output ({@code null}: never), and the progress it last reported ({@code step}/{@code stepAt}, the newest
 * complete checkpoint {@code checkpointStep}/{@code checkpointAt}; {@code null}: none).
 */
public record InstanceActivity(Instant lastOutputAt, Long step, Instant stepAt, Long checkpointStep, Instant checkpointAt) {
    public static final InstanceActivity NONE = new InstanceActivity(null, null, null, null, null);
}
