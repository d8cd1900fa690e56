package io.slipstream.server.api;

import static io.slipstream.server.api.Requests.body;
import static io.slipstream.server.api.Requests.caller;

import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import io.slipstream.api.codec.DocumentParser;
import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.FieldReader;
import io.slipstream.api.wire.CreateTokenRequest;
import io.slipstream.api.wire.LeaderView;
import io.slipstream.api.wire.ListView;
import io.slipstream.api.wire.WhoAmIView;
import io.slipstream.server.auth.Authenticator;
import io.slipstream.server.auth.Principal;
import io.slipstream.server.metrics.ServerMetrics;
import io.slipstream.server.service.NodeService;
import io.slipstream.server.service.StoreBackupService;
import io.slipstream.server.service.TokenService;
import io.slipstream.store.Leadership;
import io.slipstream.store.Store;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/** The server's own routes: health, readiness, metrics, who leads, who calls, nodes, tokens and the store's backup. */
final class SystemRoutes {
    private final Store store;
    private final Authenticator authenticator;
    private final ServerMetrics metrics;
    private final Readiness readiness;
    private final NodeService nodes;
    private final TokenService tokens;
    private final StoreBackupService backups;
    private final Clock clock;

    SystemRoutes(Store store, Authenticator authenticator, ServerMetrics metrics, Readiness readiness, NodeService nodes, TokenService tokens,
                 StoreBackupService backups, Clock clock) {
        this.store = store;
        this.authenticator = authenticator;
        this.metrics = metrics;
        this.readiness = readiness;
        this.nodes = nodes;
        this.tokens = tokens;
        this.backups = backups;
        this.clock = clock;
    }

    void register(RouteTable r) {
        r.add(HandlerType.GET, "/healthz", ctx -> ctx.json(Map.of("status", "ok")));
        // Prometheus' text format; admins only: the figures name every team's quotas.
        r.add(HandlerType.GET, "/metrics", ctx -> {
            Principal caller = authenticator.authenticate(ctx.header("Authorization"));
            if (!caller.admin()) {
                throw ApiException.forbidden("metrics are for admins: they show every team's quotas (use an admin token for Prometheus)");
            }
            ctx.contentType("text/plain; version=0.0.4; charset=utf-8").result(metrics.scrape());
        });
        r.add(HandlerType.GET, "/readyz", ctx -> {
            Readiness.Status status = readiness.now();
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("status", status.ready() ? "ready" : "not ready");
            if (status.lastCycleAt() != null) {
                body.put("lastCycleAt", status.lastCycleAt().toString());
            }
            body.put("role", status.election().role().name().toLowerCase(Locale.ROOT));
            if (status.election().lease() != null) {
                body.put("leader", status.election().lease().holder());
                body.put("epoch", status.election().lease().epoch());
            }
            io.slipstream.executor.ResourceEnforcement enforcement = nodes.enforcement();
            if (enforcement != null) {
                body.put("enforcement", enforcement.summary()); // what instances are held to on this server's machines
            }
            String executorProblem = nodes.executorProblem();
            if (executorProblem != null) {
                // Said, not a 503: the API still serves, and a load balancer taking the server out would not bring Slurm back.
                body.put("executor", executorProblem);
            }
            if (status.reason() != null) {
                body.put("reason", status.reason());
                ctx.header("Retry-After", Long.toString(ErrorResponses.STORE_RETRY_AFTER_SECONDS));
            }
            ctx.status(status.ready() ? 200 : 503).json(body);
        });
        r.add(HandlerType.GET, "/api/v1/leader", ctx -> {
            caller(ctx);
            Leadership lease = store.leases().current().orElseThrow(() -> ApiException.notFound("no replica has led yet"));
            ctx.json(new LeaderView(lease.holder(), lease.epoch(), lease.renewedAt().toString(), lease.expiresAt().toString(),
                    lease.expiredAt(clock.instant())));
        });
        r.add(HandlerType.GET, "/api/v1/whoami", ctx -> {
            Principal caller = caller(ctx);
            ctx.json(new WhoAmIView(caller.user(), caller.admin(), new ArrayList<>(new TreeSet<>(caller.workspaces()))));
        });

        r.add(HandlerType.GET, "/api/v1/nodes", ctx -> {
            caller(ctx);
            ctx.json(ListView.of(nodes.list()));
        });
        r.add(HandlerType.GET, "/api/v1/nodes/{node}", ctx -> {
            caller(ctx);
            ctx.json(nodes.get(ctx.pathParam("node")));
        });
        r.add(HandlerType.POST, "/api/v1/nodes/{node}/down", ctx -> {
            Principal caller = caller(ctx);
            FieldReader body = FieldReader.of(DocumentParser.parseOne(body(ctx)), "", new Problems());
            String reason = body.string("reason", true, 256);
            body.finish();
            body.problems().throwIfAny("the request is invalid");
            ctx.json(nodes.down(caller, ctx.pathParam("node"), reason));
        });
        r.add(HandlerType.POST, "/api/v1/nodes/{node}/up", ctx -> ctx.json(nodes.up(caller(ctx), ctx.pathParam("node"))));
        r.add(HandlerType.POST, "/api/v1/nodes/{node}/cordon", ctx -> {
            Principal caller = caller(ctx);
            ctx.json(nodes.cordon(caller, ctx.pathParam("node"), optionalReason(ctx)));
        });
        r.add(HandlerType.POST, "/api/v1/nodes/{node}/drain", ctx -> {
            Principal caller = caller(ctx);
            ctx.json(nodes.drain(caller, ctx.pathParam("node"), optionalReason(ctx)));
        });
        r.add(HandlerType.POST, "/api/v1/nodes/{node}/uncordon", ctx -> ctx.json(nodes.uncordon(caller(ctx), ctx.pathParam("node"))));

        r.add(HandlerType.POST, "/api/v1/tokens", ctx -> {
            CreateTokenRequest request = CreateTokenRequest.read(DocumentParser.parseOne(body(ctx)));
            ctx.status(201).json(tokens.create(caller(ctx), request.user(), request.admin(), request.description(), request.expiresInDays()));
        });
        r.add(HandlerType.GET, "/api/v1/tokens", ctx -> ctx.json(ListView.of(tokens.list(caller(ctx)))));
        r.add(HandlerType.DELETE, "/api/v1/tokens/{token}", ctx -> {
            tokens.revoke(caller(ctx), ctx.pathParam("token"));
            ctx.status(204);
        });

        r.add(HandlerType.POST, "/api/v1/store/backup", ctx -> backups.backUp(caller(ctx), size -> {
            ctx.status(200).contentType(StoreBackupService.CONTENT_TYPE);
            ctx.header("Content-Length", Long.toString(size));
            ctx.header("Content-Disposition", "attachment; filename=\"slipstream-store.zip\"");
            return ctx.res().getOutputStream();
        }));
    }

    /** A cordon's or drain's body: none, or {@code {"reason": ...}}. */
    private static String optionalReason(Context ctx) {
        byte[] bytes = body(ctx);
        if (bytes.length == 0) {
            return null;
        }
        FieldReader body = FieldReader.of(DocumentParser.parseOne(bytes), "", new Problems());
        String reason = body.string("reason", false, 256);
        body.finish();
        body.problems().throwIfAny("the request is invalid");
        return reason;
    }
}
