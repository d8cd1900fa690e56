package io.slipstream.simulator.report;

import java.util.Arrays;

/** A sorted sample of values (seconds, usually): mean, percentiles by nearest rank, max. Empty samples give 0. */
public final class Distribution {
    private final double[] sorted;
    private final double mean;

    public Distribution(double[] values) {
        this.sorted = values.clone();
        Arrays.sort(sorted);
        double sum = 0;
        for (double value : sorted) {
            sum += value;
        }
        this.mean = sorted.length == 0 ? 0 : sum / sorted.length;
    }

    /** Of a list of values. */
    public static Distribution of(java.util.List<Double> values) {
        return new Distribution(values.stream().mapToDouble(Double::doubleValue).toArray());
    }

    public int count() {
        return sorted.length;
    }

    public double mean() {
        return mean;
    }

    /** The smallest value at or above {@code p} percent of the sample. */
    public double percentile(double p) {
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    public double max() {
        return sorted.length == 0 ? 0 : sorted[sorted.length - 1];
    }

    /** The values in ascending order (for CDF plots). */
    public double[] values() {
        return sorted.clone();
    }
}
