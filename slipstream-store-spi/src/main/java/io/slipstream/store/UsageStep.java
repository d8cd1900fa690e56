package io.slipstream.store;

/** The buckets of a usage series: the grains of the roll-ups a database store keeps (hours and UTC days). */
public enum UsageStep {
    HOUR(UsageBuckets.HOUR, 'H'),
    DAY(UsageBuckets.DAY, 'D');

    private final long millis;
    private final char grain;

    UsageStep(long millis, char grain) {
        this.millis = millis;
        this.grain = grain;
    }

    public long millis() {
        return millis;
    }

    /** The roll-ups' grain of this step ({@link UsageBuckets.Share#grain}). */
    public char grain() {
        return grain;
    }

    /**
     * Checks that {@code query}'s window is whole steps, as a series of it must be.
     *
     * @throws IllegalArgumentException if it is not
     */
    public void requireWholeSteps(UsageQuery query) {
        if (query.since().toEpochMilli() % millis != 0 || query.until().toEpochMilli() % millis != 0) {
            throw new IllegalArgumentException("a series by " + this + " needs a window of whole steps: " + query.since() + " to " + query.until());
        }
    }
}
