package io.slipstream.simulator.report;

import java.util.Locale;

/**
 * A replay's progress for people. Virtual time passes the last submission while the queue drains, so the line says
 * where submissions end instead of "day 60.2 of 59.9", and counts jobs done, the true measure of what is left.
 */
public final class ProgressLine {
    private ProgressLine() {
    }

    public static String format(String policy, long virtualMillis, long lastSubmitMillis, int done, int total) {
        String submissions = virtualMillis <= lastSubmitMillis ? "submissions end at day" : "submissions ended at day";
        return String.format(Locale.ROOT, "%s: day %.1f (%s %.1f), %,d of %,d jobs done", policy, virtualMillis / 86_400_000.0, submissions,
                lastSubmitMillis / 86_400_000.0, done, total);
    }
}
