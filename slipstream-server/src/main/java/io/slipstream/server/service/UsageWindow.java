package io.slipstream.server.service;

import io.slipstream.store.UsageBuckets;
import io.slipstream.store.UsageStep;
import java.time.Instant;

/**
 * The windows a usage chart shows: how long, in steps of what, read from roll-ups of which grain. A week's six-hour
 * steps are its hours added up (28 bars read better than 168); a month's are the daily roll-ups, UTC days.
 */
public enum UsageWindow {
    DAY(24, UsageBuckets.HOUR, UsageStep.HOUR),
    WEEK(28, 6 * UsageBuckets.HOUR, UsageStep.HOUR),
    MONTH(30, UsageBuckets.DAY, UsageStep.DAY);

    private final int steps;
    private final long stepMs;
    private final UsageStep grain;

    UsageWindow(int steps, long stepMs, UsageStep grain) {
        this.steps = steps;
        this.stepMs = stepMs;
        this.grain = grain;
    }

    public int steps() {
        return steps;
    }

    public long stepMs() {
        return stepMs;
    }

    /** The roll-ups a series of this window is read from: its step is a whole number of them. */
    public UsageStep grain() {
        return grain;
    }

    /** The window's end: {@code until} widened to a whole step, as a report widens it to a whole hour. */
    public Instant endOf(Instant until) {
        return Instant.ofEpochMilli(UsageBuckets.ceil(until.toEpochMilli(), stepMs));
    }

    public Instant startOf(Instant end) {
        return end.minusMillis(steps * stepMs);
    }
}
