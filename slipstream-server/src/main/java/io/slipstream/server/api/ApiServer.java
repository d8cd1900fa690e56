package io.slipstream.server.api;

import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.Handler;
import io.javalin.http.HandlerType;
import io.javalin.http.HttpResponseException;
import io.javalin.json.JavalinJackson3;
import io.slipstream.api.codec.DocumentParser;
import io.slipstream.api.codec.Json;
import io.slipstream.api.label.LabelSelector;
import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problem;
import io.slipstream.api.problem.Problems;
import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Documents;
import io.slipstream.api.spec.FieldReader;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.wire.CreateRunRequest;
import io.slipstream.api.wire.CreateTokenRequest;
import io.slipstream.api.wire.ErrorView;
import io.slipstream.api.wire.LeaderView;
import io.slipstream.api.wire.ListView;
import io.slipstream.api.wire.QuotaStatusView;
import io.slipstream.api.wire.RunListView;
import io.slipstream.api.wire.UnreadableRunView;
import io.slipstream.store.RunRow;
import io.slipstream.store.UnreadableRecordException;
import io.slipstream.api.wire.RunView;
import io.slipstream.api.wire.WhoAmIView;
import io.slipstream.server.auth.Authenticator;
import io.slipstream.server.auth.Principal;
import io.slipstream.server.service.DocumentService;
import io.slipstream.server.service.LogService;
import io.slipstream.server.service.NodeService;
import io.slipstream.server.metrics.ServerMetrics;
import io.slipstream.server.service.QuotaLedgerService;
import io.slipstream.server.service.QuotaUsage;
import io.slipstream.server.service.RunService;
import io.slipstream.server.service.SecretService;
import io.slipstream.server.service.StoreBackupService;
import io.slipstream.server.service.TokenService;
import io.slipstream.store.ConflictException;
import io.slipstream.store.Leadership;
import io.slipstream.store.StoreUnavailableException;
import io.slipstream.store.RunQuery;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import io.slipstream.store.StoredDocument;
import io.slipstream.scheduler.QuotaLedger;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The REST API under {@code /api/v1}: routes, authentication of every call but {@code /healthz}, and the one
 * place where errors become HTTP statuses. Handlers stay thin: parse, call a service, map to a view.
 */
