package io.slipstream.executor;

import java.time.Instant;
import java.util.Map;

/**
 * What an instance last showed of its life: when it last wrote output ({@code null}: never), and the progress it
 * last reported ({@code null}: none). Hang detection and lost-work accounting read it.
 */
public record Activity(Instant lastOutputAt, Progress progress) {
    public static final Activity NONE = new Activity(null, null);

    /**
     * Progress as a workload reports it (see the checkpoint contract in docs/fault-tolerance.md): the step it reached
     * at {@code at}, and the step of its newest complete checkpoint, saved at {@code checkpointAt}.
     */
    public record Progress(long step, Instant at, Long checkpointStep, Instant checkpointAt, Map<String, Double> metrics) {
        public Progress {
            metrics = metrics == null ? Map.of() : Map.copyOf(metrics);
        }
    }
}
