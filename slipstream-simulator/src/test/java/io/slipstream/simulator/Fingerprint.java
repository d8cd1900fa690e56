package io.slipstream.simulator;

import io.slipstream.simulator.report.Distribution;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/** A replay's results as text, every figure but the timings, for comparing two replays that must agree. */
public final class Fingerprint {
    private static final Set<String> TIMINGS = Set.of("wallSeconds", "schedulerSeconds");

    private Fingerprint() {
    }

    /** Fails naming the first figure where two replays differ, with a little context. */
    public static void assertSame(Object actual, Object expected) {
        assertSame(actual, expected, Set.of());
    }

    /** The same, but for the components named in {@code skipped}. */
    public static void assertSame(Object actual, Object expected, Set<String> skipped) {
        String a = of(actual, skipped);
        String e = of(expected, skipped);
        if (a.equals(e)) {
            return;
        }
        int i = 0;
        while (i < Math.min(a.length(), e.length()) && a.charAt(i) == e.charAt(i)) {
            i++;
        }
        int from = Math.max(0, i - 300);
        throw new AssertionError("the replays differ at character " + i + ":\n  expected ..." + e.substring(from, Math.min(e.length(), i + 200))
                + "\n  actual   ..." + a.substring(from, Math.min(a.length(), i + 200)));
    }

    /** Every component of the result, recursively, but the timings; distributions by their values. */
    public static String of(Object value) {
        return of(value, Set.of());
    }

    private static String of(Object value, Set<String> skipped) {
        if (value instanceof Distribution distribution) {
            return Arrays.toString(distribution.values());
        }
        if (value instanceof double[][] rows) {
            return Arrays.deepToString(rows);
        }
        if (value instanceof List<?> list) {
            return list.stream().map(v -> of(v, skipped)).toList().toString();
        }
        if (value instanceof Record record) {
            StringBuilder out = new StringBuilder(record.getClass().getSimpleName()).append('{');
            for (RecordComponent component : record.getClass().getRecordComponents()) {
                if (TIMINGS.contains(component.getName()) || skipped.contains(component.getName())) {
                    continue;
                }
                try {
                    out.append(component.getName()).append('=').append(of(component.getAccessor().invoke(record), skipped)).append(", ");
                } catch (ReflectiveOperationException e) {
                    throw new AssertionError(e);
                }
            }
            return out.append('}').toString();
        }
        return String.valueOf(value);
    }

}
