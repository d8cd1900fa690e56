package io.slipstream.server.api;

import io.javalin.http.Context;
import io.slipstream.api.problem.Problems;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.store.RunQuery;
import java.time.Clock;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * The filters of a run listing ({@code GET /api/v1/runs}), shared with the watch stream ({@code GET /api/v1/watch}),
 * which must show exactly the runs the list would. Every problem is named by its query field.
 */
record RunListParams(String workspace, String job, Set<RunState> states, Instant since, Instant until, io.slipstream.api.label.LabelSelector selector,
                     int limit, RunQuery.Cursor before) {
    /** The latest instant a query may name: what every store can hold. */
    static final Instant LATEST = Instant.parse("9999-12-31T23:59:59Z");

    static RunListParams parse(Context ctx, Clock clock, Problems problems) {
        Set<RunState> states = EnumSet.noneOf(RunState.class);
        String stateParam = ctx.queryParam("state");
        if (stateParam != null && !stateParam.isBlank()) {
            for (String state : stateParam.split(",", -1)) {
                try {
                    states.add(RunState.valueOf(state.trim().toUpperCase(Locale.ROOT)));
                } catch (IllegalArgumentException e) {
                    problems.add("state", "'" + state + "' is not a run state (" + java.util.Arrays.toString(RunState.values()) + ")");
                }
            }
        }
        RunQuery.Cursor before = null;
        String cursor = ctx.queryParam("before");
        if (cursor != null) {
            String[] parts = cursor.split("_", 2);
            try {
                before = new RunQuery.Cursor(Long.parseLong(parts[0]), parts[1]);
                if (!RunId.isValid(parts[1]) || before.createdAtMillis() < 0 || before.createdAtMillis() > LATEST.toEpochMilli()) {
                    before = null;
                    problems.add("before", "is not a cursor returned as 'next' by this API");
                }
            } catch (RuntimeException e) {
                problems.add("before", "is not a cursor returned as 'next' by this API");
            }
        }
        int limit = (int) Requests.longParam(ctx, "limit", 100, 1, 1000);
        Instant since = Requests.timeParam(ctx, "since", problems, clock);
        Instant until = Requests.timeParam(ctx, "until", problems, clock);
        String workspace = Requests.nameParam(ctx, "workspace", problems);
        String job = Requests.nameParam(ctx, "job", problems);
        io.slipstream.api.label.LabelSelector selector = Requests.selectorParam(ctx, problems);
        return new RunListParams(workspace, job, states, since, until, selector, limit, before);
    }
}
