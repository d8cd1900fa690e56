package io.slipstream.simulator.report;

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

    static String percent(double fraction) {
        return String.format(Locale.ROOT, "%.1f%%", fraction * 100);
    }

    static String number(double value) {
        return value >= 100 ? String.format(Locale.ROOT, "%,.0f", value) : String.format(Locale.ROOT, "%.1f", value);
    }

    static double round(double value, int digits) {
        double scale = Math.pow(10, digits);
        return Math.round(value * scale) / scale;
    }
}
