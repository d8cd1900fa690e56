package io.slipstream.server.api;

import io.javalin.http.Context;
import io.slipstream.api.label.LabelSelector;
import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problems;
import io.slipstream.server.auth.Principal;
import java.time.Clock;
import java.time.Instant;
import java.util.Arrays;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * What a handler reads of a request: who calls (authenticated before any route runs), the body, and the query's
 * parameters, each checked with a problem that names the parameter.
 */
final class Requests {
    /** The context attribute that holds the authenticated caller. */
    static final String PRINCIPAL = "slipstream.principal";
    /** The earliest and latest instants a query may name: what every store can hold. */
    private static final Instant EARLIEST = Instant.parse("0001-01-01T00:00:00Z");
    private static final Instant LATEST = RunListParams.LATEST;

    private Requests() {
    }

    static Principal caller(Context ctx) {
        Principal principal = ctx.attribute(PRINCIPAL);
        if (principal == null) {
            throw ApiException.unauthorized("not authenticated");
        }
        return principal;
    }

    static byte[] body(Context ctx) {
        return ctx.bodyAsBytes();
    }

    static long longParam(Context ctx, String name, long fallback, long min, long max) {
        String text = ctx.queryParam(name);
        if (text == null) {
            return fallback;
        }
        try {
            long value = Long.parseLong(text);
            if (value < min || value > max) {
                throw new InvalidInputException(name, "must be between " + min + " and " + max + " (is " + value + ")");
            }
            return value;
        } catch (NumberFormatException e) {
            throw new InvalidInputException(name, "must be a whole number (is '" + text + "')");
        }
    }

    /** A filter by name ({@code workspace}, {@code job}): {@code null} when not given; a name that cannot be one is a problem. */
    static String nameParam(Context ctx, String name, Problems problems) {
        String text = ctx.queryParam(name);
        if (text == null) {
            return null;
        }
        String problem = io.slipstream.api.spec.Names.dnsLabelProblem(text);
        if (problem != null) {
            problems.add(name, (text.length() > 64 ? "" : "'" + text + "': ") + problem);
            return null;
        }
        return text;
    }

    /** A point in time: an ISO-8601 instant ({@code 2026-11-29T10:00:00Z}) or a duration ago ({@code 2h}, {@code 7d}). */
    static Instant timeParam(Context ctx, String name, Problems problems, Clock clock) {
        String text = ctx.queryParam(name);
        if (text == null || text.isBlank()) {
            return null;
        }
        Instant instant;
        try {
            instant = Instant.parse(text);
        } catch (java.time.format.DateTimeParseException notAnInstant) {
            try {
                instant = clock.instant().minus(io.slipstream.api.spec.Durations.parse(text));
            } catch (RuntimeException notADuration) { // also a duration too long to subtract
                problems.add(name, "must be a time like 2026-11-29T10:00:00Z or a duration ago like 2h (is '" + text + "')");
                return null;
            }
        }
        if (instant.isBefore(EARLIEST) || instant.isAfter(LATEST)) {
            problems.add(name, "must be between the years 1 and 9999 (is '" + text + "')");
            return null;
        }
        return instant;
    }

    /** {@code labelSelector}, kubectl's syntax; a selector that cannot be read is a problem of the parameter, saying why. */
    static LabelSelector selectorParam(Context ctx, Problems problems) {
        try {
            return LabelSelector.parse(ctx.queryParam("labelSelector"));
        } catch (LabelSelector.Invalid e) {
            problems.add("labelSelector", e.getMessage());
            return LabelSelector.EVERYTHING;
        }
    }

    /**
     * The query parameter {@code name} as one of {@code type}'s constants, in any case ({@code quota}, {@code QUOTA});
     * {@code fallback} when absent. A value that is none of them is a problem listing them, lower case.
     */
    static <E extends Enum<E>> E enumParam(Context ctx, String name, Class<E> type, E fallback, Problems problems) {
        String value = ctx.queryParam(name);
        if (value == null) {
            return fallback;
        }
        for (E constant : type.getEnumConstants()) {
            if (constant.name().equalsIgnoreCase(value)) {
                return constant;
            }
        }
        String allowed = Arrays.stream(type.getEnumConstants()).map(c -> c.name().toLowerCase(Locale.ROOT)).collect(Collectors.joining(", "));
        problems.add(name, "must be one of " + allowed + " (is '" + (value.length() > 64 ? value.substring(0, 64) + "..." : value) + "')");
        return null;
    }

    /** Every query parameter is one of {@code known}: one that is not (a typo, or one of another route) is a problem, not ignored. */
    static void onlyParams(Context ctx, Set<String> known, Problems problems) {
        new TreeSet<>(ctx.queryParamMap().keySet()).stream().filter(name -> !known.contains(name))
                .forEach(name -> problems.add(name.length() > 64 ? name.substring(0, 64) + "..." : name,
                        "is not a parameter of this request (it takes " + String.join(", ", new TreeSet<>(known)) + ")"));
    }

    static boolean boolParam(Context ctx, String name) {
        String text = ctx.queryParam(name);
        if (text == null || text.equals("false")) {
            return false;
        }
        if (text.equals("true") || text.isEmpty()) {
            return true;
        }
        throw new InvalidInputException(name, "must be true or false (is '" + text + "')");
    }
}
