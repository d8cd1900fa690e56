package io.slipstream.server.api;

import io.javalin.http.Context;
import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problems;
import io.slipstream.store.UsageGrouping;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * The query of a usage report ({@code GET /api/v1/usage}): the window (default: the seven days before {@code until},
 * which defaults to now), the grouping (default: by workspace) and a workspace. Every problem is named by its field.
 */
record UsageParams(Instant since, Instant until, UsageGrouping by, String workspace) {
    private static final Duration DEFAULT_WINDOW = Duration.ofDays(7);

    static UsageParams parse(Context ctx, Instant now, Clock clock) {
        Problems problems = new Problems();
        Instant since = Requests.timeParam(ctx, "since", problems, clock);
        Instant until = Requests.timeParam(ctx, "until", problems, clock);
        String workspace = Requests.nameParam(ctx, "workspace", problems);
        UsageGrouping by = Requests.enumParam(ctx, "by", UsageGrouping.class, UsageGrouping.WORKSPACE, problems);
        problems.throwIfAny("the query is invalid");
        Instant end = until == null ? now : until;
        Instant start = since == null ? end.minus(DEFAULT_WINDOW) : since;
        if (!start.isBefore(end)) {
            throw new InvalidInputException("since", "must be before until (" + start + " is not before " + end + ")");
        }
        return new UsageParams(start, end, by, workspace);
    }
}
