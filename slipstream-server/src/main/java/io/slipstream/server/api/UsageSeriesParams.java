package io.slipstream.server.api;

import io.javalin.http.Context;
import io.slipstream.api.problem.Problems;
import io.slipstream.server.service.UsageSeriesService;
import io.slipstream.server.service.UsageWindow;
import java.time.Clock;
import java.time.Instant;
import java.util.Set;

/**
 * The query of the usage charts ({@code GET /api/v1/usage/series}): the window (default: a week) ending at {@code until}
 * (default: now) rounded up to a whole step, what the series are of (default: quotas), and a workspace (only by quota).
 * Every problem is named by its field; a parameter it does not take ({@code since}, say) is one.
 */
record UsageSeriesParams(UsageWindow window, UsageSeriesService.Of of, String workspace, Instant until) {

    /** What the query may hold: a window is named, not given by {@code since} (as a report's is), so that it is whole steps. */
    private static final Set<String> PARAMS = Set.of("window", "by", "until", "workspace");

    static UsageSeriesParams parse(Context ctx, Instant now, Clock clock) {
        Problems problems = new Problems();
        Requests.onlyParams(ctx, PARAMS, problems);
        Instant until = Requests.timeParam(ctx, "until", problems, clock);
        String workspace = Requests.nameParam(ctx, "workspace", problems);
        UsageWindow window = Requests.enumParam(ctx, "window", UsageWindow.class, UsageWindow.WEEK, problems);
        UsageSeriesService.Of of = Requests.enumParam(ctx, "by", UsageSeriesService.Of.class, UsageSeriesService.Of.QUOTA, problems);
        if (workspace != null && of != null && of != UsageSeriesService.Of.QUOTA) {
            problems.add("workspace", "only with by=quota (a pool's and the cluster's series are sums over workspaces)");
        }
        problems.throwIfAny("the query is invalid");
        return new UsageSeriesParams(window, of, workspace, until == null ? now : until);
    }
}
