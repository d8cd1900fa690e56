package io.slipstream.simulator.report;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.Locale;

/** Numbers for people: durations as 45s, 12m, 3.4h, 2.1d; fractions as percentages. */
final class Format {
    private Format() {
    }

    static String duration(double seconds) {
        if (seconds < 1) {
            return seconds == 0 ? "0" : String.format(Locale.ROOT, "%.2fs", seconds);
        }
        if (seconds < 120) {
            return String.format(Locale.ROOT, "%.0fs", seconds);
        }
        if (seconds < 7_200) {
            return String.format(Locale.ROOT, "%.0fm", seconds / 60);
        }
        if (seconds < 172_800) {
            return String.format(Locale.ROOT, "%.1fh", seconds / 3600);
        }
        return String.format(Locale.ROOT, "%.1fd", seconds / 86_400);
    }

    /**
     * A fraction as a percentage: one decimal from 1% up, two significant digits below (0.05%, 0.0012%), so a small
     * share never reads as 0.0%. Rounding never crosses a boundary a reader looks at: below 1% stays below 1%,
     * below 100% stays below 100% (99.96% reads 99.9%, not 100.0%).
     */
    static String percent(double fraction) {
        double p = fraction * 100;
        if (p == 0 || !Double.isFinite(p)) {
            return p == 0 ? "0.0%" : String.valueOf(p) + "%";
        }
        if (p < 0) {
            return "-" + percent(-fraction);
        }
        if (p < 1) {
            BigDecimal value = new BigDecimal(p).round(new MathContext(2, RoundingMode.HALF_UP));
            if (value.compareTo(BigDecimal.ONE) >= 0) {
                value = new BigDecimal(p).round(new MathContext(2, RoundingMode.DOWN));
            }
            return value.stripTrailingZeros().toPlainString() + "%";
        }
        BigDecimal value = new BigDecimal(p).setScale(1, RoundingMode.HALF_UP);
        if (p < 100 && value.compareTo(BigDecimal.valueOf(100)) >= 0) {
            value = new BigDecimal(p).setScale(1, RoundingMode.DOWN);
        }
        return value.toPlainString() + "%";
    }

    static String number(double value) {
        return value >= 100 ? String.format(Locale.ROOT, "%,.0f", value) : String.format(Locale.ROOT, "%.1f", value);
    }

    static double round(double value, int digits) {
        double scale = Math.pow(10, digits);
        return Math.round(value * scale) / scale;
    }
}
