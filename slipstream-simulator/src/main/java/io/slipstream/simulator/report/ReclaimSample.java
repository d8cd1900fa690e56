package io.slipstream.simulator.report;

/**
 * One run's reclaim, taken apart (virtual seconds from the trace's start): the clock starts at {@code from} (the
 * change after which the first victims were chosen), victims were chosen in {@code rounds} cycles, the last at
 * {@code lastVictimsAt}, {@code victims} in all, and the run started at {@code started}. A reclaim longer than
 * the grace period plus an interval shows here whether it waited for more victims (rounds above 1, the last chosen
 * late) or for something else after the last were chosen.
 */
public record ReclaimSample(int jobIndex, String tenant, int gpus, double from, double firstVictimsAt, double lastVictimsAt, int rounds, int victims,
        double started) {
    public double seconds() {
        return started - from;
    }

    /** From the last victims chosen to the start: the grace period plus less than an interval, unless something else held it. */
    public double afterLastVictims() {
        return started - lastVictimsAt;
    }
}
