package io.slipstream.server.api;

import io.javalin.Javalin;
import io.javalin.json.JavalinJackson3;
import io.slipstream.api.codec.Json;
import io.slipstream.server.auth.Authenticator;
import io.slipstream.server.auth.Principal;
import io.slipstream.server.metrics.ServerMetrics;
import io.slipstream.server.service.DocumentService;
import io.slipstream.server.service.LogService;
import io.slipstream.server.service.NodeService;
import io.slipstream.server.service.QuotaLedgerService;
import io.slipstream.server.service.RunService;
import io.slipstream.server.service.SecretService;
import io.slipstream.server.service.StoreBackupService;
import io.slipstream.server.service.TokenService;
import io.slipstream.server.service.UsageService;
import io.slipstream.store.Store;
import java.time.Clock;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The REST API under {@code /api/v1}: authentication of every call but {@code /healthz} (and of a run's token, to
 * its own run), the routes ({@link SystemRoutes}, {@link DocumentRoutes}, {@link RunRoutes}) and the console's
 * files, with errors mapped to statuses in one place ({@link ErrorResponses}). Handlers stay thin: parse, call a
 * service, map to a view.
 */
public final class ApiServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ApiServer.class);
    private static final int MAX_BODY_BYTES = 2 * 1024 * 1024;

    /** One registered route, as the OpenAPI file must describe it. */
    public record Route(String method, String path) {
    }

    private final Authenticator authenticator;
    private final ServerMetrics metrics;
    private final SystemRoutes system;
    private final DocumentRoutes documentRoutes;
    private final RunRoutes runRoutes;
    private final RunWatch watch;
    private final IdentityRoutes identityRoutes;
    private volatile RouteTemplates templates = RouteTemplates.of(List.of());
    private volatile List<Route> routes = List.of();
    private Javalin app;

    public ApiServer(Store store, Authenticator authenticator, DocumentService documents, RunService runs, NodeService nodes,
                     QuotaLedgerService quotaLedger, ServerMetrics metrics, TokenService tokens, LogService logs, SecretService secrets, Readiness readiness,
                     Clock clock, StoreBackupService backups, io.slipstream.server.identity.IdentityTokens identity) {
        this.authenticator = authenticator;
        this.metrics = metrics;
        this.watch = new RunWatch(store, runs, RunWatch.Limits.DEFAULTS);
        this.system = new SystemRoutes(store, authenticator, metrics, readiness, nodes, tokens, backups, clock);
        this.documentRoutes = new DocumentRoutes(store, documents, quotaLedger, new UsageService(store), secrets, clock);
        this.runRoutes = new RunRoutes(store, runs, logs, watch, authenticator, clock);
        this.identityRoutes = new IdentityRoutes(identity);
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
                ctx.attribute(Requests.PRINCIPAL, caller);
            });
            config.routes.before("/api/*", ctx -> {
                QueryString.checkPath(ctx.path());
                QueryString.check(ctx.queryString());
            });
            config.jetty.modifyServer(server -> server.setErrorHandler(new JsonErrorHandler()));
            ErrorResponses.register(config.routes);
            RouteTable table = new RouteTable(config.routes);
            system.register(table);
            documentRoutes.register(table);
            runRoutes.register(table);
            identityRoutes.register(table);
            new io.slipstream.server.console.ConsoleAssets().register(config.routes);
            routes = table.routes();
            templates = RouteTemplates.of(routes);
        });
        app.start(host, port);
    }

    public int port() {
        return app.port();
    }

    public List<Route> routes() {
        return routes;
    }

    @Override
    public void close() {
        watch.close(); // streams end with an 'end' event before Jetty stops
        if (app != null) {
            app.stop();
        }
    }
}
