package io.slipstream.server.api;

import static io.slipstream.server.api.Requests.body;
import static io.slipstream.server.api.Requests.boolParam;
import static io.slipstream.server.api.Requests.caller;
import static io.slipstream.server.api.Requests.nameParam;
import static io.slipstream.server.api.Requests.selectorParam;

import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import io.slipstream.api.codec.Json;
import io.slipstream.api.label.LabelSelector;
import io.slipstream.api.problem.Problems;
import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Documents;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.wire.ListView;
import io.slipstream.api.wire.QuotaStatusView;
import io.slipstream.scheduler.QuotaLedger;
import io.slipstream.server.auth.Principal;
import io.slipstream.server.service.DocumentService;
import io.slipstream.server.service.QuotaLedgerService;
import io.slipstream.server.service.QuotaUsage;
import io.slipstream.server.service.SecretService;
import io.slipstream.server.service.UsageSeriesService;
import io.slipstream.server.service.UsageService;
import io.slipstream.store.Store;
import io.slipstream.store.StoredDocument;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import tools.jackson.databind.node.ObjectNode;

/** The documents: apply, and per kind list, get and delete; quotas with their live figures, pools, usage, secrets. */
final class DocumentRoutes {
    private final Store store;
    private final DocumentService documents;
    private final QuotaLedgerService quotaLedger;
    private final UsageService usage;
    private final UsageSeriesService usageSeries;
    private final SecretService secrets;
    private final Clock clock;

    DocumentRoutes(Store store, DocumentService documents, QuotaLedgerService quotaLedger, UsageService usage, SecretService secrets, Clock clock) {
        this.store = store;
        this.documents = documents;
        this.quotaLedger = quotaLedger;
        this.usage = usage;
        this.usageSeries = new UsageSeriesService(store, quotaLedger::pools, () -> quotaLedger.ledger().capacity().gpu());
        this.secrets = secrets;
        this.clock = clock;
    }

    void register(RouteTable r) {
        r.add(HandlerType.POST, "/api/v1/apply", ctx -> {
            boolean dryRun = boolParam(ctx, "dryRun"); // checked before the body is read: a bad flag is named first
            ctx.json(ListView.of(documents.apply(caller(ctx), Documents.readAll(body(ctx)), dryRun)));
        });

        r.add(HandlerType.GET, "/api/v1/workspaces", ctx -> list(ctx, Kind.Workspace, null));
        r.add(HandlerType.GET, "/api/v1/workspaces/{workspace}", ctx -> get(ctx, Kind.Workspace, null, ctx.pathParam("workspace")));
        r.add(HandlerType.DELETE, "/api/v1/workspaces/{workspace}", ctx -> delete(ctx, Kind.Workspace, null, ctx.pathParam("workspace")));
        r.add(HandlerType.GET, "/api/v1/shapes", ctx -> list(ctx, Kind.Shape, null));
        r.add(HandlerType.GET, "/api/v1/shapes/{shape}", ctx -> get(ctx, Kind.Shape, null, ctx.pathParam("shape")));
        r.add(HandlerType.DELETE, "/api/v1/shapes/{shape}", ctx -> delete(ctx, Kind.Shape, null, ctx.pathParam("shape")));
        r.add(HandlerType.GET, "/api/v1/topologies", ctx -> list(ctx, Kind.Topology, null));
        r.add(HandlerType.GET, "/api/v1/topologies/{topology}", ctx -> get(ctx, Kind.Topology, null, ctx.pathParam("topology")));
        r.add(HandlerType.DELETE, "/api/v1/topologies/{topology}", ctx -> delete(ctx, Kind.Topology, null, ctx.pathParam("topology")));
        r.add(HandlerType.GET, "/api/v1/quotas", this::listQuotas);
        r.add(HandlerType.GET, "/api/v1/workspaces/{workspace}/quotas/{quota}", this::getQuota);
        r.add(HandlerType.GET, "/api/v1/workspaces/{workspace}/quotas/{quota}/pending",
                ctx -> ctx.json(ListView.of(quotaLedger.pending(caller(ctx), ctx.pathParam("workspace"), ctx.pathParam("quota")))));
        r.add(HandlerType.GET, "/api/v1/pools", ctx -> ctx.json(ListView.of(quotaLedger.pools(caller(ctx)))));
        r.add(HandlerType.GET, "/api/v1/usage", this::usageReport);
        r.add(HandlerType.GET, "/api/v1/usage/series", this::usageSeries);
        r.add(HandlerType.DELETE, "/api/v1/workspaces/{workspace}/quotas/{quota}",
                ctx -> delete(ctx, Kind.Quota, ctx.pathParam("workspace"), ctx.pathParam("quota")));
        r.add(HandlerType.GET, "/api/v1/jobs", ctx -> list(ctx, Kind.Job, ctx.queryParam("workspace")));
        r.add(HandlerType.GET, "/api/v1/workspaces/{workspace}/jobs/{job}", ctx -> get(ctx, Kind.Job, ctx.pathParam("workspace"), ctx.pathParam("job")));
        r.add(HandlerType.DELETE, "/api/v1/workspaces/{workspace}/jobs/{job}",
                ctx -> delete(ctx, Kind.Job, ctx.pathParam("workspace"), ctx.pathParam("job")));

        // Secrets are applied like every document; here they are listed, shown (keys only, values ***) and deleted.
        r.add(HandlerType.GET, "/api/v1/secrets", ctx -> ctx.json(ListView.of(secrets.list(caller(ctx), ctx.queryParam("workspace")))));
        r.add(HandlerType.GET, "/api/v1/workspaces/{workspace}/secrets/{secret}",
                ctx -> ctx.json(secrets.get(caller(ctx), ctx.pathParam("workspace"), ctx.pathParam("secret"))));
        r.add(HandlerType.DELETE, "/api/v1/workspaces/{workspace}/secrets/{secret}", ctx -> {
            secrets.delete(caller(ctx), ctx.pathParam("workspace"), ctx.pathParam("secret"));
            ctx.status(204);
        });
    }

