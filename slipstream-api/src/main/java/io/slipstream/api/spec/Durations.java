package io.slipstream.api.spec;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations as people write them in specs and config: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 72h}, {@code 30d}. */
public final class Durations {
    private static final Pattern FORMAT = Pattern.compile("(\\d{1,9})(ms|s|m|h|d)");

    private Durations() {
    }

    /** @throws IllegalArgumentException with a message fit for a user */
    public static Duration parse(String text) {
        Matcher m = FORMAT.matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a duration (examples: 500ms, 30s, 5m, 72h, 30d)");
        }
        long amount = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(amount);
            case "s" -> Duration.ofSeconds(amount);
            case "m" -> Duration.ofMinutes(amount);
            case "h" -> Duration.ofHours(amount);
            default -> Duration.ofDays(amount);
        };
    }

    /** The shortest exact form: {@code 90s} stays {@code 90s}, {@code 120s} becomes {@code 2m}. */
    public static String format(Duration duration) {
        long millis = duration.toMillis();
        if (millis % 1000 != 0) {
            return millis + "ms";
        }
        long seconds = millis / 1000;
        if (seconds != 0 && seconds % 86_400 == 0) {
            return seconds / 86_400 + "d";
        }
        if (seconds != 0 && seconds % 3600 == 0) {
            return seconds / 3600 + "h";
        }
        if (seconds != 0 && seconds % 60 == 0) {
            return seconds / 60 + "m";
        }
        return seconds + "s";
    }
}
