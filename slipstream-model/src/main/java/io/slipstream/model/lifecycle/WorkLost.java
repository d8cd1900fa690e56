package io.slipstream.model.lifecycle;

import java.util.Locale;

/** The work a stopped attempt threw away: what its instances did after the newest checkpoint ({@code null}: none yet). */
public record WorkLost(int attempt, long instanceMillis, Long checkpointStep) {
    /** As the run's history says it. */
    public String message() {
        String since = checkpointStep == null ? "no checkpoint yet" : "the checkpoint of step " + checkpointStep;
        return String.format(Locale.ROOT, "attempt %d lost %.1f instance-seconds of work (since %s)", attempt, instanceMillis / 1000.0, since);
    }
}
