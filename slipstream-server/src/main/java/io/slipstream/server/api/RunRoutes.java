package io.slipstream.server.api;

import static io.slipstream.server.api.Requests.body;
import static io.slipstream.server.api.Requests.boolParam;
import static io.slipstream.server.api.Requests.caller;
import static io.slipstream.server.api.Requests.longParam;

import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import io.slipstream.api.codec.DocumentParser;
import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problems;
import io.slipstream.api.wire.CreateRunRequest;
import io.slipstream.api.wire.ListView;
import io.slipstream.api.wire.RunListView;
import io.slipstream.api.wire.RunView;
import io.slipstream.api.wire.UnreadableRunView;
import io.slipstream.model.RunRecord;
import io.slipstream.server.auth.Authenticator;
import io.slipstream.server.auth.Principal;
import io.slipstream.server.service.LogService;
import io.slipstream.server.service.RunService;
import io.slipstream.store.RunRow;
import io.slipstream.store.Store;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Runs: submit, list, watch, read, cancel, their events and logs, and the progress their instances report. */
final class RunRoutes {
    private static final Logger LOG = LoggerFactory.getLogger(RunRoutes.class);

    private final Store store;
    private final RunService runs;
    private final LogService logs;
    private final RunWatch watch;
    private final Authenticator authenticator;
    private final Clock clock;

    RunRoutes(Store store, RunService runs, LogService logs, RunWatch watch, Authenticator authenticator, Clock clock) {
        this.store = store;
        this.runs = runs;
        this.logs = logs;
        this.watch = watch;
        this.authenticator = authenticator;
        this.clock = clock;
    }

    void register(RouteTable r) {
        r.add(HandlerType.POST, "/api/v1/runs", this::create);
        r.add(HandlerType.GET, "/api/v1/runs", this::list);
        r.add(HandlerType.GET, "/api/v1/watch", this::watch);
        r.add(HandlerType.GET, "/api/v1/runs/{run}", ctx -> {
            Principal caller = caller(ctx);
            RunRecord run = runs.get(caller, ctx.pathParam("run"));
            ctx.json(view(run, true, caller));
        });
        r.add(HandlerType.POST, "/api/v1/runs/{run}/cancel", ctx -> {
            Principal caller = caller(ctx);
            RunService.CancelOutcome outcome = runs.cancel(caller, ctx.pathParam("run"));
            ctx.json(Map.of("run", view(outcome.run(), false, caller), "accepted", outcome.accepted(), "message", outcome.message()));
        });
        r.add(HandlerType.GET, "/api/v1/runs/{run}/events", ctx -> {
            long after = longParam(ctx, "after", 0, 0, Long.MAX_VALUE);
            int limit = (int) longParam(ctx, "limit", 1000, 1, 10_000);
            Principal caller = caller(ctx);
            RunRecord run = runs.get(caller, ctx.pathParam("run"));
            ctx.json(ListView.of(Views.events(run, store.runs().instancesOf(run.id()), runs.events(caller, run.id().value(), after, limit),
                    caller.admin())));
        });
        r.add(HandlerType.GET, "/api/v1/runs/{run}/logs", this::streamLogs);
        r.add(HandlerType.POST, "/api/v1/runs/{run}/instances/{rank}/progress", ctx -> {
            Principal caller = caller(ctx);
            runs.reportProgress(caller, ctx.pathParam("run"), ctx.pathParam("rank"), ProgressReport.read(body(ctx), clock.instant()));
            ctx.status(204);
        });
    }

    private RunView view(RunRecord run, boolean withDetail, Principal caller) {
        return Views.run(run, store.runs().instancesOf(run.id()), runs.queueOf(run), withDetail, caller.admin());
    }

