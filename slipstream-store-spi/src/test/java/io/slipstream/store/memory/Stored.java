package io.slipstream.store.memory;

import java.time.Instant;
import java.time.temporal.ChronoUnit;

/** What the JDBC store's columns do to values, done the same here: times to the microsecond, text shortened. */
final class Stored {
    /** The length of a reason column ({@code VARCHAR(1024)}), and of an event's message ({@code VARCHAR(4096)}). */
    static final int REASON = 1024;
    static final int MESSAGE = 4096;

    private Stored() {
    }

    /** An instant as a {@code TIMESTAMP WITH TIME ZONE} column keeps it: to the microsecond, rounded half up. */
    static Instant micros(Instant instant) {
        return instant == null ? null : instant.plusNanos(500).truncatedTo(ChronoUnit.MICROS);
    }

    static String truncate(String text, int max) {
        return text == null || text.length() <= max ? text : text.substring(0, max - 1) + "…";
    }
}
