package io.slipstream.server.api;

import io.javalin.http.Context;
import io.slipstream.api.problem.Problems;
import io.slipstream.server.service.UsageSeriesService;
import io.slipstream.server.service.UsageWindow;
import java.time.Clock;
import java.time.Instant;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The query of the usage charts ({@code GET /api/v1/usage/series}): the window (default: a week) ending with the step
 * that holds {@code until} (default: now), what the series are of (default: quotas), and a workspace (only by quota).
 * Every problem is named by its field.
 */
record UsageSeriesParams(UsageWindow window, UsageSeriesService.Of of, String workspace, Instant until) {

    static UsageSeriesParams parse(Context ctx, Instant now, Clock clock) {
        Problems problems = new Problems();
        Instant until = Requests.timeParam(ctx, "until", problems, clock);
        String workspace = Requests.nameParam(ctx, "workspace", problems);
        UsageWindow window = oneOf(ctx, "window", UsageWindow.class, UsageWindow.WEEK, problems);
        UsageSeriesService.Of of = oneOf(ctx, "by", UsageSeriesService.Of.class, UsageSeriesService.Of.QUOTA, problems);
        if (workspace != null && of != null && of != UsageSeriesService.Of.QUOTA) {
            problems.add("workspace", "only with by=quota (a pool's and the cluster's series are sums over workspaces)");
        }
        problems.throwIfAny("the query is invalid");
        return new UsageSeriesParams(window, of, workspace, until == null ? now : until);
    }

    /** The query parameter {@code name} as one of {@code type}'s constants, lower case; {@code fallback} when absent. */
    private static <E extends Enum<E>> E oneOf(Context ctx, String name, Class<E> type, E fallback, Problems problems) {
        String value = ctx.queryParam(name);
        if (value == null) {
            return fallback;
        }
        for (E constant : type.getEnumConstants()) {
            if (constant.name().toLowerCase(Locale.ROOT).equals(value)) {
                return constant;
            }
        }
        String allowed = Arrays.stream(type.getEnumConstants()).map(c -> c.name().toLowerCase(Locale.ROOT)).collect(Collectors.joining(", "));
        problems.add(name, "must be one of " + allowed + " (is '" + (value.length() > 64 ? value.substring(0, 64) + "..." : value) + "')");
        return null;
    }
}