    private void create(Context ctx) {
        Principal caller = caller(ctx);
        CreateRunRequest request = CreateRunRequest.read(DocumentParser.parseOne(body(ctx)));
        String key = ctx.header("Idempotency-Key");
        RunService.Created created = request.jobDocument() != null
                ? runs.submit(caller, request.jobDocument(), request.documents(), request.overrides(), request.labels(), key)
                : runs.create(caller, request.workspace(), request.job(), request.overrides(), request.labels(), key);
        RunRecord run = created.run();
        // As Kubernetes does: warnings in Warning headers (RFC 7234, code 299), which clients print.
        created.warnings().forEach(warning -> ctx.res().addHeader("Warning", "299 slipstream \"" + warning.replace("\\", "\\\\").replace("\"", "\\\"") + "\""));
        if (created.replayed()) {
            ctx.header("Idempotent-Replayed", "true"); // the run an earlier request with this key created
            ctx.status(200).json(view(run, true, caller));
        } else {
            ctx.status(201).json(Views.run(run, List.of(), null, true, caller.admin()));
        }
    }

    private void list(Context ctx) {
        Principal caller = caller(ctx);
        Problems problems = new Problems();
        RunListParams query = RunListParams.parse(ctx, clock, problems);
        problems.throwIfAny("the query is invalid");
        int limit = query.limit();
        List<RunRow> page = runs.list(caller, query.workspace(), query.job(), query.states(), query.since(), query.until(), query.selector(), limit + 1,
                query.before());
        String next = null;
        if (page.size() > limit) {
            page = page.subList(0, limit);
            RunRow last = page.get(limit - 1);
            next = last.createdAt().toEpochMilli() + "_" + last.id().value();
        }
        List<RunView> views = new ArrayList<>();
        List<UnreadableRunView> unreadable = new ArrayList<>();
        for (RunRow row : page) {
            if (row instanceof RunRow.Readable readable) {
                views.add(view(readable.run(), false, caller));
            } else if (row instanceof RunRow.Unreadable u) {
                unreadable.add(new UnreadableRunView(u.id().value(), u.job(), u.workspace(), u.state(), u.createdAt(), u.error()));
            }
        }
        ctx.json(new RunListView(views, unreadable.isEmpty() ? null : unreadable, next));
    }

    private void watch(Context ctx) {
        Principal caller = caller(ctx);
        Problems problems = new Problems();
        RunListParams query = RunListParams.parse(ctx, clock, problems);
        long timeout = 1800;
        try {
            timeout = longParam(ctx, "timeoutSeconds", timeout, 1, 3600);
        } catch (InvalidInputException e) { // named with the filters' problems, all at once
            e.problems().forEach(problem -> problems.add(problem.field(), problem.message()));
        }
        problems.throwIfAny("the query is invalid");
        String authorization = ctx.header("Authorization");
        watch.serve(ctx, caller, () -> authenticator.authenticate(authorization), query, ctx.queryParam("run"), Duration.ofSeconds(timeout));
    }

    private void streamLogs(Context ctx) throws IOException {
        Principal caller = caller(ctx);
        RunRecord run = runs.get(caller, ctx.pathParam("run"));
        String format = ctx.queryParam("format") == null ? "text" : ctx.queryParam("format");
        if (!format.equals("text") && !format.equals("jsonl")) {
            throw new InvalidInputException("format", "must be text or jsonl (is '" + format + "')");
        }
        Integer attempt = ctx.queryParam("attempt") == null ? null : (int) longParam(ctx, "attempt", 1, 1, Integer.MAX_VALUE);
        LogService.Request request = new LogService.Request(ctx.queryParam("instance"), attempt, LogService.parseStreams(ctx.queryParam("stream")),
                boolParam(ctx, "follow"), format.equals("jsonl"), !"false".equals(ctx.queryParam("prefix")),
                caller.admin() ? LogService.Request.EVERY_NODE : Views.showsNodes(run, false) ? run.attempt() : LogService.Request.NO_NODES);
        logs.check(run, request);
        ctx.status(200);
        ctx.contentType(request.json() ? "application/x-ndjson" : "text/plain; charset=utf-8");
        OutputStream out = ctx.res().getOutputStream();
        try {
            logs.stream(run, request, out);
        } catch (IOException e) {
            LOG.debug("log client of {} went away: {}", run.id(), e.getMessage());
        }
    }
}