    private void list(Context ctx, Kind kind, String workspace) {
        Problems problems = new Problems();
        if (workspace != null) {
            nameParam(ctx, "workspace", problems);
        }
        LabelSelector selector = kind == Kind.Job ? selectorParam(ctx, problems) : LabelSelector.EVERYTHING;
        problems.throwIfAny("the query is invalid");
        Instant now = clock.instant();
        // Jobs are few (documents, not runs): selected here, after the workspace filter.
        ctx.json(ListView.of(documents.list(caller(ctx), kind, workspace).stream()
                .filter(stored -> selector.matches(stored.document().metadata().labels()))
                .map(stored -> Views.document(stored, now)).toList()));
    }

    private void get(Context ctx, Kind kind, String workspace, String name) {
        ctx.json(Views.document(documents.get(caller(ctx), kind, workspace, name), clock.instant()));
    }

    private void delete(Context ctx, Kind kind, String workspace, String name) {
        documents.delete(caller(ctx), kind, workspace, name);
        ctx.status(204);
    }

    /** A quota with its live figures (from the ledger) and what its runs used (from the usage records). */
    private void getQuota(Context ctx) {
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

    /** {@code GET /api/v1/usage}: the window defaults to the last seven days; {@code by} to workspace. */
    private void usageReport(Context ctx) {
        Principal caller = caller(ctx);
        Instant now = clock.instant();
        UsageParams query = UsageParams.parse(ctx, now, clock);
        ctx.json(usage.report(caller, query.workspace(), query.by(), query.since(), query.until(), now));
    }

    /** {@code GET /api/v1/usage/series}: the charts' figures; by default a week of the caller's quotas. */
    private void usageSeries(Context ctx) {
        Principal caller = caller(ctx);
        Instant now = clock.instant();
        UsageSeriesParams query = UsageSeriesParams.parse(ctx, now, clock);
        ctx.json(usageSeries.series(caller, query.window(), query.of(), query.workspace(), query.until(), now));
    }
}
