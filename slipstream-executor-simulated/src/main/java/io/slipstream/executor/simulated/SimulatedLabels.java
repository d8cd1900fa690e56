package io.slipstream.executor.simulated;

import io.slipstream.api.spec.Durations;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a run's labels tell its simulated instances: how long they run ({@value #DURATION}, e.g. {@code 30s}; the
 * executor's default without it) and the exit code they end with ({@value #EXIT_CODE}, 0 without it). Tenant input:
 * read as values, checked when a job is applied and a run created ({@link #refusals}), and again at launch.
 */
record SimulatedLabels(Duration duration, int exitCode) {
    static final String DURATION = "slipstream.io/simulated-duration";
    static final String EXIT_CODE = "slipstream.io/simulated-exit-code";

    /** The labels' instructions, with {@code defaultDuration} where they give none; {@code null} when they are invalid. */
    static SimulatedLabels of(Map<String, String> labels, Duration defaultDuration) {
        if (!refusals(labels, null).isEmpty()) {
            return null;
        }
        String duration = labels.get(DURATION);
        String exitCode = labels.get(EXIT_CODE);
        return new SimulatedLabels(duration == null ? defaultDuration : Durations.parse(duration), exitCode == null ? 0 : Integer.parseInt(exitCode.trim()));
    }

    /**
     * Why each of these labels is refused, by label key: a duration that is not one (or is 0), one not shorter than the
     * run's {@code maxRuntime} (it would be timed out, never end as its label says), an exit code that is not one of
     * 0-255. {@code maxRuntime}: {@code null} when it is not known (at launch).
     */
    static Map<String, String> refusals(Map<String, String> labels, Duration maxRuntime) {
        Map<String, String> refused = new LinkedHashMap<>();
        String duration = labels.get(DURATION);
        if (duration != null) {
            try {
                Duration parsed = Durations.parse(duration);
                if (parsed.isZero()) {
                    refused.put(DURATION, "must be longer than 0 (examples: 500ms, 30s, 5m)");
                } else if (maxRuntime != null && parsed.compareTo(maxRuntime) >= 0) {
                    refused.put(DURATION, "must be shorter than the run's maxRuntime (" + Durations.format(maxRuntime)
                            + ": its job's, or this installation's longest): the run would be timed out, not end after " + duration);
                }
            } catch (IllegalArgumentException e) {
                refused.put(DURATION, e.getMessage());
            }
        }
        String exitCode = labels.get(EXIT_CODE);
        if (exitCode != null && (!exitCode.trim().matches("\\d{1,3}") || Integer.parseInt(exitCode.trim()) > 255)) {
            refused.put(EXIT_CODE, "must be an exit code, a whole number from 0 to 255, not '" + exitCode + "'");
        }
        return refused;
    }
}
