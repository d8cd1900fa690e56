package io.slipstream.server;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.StringJoiner;

/**
 * How long each step of a start took, for the log line that says when the server is ready: where a slow start went
 * (the JVM and its class loading before the server is asked to start, the store, adoption, the API).
 */
final class StartupTimes {
    private final Map<String, Long> steps = new LinkedHashMap<>();
    private long last = System.nanoTime();

    /** Ends the step {@code name}, begun where the last one ended. */
    void done(String name) {
        long now = System.nanoTime();
        steps.merge(name, now - last, Long::sum);
        last = now;
    }

    /** "JVM start to server start 900 ms, store 300 ms, ...": the first part from the JVM's start, when it is known. */
    String summary(Instant processStart, Instant serverStart) {
        StringJoiner joiner = new StringJoiner(", ");
        if (processStart != null && !processStart.isAfter(serverStart)) {
            joiner.add("JVM start to server start " + Duration.between(processStart, serverStart).toMillis() + " ms");
        }
        steps.forEach((name, nanos) -> joiner.add(name + " " + nanos / 1_000_000 + " ms"));
        return joiner.toString();
    }

    /**
     * When the JVM started, to the millisecond (the process's start time in /proc is only as exact as the boot time,
     * a whole second); read once the server is ready, so that loading what it takes delays nothing.
     */
    static Instant processStart() {
        try {
            return Instant.ofEpochMilli(java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime());
        } catch (RuntimeException | LinkageError e) {
            return null;
        }
    }
}
