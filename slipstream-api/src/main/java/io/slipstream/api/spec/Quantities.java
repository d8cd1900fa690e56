package io.slipstream.api.spec;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses and prints resource quantities the way Kubernetes users write them:
 * cpu as cores ({@code 2}, {@code 0.5}, {@code "500m"}), memory as bytes with a suffix
 * ({@code "256Gi"}, {@code "512M"}, {@code 1073741824}).
 */
public final class Quantities {
    private static final Pattern CPU_FORMAT = Pattern.compile("(\\d{1,12})(?:\\.(\\d{1,3}))?(m?)");
    private static final Pattern MEMORY_FORMAT = Pattern.compile("(\\d{1,19})(?:\\.(\\d{1,9}))?([KMGTPE]i?|k)?");
    private static final Map<String, BigInteger> MEMORY_UNITS = Map.ofEntries(
            Map.entry("", BigInteger.ONE),
            Map.entry("k", BigInteger.TEN.pow(3)),
            Map.entry("K", BigInteger.TEN.pow(3)),
            Map.entry("M", BigInteger.TEN.pow(6)),
            Map.entry("G", BigInteger.TEN.pow(9)),
            Map.entry("T", BigInteger.TEN.pow(12)),
            Map.entry("P", BigInteger.TEN.pow(15)),
            Map.entry("E", BigInteger.TEN.pow(18)),
            Map.entry("Ki", BigInteger.TWO.pow(10)),
            Map.entry("Mi", BigInteger.TWO.pow(20)),
            Map.entry("Gi", BigInteger.TWO.pow(30)),
            Map.entry("Ti", BigInteger.TWO.pow(40)),
            Map.entry("Pi", BigInteger.TWO.pow(50)),
            Map.entry("Ei", BigInteger.TWO.pow(60)));
    private static final String[] BINARY_SUFFIXES = {"Ei", "Pi", "Ti", "Gi", "Mi", "Ki"};

    /** One kind of quantity: how to read it, print it, and show examples of it. */
    public interface Kind {
        long parse(String text);

        String format(long value);

        String examples();
    }

    public static final Kind CPU = new Kind() {
        @Override
        public long parse(String text) {
            return parseMilliCpu(text);
        }

        @Override
        public String format(long value) {
            return formatMilliCpu(value);
        }

        @Override
        public String examples() {
            return "examples: 2, 0.5, \"500m\"";
        }
    };

    public static final Kind MEMORY = new Kind() {
        @Override
        public long parse(String text) {
            return parseBytes(text);
        }

        @Override
        public String format(long value) {
            return formatBytes(value);
        }

        @Override
        public String examples() {
            return "examples: \"512Mi\", \"64Gi\"";
        }
    };

    private Quantities() {
    }

    /**
     * Parses a cpu quantity into millicores.
     *
     * @throws IllegalArgumentException with a message fit for a user when the text is not a cpu quantity
     */
    public static long parseMilliCpu(String text) {
        Matcher m = CPU_FORMAT.matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a cpu quantity (examples: 2, 0.5, \"500m\")");
        }
        long whole = Long.parseLong(m.group(1));
        boolean milli = !m.group(3).isEmpty();
        if (milli) {
            if (m.group(2) != null) {
                throw new IllegalArgumentException("'" + text + "' is not a cpu quantity: millicores are whole numbers");
            }
            return whole;
        }
        String fraction = m.group(2) == null ? "" : m.group(2);
        long fractionMillis = fraction.isEmpty() ? 0 : Long.parseLong((fraction + "00").substring(0, 3));
        if (whole > Long.MAX_VALUE / 1000 - 1) {
            throw new IllegalArgumentException("'" + text + "' is too large");
        }
        return whole * 1000 + fractionMillis;
    }

    /**
     * Parses a memory quantity into bytes; a fraction must come out as whole bytes.
     *
     * @throws IllegalArgumentException with a message fit for a user when the text is not a memory quantity
     */
    public static long parseBytes(String text) {
        Matcher m = MEMORY_FORMAT.matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException(
                    "'" + text + "' is not a memory quantity (examples: \"512Mi\", \"64Gi\", \"1Ti\", or bytes)");
        }
        String suffix = m.group(3) == null ? "" : m.group(3);
        BigDecimal number = new BigDecimal(m.group(2) == null ? m.group(1) : m.group(1) + "." + m.group(2));
        BigDecimal bytes = number.multiply(new BigDecimal(MEMORY_UNITS.get(suffix)));
        if (bytes.stripTrailingZeros().scale() > 0) {
            throw new IllegalArgumentException("'" + text + "' is not a whole number of bytes");
        }
        if (bytes.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
            throw new IllegalArgumentException("'" + text + "' is too large");
        }
        return bytes.longValueExact();
    }

    /** Prints millicores as whole cores when exact ({@code "4"}), else as millicores ({@code "500m"}). */
    public static String formatMilliCpu(long milliCpu) {
        return milliCpu % 1000 == 0 ? Long.toString(milliCpu / 1000) : milliCpu + "m";
    }

    /** Prints bytes with the largest binary suffix that divides them exactly ({@code "256Gi"}). */
    public static String formatBytes(long bytes) {
        if (bytes == 0) {
            return "0";
        }
        for (String suffix : BINARY_SUFFIXES) {
            long unit = MEMORY_UNITS.get(suffix).longValueExact();
            if (bytes % unit == 0) {
                return bytes / unit + suffix;
            }
        }
        return Long.toString(bytes);
    }

    /** Human-readable approximation for tables ({@code "1.5Gi"}). */
    public static String approximateBytes(long bytes) {
        for (String suffix : BINARY_SUFFIXES) {
            long unit = MEMORY_UNITS.get(suffix).longValueExact();
            if (bytes >= unit) {
                double value = (double) bytes / unit;
                return (value == Math.rint(value)
                        ? Long.toString((long) value)
                        : String.format(Locale.ROOT, "%.1f", value)) + suffix;
            }
        }
        return Long.toString(bytes);
    }
}