public final class ApiServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ApiServer.class);
    private static final String PRINCIPAL = "slipstream.principal";
    private static final int MAX_BODY_BYTES = 2 * 1024 * 1024;
    /** A store outage is answered within the pool's connection timeout; clients try again after this. */
    static final long STORE_RETRY_AFTER_SECONDS = 2;
    /** The earliest and latest instants a query may name: what every store can hold. */
    private static final java.time.Instant EARLIEST = java.time.Instant.parse("0001-01-01T00:00:00Z");
    private static final java.time.Instant LATEST = RunListParams.LATEST;

    /** One registered route, as the OpenAPI file must describe it. */
    public record Route(String method, String path) {
    }

    private final Store store;
    private final Authenticator authenticator;
    private final DocumentService documents;
    private final RunService runs;
    private final NodeService nodes;
    private final QuotaLedgerService quotaLedger;
    private final io.slipstream.server.service.UsageService usage;
    private final ServerMetrics metrics;
    private volatile RouteTemplates templates = RouteTemplates.of(List.of());
    private final TokenService tokens;
    private final LogService logs;
    private final SecretService secrets;
    private final java.time.Clock clock;
    private final Readiness readiness;
    private final StoreBackupService backups;
    private final List<Route> routes = new ArrayList<>();
    private final RunWatch watch;
    private Javalin app;

    public ApiServer(Store store, Authenticator authenticator, DocumentService documents, RunService runs, NodeService nodes,
                     QuotaLedgerService quotaLedger, ServerMetrics metrics, TokenService tokens, LogService logs, SecretService secrets, Readiness readiness,
                     java.time.Clock clock, StoreBackupService backups) {
        this.quotaLedger = quotaLedger;
        this.metrics = metrics;
        this.backups = backups;
        this.store = store;
        this.authenticator = authenticator;
        this.documents = documents;
        this.runs = runs;
        this.nodes = nodes;
        this.tokens = tokens;
        this.logs = logs;
        this.secrets = secrets;
        this.readiness = readiness;
        this.clock = clock;
        this.watch = new RunWatch(store, runs, RunWatch.Limits.DEFAULTS);
        this.usage = new io.slipstream.server.service.UsageService(store);
    }

    /** A run's token reads its own run (state, events, logs) and who it is, and reports its instances' progress. */
    static boolean mayRunTokenCall(String run, String method, String path) {
        String own = "/api/v1/runs/" + run;
        String trimmed = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        if (method.equals("POST")) {
            return trimmed.matches(java.util.regex.Pattern.quote(own) + "/instances/[0-9]{1,6}/progress");
        }
        return method.equals("GET") && (trimmed.equals("/api/v1/whoami") || trimmed.equals(own) || trimmed.startsWith(own + "/"));
    }

    /** A progress report, as the SDK sends it (the same fields as the progress file); every field checked. */
    static io.slipstream.executor.Activity.Progress progress(byte[] body, java.time.Instant now) {
        Problems problems = new Problems();
        FieldReader report = FieldReader.of(DocumentParser.parseOne(body), "", problems);
        Long step = report.integer("step", true, 0, Long.MAX_VALUE);
        Long checkpointStep = report.integer("checkpointStep", false, 0, Long.MAX_VALUE);
        String checkpointTime = report.string("checkpointTime", false, 64);
        report.string("time", false, 64); // when it was written; the server's clock is what counts
        java.time.Instant checkpointAt = null;
        if (checkpointTime != null) {
            try {
                checkpointAt = java.time.Instant.parse(checkpointTime);
            } catch (java.time.format.DateTimeParseException e) {
                problems.add("checkpointTime", "must be an instant such as 2026-11-30T10:00:00Z");
            }
        }
        if (checkpointStep != null && checkpointTime == null) {
            problems.add("checkpointTime", "is required with checkpointStep");
        }
        Map<String, Double> metrics = new java.util.LinkedHashMap<>();
        var entries = report.entries("metrics", false, 64);
        if (entries != null) {
            for (var entry : entries) {
                if (!entry.getValue().isNumber() || !Double.isFinite(entry.getValue().asDouble())) {
                    problems.add("metrics." + entry.getKey(), "must be a finite number");
                } else {
                    metrics.put(entry.getKey(), entry.getValue().asDouble());
                }
            }
        }
        report.finish();
        problems.throwIfAny("the progress report is invalid");
        return new io.slipstream.executor.Activity.Progress(step, now, checkpointStep, checkpointAt, metrics);
    }

    /** Starts listening; {@code port} 0 picks a free port (see {@link #port()}). */
    public void start(String host, int port) {
        app = Javalin.create(config -> {
            config.startup.showJavalinBanner = false;
            config.startup.showOldJavalinVersionWarning = false;
            config.jsonMapper(new JavalinJackson3(Json.mapper(), false));
            config.http.maxRequestSize = MAX_BODY_BYTES;
            config.router.ignoreTrailingSlashes = true;
            // Jetty reuses header fields it saw on a connection and by default matches their values ignoring case: a
            // token secret changed only in case (or an Idempotency-Key) would be read as the one seen before.
            config.jetty.modifyHttpConfiguration(http -> http.setHeaderCacheCaseSensitive(true));
            config.requestLogger.http((ctx, millis) -> {
                LOG.debug("{} {} -> {} in {} ms", ctx.method(), ctx.path(), ctx.status().getCode(), millis);
                metrics.request(ctx.method().name(), templates.of(ctx.method().name(), ctx.path()), ctx.status().getCode(), millis.longValue());
            });
            config.routes.before("/api/*", ctx -> {
                Principal caller = authenticator.authenticate(ctx.header("Authorization"));
                if (caller.run() != null && !mayRunTokenCall(caller.run(), ctx.method().name(), ctx.path())) {
                    throw ApiException.forbidden("a run's token may only read its own run (GET /api/v1/runs/" + caller.run() + "...)");
                }
                ctx.attribute(PRINCIPAL, caller);
            });
            config.routes.before("/api/*", ctx -> QueryString.check(ctx.queryString()));
            config.jetty.modifyServer(server -> server.setErrorHandler(new JsonErrorHandler()));
            config.routes.exception(InvalidInputException.class, (e, ctx) -> error(ctx, 400, "INVALID_INPUT", e.getMessage(), bounded(e.problems())));
            config.routes.exception(ApiException.class, (e, ctx) -> error(ctx, e.status(), e.code(), e.getMessage(), List.of()));
            config.routes.exception(ConflictException.class, (e, ctx) -> error(ctx, 409, "CONFLICT", e.getMessage(), List.of()));
            config.routes.exception(StoreUnavailableException.class, (e, ctx) -> {
                LOG.debug("{} {}: {}", ctx.method(), ctx.path(), e.getMessage()); // the control loop logs the outage once
                ctx.header("Retry-After", Long.toString(STORE_RETRY_AFTER_SECONDS));
                error(ctx, 503, "STORE_UNAVAILABLE", "the store cannot be reached now; try again shortly", List.of());
            });
            // Not the caller's fault nor a crash: the record needs repair (docs/operations.md), every other one still works.
            config.routes.exception(UnreadableRecordException.class, (e, ctx) -> error(ctx, 409, "STORED_DATA_UNREADABLE", e.getMessage(), List.of()));
            config.routes.exception(HttpResponseException.class, (e, ctx) -> error(ctx, e.getStatus(), codeOf(e.getStatus()), e.getMessage(), List.of()));
            config.routes.exception(Exception.class, (e, ctx) -> {
                LOG.error("internal error on {} {}", ctx.method(), ctx.path(), e);
                error(ctx, 500, "INTERNAL", "internal error; the server log has the details", List.of());
            });
            registerRoutes(config.routes);
            new io.slipstream.server.console.ConsoleAssets().register(config.routes);
            templates = RouteTemplates.of(routes);
        });
        app.start(host, port);
    }

    public int port() {
        return app.port();
    }

    public List<Route> routes() {
        return List.copyOf(routes);
    }

    private void route(io.javalin.config.RoutesConfig config, HandlerType method, String path, Handler handler) {
        routes.add(new Route(method.name(), path));
        config.addHttpHandler(method, path, handler);
    }

    private void registerRoutes(io.javalin.config.RoutesConfig r) {
        route(r, HandlerType.GET, "/healthz", ctx -> ctx.json(Map.of("status", "ok")));
        // Prometheus' text format; admins only: the figures name every team's quotas.
        route(r, HandlerType.GET, "/metrics", ctx -> {
            Principal caller = authenticator.authenticate(ctx.header("Authorization"));
            if (!caller.admin()) {
                throw ApiException.forbidden("metrics are for admins: they show every team's quotas (use an admin token for Prometheus)");
            }
            ctx.contentType("text/plain; version=0.0.4; charset=utf-8").result(metrics.scrape());
        });
        route(r, HandlerType.GET, "/readyz", ctx -> {
            Readiness.Status status = readiness.now();
            Map<String, Object> body = new java.util.LinkedHashMap<>();
            body.put("status", status.ready() ? "ready" : "not ready");
            if (status.lastCycleAt() != null) {
                body.put("lastCycleAt", status.lastCycleAt().toString());
            }
            body.put("role", status.election().role().name().toLowerCase(java.util.Locale.ROOT));
            if (status.election().lease() != null) {
                body.put("leader", status.election().lease().holder());
                body.put("epoch", status.election().lease().epoch());
            }
            if (status.reason() != null) {
                body.put("reason", status.reason());
                ctx.header("Retry-After", Long.toString(STORE_RETRY_AFTER_SECONDS));
            }
            ctx.status(status.ready() ? 200 : 503).json(body);
        });
        route(r, HandlerType.GET, "/api/v1/leader", ctx -> {
            caller(ctx);
            Leadership lease = store.leases().current().orElseThrow(() -> ApiException.notFound("no replica has led yet"));
            ctx.json(new LeaderView(lease.holder(), lease.epoch(), lease.renewedAt().toString(), lease.expiresAt().toString(),
                    lease.expiredAt(clock.instant())));
        });
        route(r, HandlerType.GET, "/api/v1/whoami", ctx -> {
            Principal caller = caller(ctx);
            ctx.json(new WhoAmIView(caller.user(), caller.admin(), new ArrayList<>(new TreeSet<>(caller.workspaces()))));
        });
        route(r, HandlerType.POST, "/api/v1/apply", ctx -> {
            boolean dryRun = boolParam(ctx, "dryRun"); // checked before the body is read: a bad flag is named first
            ctx.json(ListView.of(documents.apply(caller(ctx), Documents.readAll(body(ctx)), dryRun)));
        });

        route(r, HandlerType.GET, "/api/v1/workspaces", ctx -> listDocuments(ctx, Kind.Workspace, null));
        route(r, HandlerType.GET, "/api/v1/workspaces/{workspace}", ctx -> getDocument(ctx, Kind.Workspace, null, ctx.pathParam("workspace")));
        route(r, HandlerType.DELETE, "/api/v1/workspaces/{workspace}", ctx -> deleteDocument(ctx, Kind.Workspace, null, ctx.pathParam("workspace")));
        route(r, HandlerType.GET, "/api/v1/shapes", ctx -> listDocuments(ctx, Kind.Shape, null));
        route(r, HandlerType.GET, "/api/v1/shapes/{shape}", ctx -> getDocument(ctx, Kind.Shape, null, ctx.pathParam("shape")));
        route(r, HandlerType.DELETE, "/api/v1/shapes/{shape}", ctx -> deleteDocument(ctx, Kind.Shape, null, ctx.pathParam("shape")));
        route(r, HandlerType.GET, "/api/v1/quotas", this::listQuotas);
        route(r, HandlerType.GET, "/api/v1/workspaces/{workspace}/quotas/{quota}",
                ctx -> {
                    String workspace = ctx.pathParam("workspace");
                    String name = ctx.pathParam("quota");
                    ObjectNode quota = Views.document(documents.get(caller(ctx), Kind.Quota, workspace, name));
                    ObjectNode status = Json.mapper().createObjectNode();
                    QuotaStatusView live = QuotaLedgerService.statusOf(quotaLedger.ledger(), new QuotaId(workspace, name));
                    if (live != null) {
                        status.setAll((ObjectNode) Json.mapper().valueToTree(live));
                    }
                    status.setAll(QuotaUsage.of(store, workspace, name));
                    quota.set("status", status);
                    ctx.json(quota);
                });
        route(r, HandlerType.GET, "/api/v1/workspaces/{workspace}/quotas/{quota}/pending",
                ctx -> ctx.json(ListView.of(quotaLedger.pending(caller(ctx), ctx.pathParam("workspace"), ctx.pathParam("quota")))));
        route(r, HandlerType.GET, "/api/v1/pools", ctx -> ctx.json(ListView.of(quotaLedger.pools(caller(ctx)))));
        route(r, HandlerType.GET, "/api/v1/usage", this::usageReport);
        route(r, HandlerType.DELETE, "/api/v1/workspaces/{workspace}/quotas/{quota}",
                ctx -> deleteDocument(ctx, Kind.Quota, ctx.pathParam("workspace"), ctx.pathParam("quota")));
        route(r, HandlerType.GET, "/api/v1/jobs", ctx -> listDocuments(ctx, Kind.Job, ctx.queryParam("workspace")));
        route(r, HandlerType.GET, "/api/v1/workspaces/{workspace}/jobs/{job}",
                ctx -> getDocument(ctx, Kind.Job, ctx.pathParam("workspace"), ctx.pathParam("job")));
        route(r, HandlerType.DELETE, "/api/v1/workspaces/{workspace}/jobs/{job}",
                ctx -> deleteDocument(ctx, Kind.Job, ctx.pathParam("workspace"), ctx.pathParam("job")));

        // Secrets are applied like every document; here they are listed, shown (keys only, values ***) and deleted.
        route(r, HandlerType.GET, "/api/v1/secrets", ctx -> ctx.json(ListView.of(secrets.list(caller(ctx), ctx.queryParam("workspace")))));
        route(r, HandlerType.GET, "/api/v1/workspaces/{workspace}/secrets/{secret}",
                ctx -> ctx.json(secrets.get(caller(ctx), ctx.pathParam("workspace"), ctx.pathParam("secret"))));
        route(r, HandlerType.DELETE, "/api/v1/workspaces/{workspace}/secrets/{secret}", ctx -> {
            secrets.delete(caller(ctx), ctx.pathParam("workspace"), ctx.pathParam("secret"));
            ctx.status(204);
        });

        route(r, HandlerType.GET, "/api/v1/nodes", ctx -> {
            caller(ctx);
            ctx.json(ListView.of(nodes.list()));
        });
        route(r, HandlerType.GET, "/api/v1/nodes/{node}", ctx -> {
            caller(ctx);
            ctx.json(nodes.get(ctx.pathParam("node")));
        });
        route(r, HandlerType.POST, "/api/v1/nodes/{node}/down", ctx -> {
            Principal caller = caller(ctx);
            FieldReader body = FieldReader.of(DocumentParser.parseOne(body(ctx)), "", new Problems());
            String reason = body.string("reason", true, 256);
            body.finish();
            body.problems().throwIfAny("the request is invalid");
            ctx.json(nodes.down(caller, ctx.pathParam("node"), reason));
        });
        route(r, HandlerType.POST, "/api/v1/nodes/{node}/up", ctx -> ctx.json(nodes.up(caller(ctx), ctx.pathParam("node"))));

        route(r, HandlerType.POST, "/api/v1/runs", this::createRun);
        route(r, HandlerType.GET, "/api/v1/runs", this::listRuns);
        route(r, HandlerType.GET, "/api/v1/watch", ctx -> {
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
            watch.serve(ctx, caller, () -> authenticator.authenticate(authorization), query, ctx.queryParam("run"), java.time.Duration.ofSeconds(timeout));
        });
        route(r, HandlerType.GET, "/api/v1/runs/{run}", ctx -> {
            Principal caller = caller(ctx);
            RunRecord run = runs.get(caller, ctx.pathParam("run"));
            ctx.json(Views.run(run, store.runs().instancesOf(run.id()), runs.queueOf(run), true, caller.admin()));
        });
        route(r, HandlerType.POST, "/api/v1/runs/{run}/cancel", ctx -> {
            Principal caller = caller(ctx);
            RunService.CancelOutcome outcome = runs.cancel(caller, ctx.pathParam("run"));
            RunRecord run = outcome.run();
            ctx.json(Map.of("run", Views.run(run, store.runs().instancesOf(run.id()), runs.queueOf(run), false, caller.admin()),
                    "accepted", outcome.accepted(), "message", outcome.message()));
        });
        route(r, HandlerType.GET, "/api/v1/runs/{run}/events", ctx -> {
            long after = longParam(ctx, "after", 0, 0, Long.MAX_VALUE);
            int limit = (int) longParam(ctx, "limit", 1000, 1, 10_000);
            Principal caller = caller(ctx);
            RunRecord run = runs.get(caller, ctx.pathParam("run"));
            java.util.Set<String> hidden = Views.hiddenNodes(run, store.runs().instancesOf(run.id()), caller.admin());
            ctx.json(ListView.of(runs.events(caller, run.id().value(), after, limit).stream().map(event -> Views.event(event, hidden)).toList()));
        });
        route(r, HandlerType.GET, "/api/v1/runs/{run}/logs", this::streamLogs);
        route(r, HandlerType.POST, "/api/v1/runs/{run}/instances/{rank}/progress", ctx -> {
            Principal caller = caller(ctx);
            runs.reportProgress(caller, ctx.pathParam("run"), ctx.pathParam("rank"), progress(body(ctx), clock.instant()));
            ctx.status(204);
        });

        route(r, HandlerType.POST, "/api/v1/tokens", ctx -> {
            CreateTokenRequest request = CreateTokenRequest.read(DocumentParser.parseOne(body(ctx)));
            ctx.status(201).json(tokens.create(caller(ctx), request.user(), request.admin(), request.description(), request.expiresInDays()));
        });
        route(r, HandlerType.GET, "/api/v1/tokens", ctx -> ctx.json(ListView.of(tokens.list(caller(ctx)))));
        route(r, HandlerType.DELETE, "/api/v1/tokens/{token}", ctx -> {
            tokens.revoke(caller(ctx), ctx.pathParam("token"));
            ctx.status(204);
        });

        route(r, HandlerType.POST, "/api/v1/store/backup", ctx -> backups.backUp(caller(ctx), size -> {
            ctx.status(200).contentType(StoreBackupService.CONTENT_TYPE);
            ctx.header("Content-Length", Long.toString(size));
            ctx.header("Content-Disposition", "attachment; filename=\"slipstream-store.zip\"");
            return ctx.res().getOutputStream();
        }));
    }

    private void createRun(Context ctx) {
        Principal caller = caller(ctx);
        CreateRunRequest request = CreateRunRequest.read(DocumentParser.parseOne(body(ctx)));
        String key = ctx.header("Idempotency-Key");
        RunService.Created created = request.jobDocument() != null
                ? runs.submit(caller, request.jobDocument(), request.overrides(), request.labels(), key)
                : runs.create(caller, request.workspace(), request.job(), request.overrides(), request.labels(), key);
        RunRecord run = created.run();
        // As Kubernetes does: warnings in Warning headers (RFC 7234, code 299), which clients print.
        created.warnings().forEach(warning -> ctx.res().addHeader("Warning", "299 slipstream \"" + warning.replace("\\", "\\\\").replace("\"", "\\\"") + "\""));
        if (created.replayed()) {
            ctx.header("Idempotent-Replayed", "true"); // the run an earlier request with this key created
            ctx.status(200).json(Views.run(run, store.runs().instancesOf(run.id()), runs.queueOf(run), true, caller.admin()));
        } else {
            ctx.status(201).json(Views.run(run, List.of(), null, true, caller.admin()));
        }
    }

    private void listRuns(Context ctx) {
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
                RunRecord run = readable.run();
                views.add(Views.run(run, store.runs().instancesOf(run.id()), runs.queueOf(run), false, caller.admin()));
            } else if (row instanceof RunRow.Unreadable u) {
                unreadable.add(new UnreadableRunView(u.id().value(), u.job(), u.workspace(), u.state(), u.createdAt(), u.error()));
            }
        }
        ctx.json(new RunListView(views, unreadable.isEmpty() ? null : unreadable, next));
    }

    /** {@code GET /api/v1/usage}: the window defaults to the last seven days; {@code by} to workspace. */
    private void usageReport(Context ctx) {
        Principal caller = caller(ctx);
        java.time.Instant now = clock.instant();
        UsageParams query = UsageParams.parse(ctx, now, clock);
        ctx.json(usage.report(caller, query.workspace(), query.by(), query.since(), query.until(), now));
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

    private void listDocuments(Context ctx, Kind kind, String workspace) {
        Problems problems = new Problems();
        if (workspace != null) {
            nameParam(ctx, "workspace", problems);
        }
        LabelSelector selector = kind == Kind.Job ? selectorParam(ctx, problems) : LabelSelector.EVERYTHING;
        problems.throwIfAny("the query is invalid");
        // Jobs are few (documents, not runs): selected here, after the workspace filter.
        ctx.json(ListView.of(documents.list(caller(ctx), kind, workspace).stream()
                .filter(stored -> selector.matches(stored.document().metadata().labels()))
                .map(Views::document).toList()));
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

    /** Quotas as documents, each with its live figures (the ledger is read once for all). */
    private void listQuotas(Context ctx) {
        String workspace = ctx.queryParam("workspace");
        if (workspace != null) {
            Problems problems = new Problems();
            nameParam(ctx, "workspace", problems);
            problems.throwIfAny("the query is invalid");
        }
        List<StoredDocument> quotas = documents.list(caller(ctx), Kind.Quota, workspace);
        QuotaLedger ledger = quotas.isEmpty() ? null : quotaLedger.ledger();
        ctx.json(ListView.of(quotas.stream().map(stored -> {
            ObjectNode quota = Views.document(stored);
            QuotaStatusView live = QuotaLedgerService.statusOf(ledger, new QuotaId(stored.document().workspace(), stored.document().name()));
            if (live != null) {
                quota.set("status", Json.mapper().valueToTree(live));
            }
            return quota;
        }).toList()));
    }

    private void getDocument(Context ctx, Kind kind, String workspace, String name) {
        ctx.json(Views.document(documents.get(caller(ctx), kind, workspace, name)));
    }

    private void deleteDocument(Context ctx, Kind kind, String workspace, String name) {
        documents.delete(caller(ctx), kind, workspace, name);
        ctx.status(204);
    }

    private static Principal caller(Context ctx) {
        Principal principal = ctx.attribute(PRINCIPAL);
        if (principal == null) {
            throw ApiException.unauthorized("not authenticated");
        }
        return principal;
    }

    private static byte[] body(Context ctx) {
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
    static java.time.Instant timeParam(Context ctx, String name, Problems problems, java.time.Clock clock) {
        String text = ctx.queryParam(name);
        if (text == null || text.isBlank()) {
            return null;
        }
        java.time.Instant instant;
        try {
            instant = java.time.Instant.parse(text);
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

    private static boolean boolParam(Context ctx, String name) {
        String text = ctx.queryParam(name);
        if (text == null || text.equals("false")) {
            return false;
        }
        if (text.equals("true") || text.isEmpty()) {
            return true;
        }
        throw new InvalidInputException(name, "must be true or false (is '" + text + "')");
    }

    /** The first {@link io.slipstream.api.spec.SpecReader#MAX_PROBLEMS} problems, and how many more there are: an answer stays small. */
    static List<Problem> bounded(List<Problem> problems) {
        int max = io.slipstream.api.spec.SpecReader.MAX_PROBLEMS;
        if (problems.size() <= max + 1) {
            return problems;
        }
        List<Problem> first = new java.util.ArrayList<>(problems.subList(0, max));
        first.add(new Problem("", "has " + (problems.size() - max) + " more problems; only the first " + max + " are listed"));
        return first;
    }

    private static void error(Context ctx, int status, String code, String message, List<Problem> problems) {
        ctx.status(status).json(new ErrorView(status, code, message, problems));
    }

    static String codeOf(int status) {
        return switch (status) {
            case 400 -> "BAD_REQUEST";
            case 401 -> "UNAUTHORIZED";
            case 403 -> "FORBIDDEN";
            case 404 -> "NOT_FOUND";
            case 405 -> "METHOD_NOT_ALLOWED";
            case 409 -> "CONFLICT";
            case 422 -> "UNPROCESSABLE";
            case 413, 414, 431 -> "TOO_LARGE";
            default -> status >= 500 ? "INTERNAL" : "ERROR";
        };
    }

    @Override
    public void close() {
        watch.close(); // streams end with an 'end' event before Jetty stops
        if (app != null) {
            app.stop();
        }
    }
}
