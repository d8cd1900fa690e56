package io.slipstream.simulator.report;

import java.util.ArrayList;
import java.util.List;

/**
 * Axis ticks a reader can read: linear axes step by 1, 2 or 5 x 10^k; logarithmic duration axes tick at durations
 * people count in (1 s, 10 s, 1 min, 10 min, 1 h, 6 h, 1 d, 7 d, 30 d, 365 d).
 */
final class Ticks {
    /** Seconds: about one step of ten (or six, or seven) apart, each a round duration. */
    static final double[] DURATIONS = {0.01, 0.1, 1, 10, 60, 600, 3_600, 21_600, 86_400, 604_800, 2_592_000, 31_536_000};

    private Ticks() {
    }

    /** The unit of a linear time axis: the largest in which the span reads as more than 3 (90 minutes in minutes, 4 hours in hours). */
    enum TimeUnit {
        SECONDS(1, "seconds"), MINUTES(60, "minutes"), HOURS(3_600, "hours"), DAYS(86_400, "days");

        private final double seconds;
        private final String label;

        TimeUnit(double seconds, String label) {
            this.seconds = seconds;
            this.label = label;
        }

        static TimeUnit of(double spanSeconds) {
            TimeUnit[] units = values();
            for (int i = units.length - 1; i > 0; i--) {
                if (spanSeconds > 3 * units[i].seconds) {
                    return units[i];
                }
            }
            return SECONDS;
        }

        double seconds() {
            return seconds;
        }

        String label() {
            return label;
        }
    }

    /** The nice step for about {@code target} intervals over {@code [min, max]}: 1, 2 or 5 x 10^k. */
    static double step(double min, double max, int target) {
        double span = max - min;
        if (!(span > 0) || target < 1) {
            return 1;
        }
        double raw = span / target;
        double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
        double fraction = raw / magnitude;
        // The nearest nice step, so the tick count stays near the target (a ceiling would halve it at 2.1).
        double nice = fraction < 1.5 ? 1 : fraction < 3 ? 2 : fraction < 7 ? 5 : 10;
        return nice * magnitude;
    }

    /** Ticks at multiples of {@link #step} within {@code [min, max]}, with no floating-point dust (0.30000000000000004). */
    static List<Double> linear(double min, double max, int target) {
        double step = step(min, max, target);
        List<Double> ticks = new ArrayList<>();
        long first = (long) Math.ceil(min / step - 1e-9);
        for (long k = first; k * step <= max + step * 1e-9; k++) {
            ticks.add(clean(k * step, step));
        }
        return ticks;
    }

    /** The round durations within {@code [min, max]} seconds, for a log-scale axis. */
    static List<Double> logDurations(double min, double max) {
        List<Double> ticks = new ArrayList<>();
        for (double d : DURATIONS) {
            if (d >= min * (1 - 1e-9) && d <= max * (1 + 1e-9)) {
                ticks.add(d);
            }
        }
        return ticks;
    }

    /** The smallest round duration at or above {@code seconds} (the right end of a log-scale duration axis). */
    static double durationAtLeast(double seconds) {
        for (double d : DURATIONS) {
            if (d >= seconds) {
                return d;
            }
        }
        return DURATIONS[DURATIONS.length - 1] * Math.ceil(seconds / DURATIONS[DURATIONS.length - 1]);
    }

    /** A tick label: whole numbers without decimals, others with as many as the step needs. */
    static String label(double value, double step) {
        int decimals = Math.max(0, (int) -Math.floor(Math.log10(step) + 1e-9));
        return String.format(java.util.Locale.ROOT, "%,." + decimals + "f", value);
    }

    /** A round duration's label: 1s, 10s, 1m, 10m, 1h, 6h, 1d, 7d, 30d; other values as {@link Format#duration}. */
    static String durationLabel(double seconds) {
        double[] units = {86_400, 3_600, 60, 1};
        String[] names = {"d", "h", "m", "s"};
        for (int i = 0; i < units.length; i++) {
            double count = seconds / units[i];
            if (seconds >= units[i] && Math.abs(count - Math.rint(count)) < 1e-9) {
                return String.format(java.util.Locale.ROOT, "%.0f%s", count, names[i]);
            }
        }
        return seconds > 0 && seconds < 1 ? trimZeros(seconds) + "s" : Format.duration(seconds);
    }

    private static String trimZeros(double value) {
        return new java.math.BigDecimal(value).round(new java.math.MathContext(3)).stripTrailingZeros().toPlainString();
    }

    private static double clean(double value, double step) {
        int decimals = Math.max(0, (int) -Math.floor(Math.log10(step) + 1e-9));
        double scale = Math.pow(10, decimals);
        return Math.round(value * scale) / scale;
    }
}
