package io.slipstream.server;

import io.slipstream.api.wire.TokenView;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorContext;
import io.slipstream.executor.NodeInfo;
import io.slipstream.scheduler.Defragmentation;
import io.slipstream.scheduler.Scheduler;
import io.slipstream.server.auth.RunTokens;
import io.slipstream.server.api.ApiServer;
import io.slipstream.server.api.Readiness;
import io.slipstream.server.auth.Authenticator;
import io.slipstream.server.config.Plugins;
import io.slipstream.server.config.ServerConfig;
import io.slipstream.server.control.ControlLoop;
import io.slipstream.server.control.LoopParts;
import io.slipstream.server.control.LeaderElection;
import io.slipstream.server.control.RunFactory;
import io.slipstream.server.control.RunIdentity;
import io.slipstream.server.control.LiveSnapshot;
import io.slipstream.server.metrics.ServerMetrics;
import io.slipstream.server.service.QuotaLedgerService;
import io.slipstream.server.service.DocumentService;
import io.slipstream.server.service.LogService;
import io.slipstream.server.service.NodeService;
import io.slipstream.server.identity.IdentityKeys;
import io.slipstream.server.identity.IdentityTokens;
import io.slipstream.server.secret.ServerKeys;
import io.slipstream.server.service.RunService;
import io.slipstream.server.service.SecretService;
import io.slipstream.server.service.TokenService;
import io.slipstream.store.Store;
import io.slipstream.store.StoreContext;
import io.slipstream.store.StoreFiles;
import io.slipstream.server.service.StoreBackupService;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control plane, wired: store, executor, control loop and API. Start order matters: the store is checked as it is
 * (a store in the data directory opened to read: {@link StoreChecks}), opened, migrated and checked again (a damaged,
 * older or other store stops the start), the key files are read and checked against it (a wrong or missing one stops
 * the start), the admin token exists, the API listens, and then the replica claims the leadership: while it leads,
 * its control loop first adopts the instances that outlived a previous server and runs no cycle before that is done;
 * the API does not wait for it (what it asks of the loop is done in a cycle), so a server with many instances to
 * adopt is soon ready.
 */
public final class SlipstreamServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SlipstreamServer.class);
    public static final String ADMIN_TOKEN_FILE = "admin.token";

    private final ServerConfig config;
    private final Store store;
    private final Executor executor;
    private final LeaderElection election;
    private final ApiServer api;
    private final StoreWatermark.Ticker watermark;
    private final ServerMetrics metrics;
    private final IdentityTokens identity;
    /**
     * How long one key signs runs' identity tokens before the next is made; and the longest a token lives, which keeps
     * a key published after it stopped signing (the run side, spec.identity, is to come: docs/identity.md).
     */
    static final Duration IDENTITY_KEY_ROTATION = Duration.ofDays(7);
    static final Duration IDENTITY_LONGEST_TOKEN = Duration.ofDays(1);

    private SlipstreamServer(ServerConfig config, Store store, Executor executor, LeaderElection election, ApiServer api,
                             StoreWatermark.Ticker watermark, ServerMetrics metrics, IdentityTokens identity) {
        this.metrics = metrics;
        this.identity = identity;
        this.watermark = watermark;
        this.config = config;
        this.store = store;
        this.executor = executor;
        this.election = election;
        this.api = api;
    }

    /** Millisecond precision everywhere: what both stores keep exactly. */
    public static Clock systemClock() {
        return Clock.tick(Clock.systemUTC(), Duration.ofMillis(1));
    }

    /** Starts with the store and the executor of the class path that {@code config} names ({@link Plugins#installed()}). */
    public static SlipstreamServer start(ServerConfig config, Clock clock) {
        return start(config, clock, Plugins.installed());
    }

    public static SlipstreamServer start(ServerConfig config, Clock clock, Plugins plugins) {
        java.time.Instant serverStart = java.time.Instant.now();
        StartupTimes times = new StartupTimes();
        Path dataDir = config.dataDir().toAbsolutePath().normalize();
        var storeFactory = plugins.storeOf(config.store().store());
        var executorFactory = plugins.executorOf(config.executor().executor());
        createDirectory(dataDir, "rwx------");
        createDirectory(dataDir.resolve("store"), "rwx------");
        StoreContext storeContext = () -> dataDir;
        Optional<StoreFiles> files = storeFactory.files(config.store(), storeContext);
        boolean accept = StoreWatermark.accepting(dataDir); // --accept-older-store
        files.ifPresent(embedded -> StoreChecks.beforeOpening(embedded, dataDir, accept, clock));
        Store opened = storeFactory.create(config.store(), storeContext);
        ServerMetrics metrics = new ServerMetrics(clock); // after the store: a store that cannot open leaves no GC listeners behind
        Store store = metrics.observe(opened);
        times.done("store");
        Executor executor = null;
        LeaderElection election = null;
        ApiServer api = null;
        StoreWatermark.Ticker watermark = null;
        try {
            StoreChecks.beforeServing(store, files, files.map(f -> f.file().toString()).orElse("(" + config.store().store() + ")"),
                    dataDir, accept, clock);
            watermark = new StoreWatermark.Ticker(store, dataDir, clock);
            ServerKeys keys = ServerKeys.open(store, config.keys().secretKeyIn(dataDir), config.keys().previousSecretKey(),
                    config.keys().tokenPepperIn(dataDir), clock);
            TokenService tokens = new TokenService(store, clock, keys.tokens());
            SecretService secrets = new SecretService(store, keys.secrets());
            ensureAdminToken(store, tokens, dataDir, clock);
            times.done("keys and tokens");
            executor = executorFactory.create(config.executor(), executorContext(dataDir, clock));
            times.done("executor");
            java.util.concurrent.atomic.AtomicReference<String> apiUrl = new java.util.concurrent.atomic.AtomicReference<>();
            RunTokens runTokens = new RunTokens(tokens, apiUrl::get);
            IdentityTokens identity = new IdentityTokens(new IdentityKeys(store, keys.secrets(), clock, IDENTITY_KEY_ROTATION,
                    IDENTITY_LONGEST_TOKEN), config::identityIssuer);
            Executor leading = executor;
            election = new LeaderElection(store, executor, clock, config.leaderLease(), LeaderElection.newHolderName(),
                    (fenced, progress, queue) -> new ControlLoop(LoopParts.of(fenced, leading, clock).withLimits(config.limits())
                            .withScheduler(new Scheduler(Defragmentation.DEFAULT, config.fairSharingPreemption()))
                            .withTick(config.tickInterval()).withRunTokens(runTokens).withSecrets(secrets)
                            .withIdentity(config.identityIssuer() == null ? null : new RunIdentity(identity)).withShared(progress, queue)
                            .withCycleTimes(metrics::cycle)));
            LeaderElection control = election;
            var refusals = io.slipstream.server.control.ExecutorRefusals.of(leading).and(job -> identityRefusal(job, config, leading));
            DocumentService documents = new DocumentService(store, clock, leading::nodes, config.limits(), executor.requiresImage(), executor.restartsInPlace(),
                    refusals, secrets);
            RunFactory runFactory = new RunFactory(clock, config.limits(), executor.restartsInPlace(), refusals);
            RunService runs = new RunService(store, documents, control, runFactory, clock, leading::nodes, executor.nodesMayGrow());
            metrics.readFrom(() -> LiveSnapshot.read(store, leading.nodes()), control::lastCycleAt,
                    () -> control.status().role() == LeaderElection.Role.LEADER);
            api = new ApiServer(store, new Authenticator(store, clock, keys.tokens()), documents, runs,
                    new NodeService(store, executor, control::wakeUp, clock),
                    new QuotaLedgerService(store, leading::nodes, id -> control.queueStatus().of(id), documents), metrics, tokens, new LogService(store, executor), secrets,
                    new Readiness(control::lastCycleAt, control::status, store::ping, clock), clock,
                    files.map(StoreBackupService::of).orElse(StoreBackupService.unsupported(config.store().store())), identity);
            api.start(config.host(), config.port());
            times.done("api");
            // Instances on this machine reach the API on the loopback address when the server listens on all.
            String host = config.host().equals("0.0.0.0") || config.host().equals("::") ? "127.0.0.1"
                    : config.host().contains(":") ? "[" + config.host() + "]" : config.host();
            apiUrl.set("http://" + host + ":" + api.port());
            // After the API (and its address, which instances are given): its start and the adoption of many
            // instances would only compete for the same cores. Replicas over one store take turns; a lone one leads
            // as soon as this returns.
            election.start();
            LOG.info("ready: {}", times.summary(StartupTimes.processStart(), serverStart));
            return new SlipstreamServer(config, store, executor, election, api, watermark, metrics, identity);
        } catch (RuntimeException e) {
            closeQuietly(api);
            closeQuietly(election);
            closeQuietly(executor);
            closeQuietly(watermark);
            closeQuietly(metrics);
            store.close();
            throw e;
        }
    }

    /** Why a job's identity tokens cannot be given (by field below {@code spec}), if they cannot. */
    private static java.util.Map<String, String> identityRefusal(io.slipstream.api.spec.JobSpec job, ServerConfig config, Executor executor) {
        if (job.identity() == null) {
            return java.util.Map.of();
        }
        if (config.identityIssuer() == null) {
            return java.util.Map.of("identity", "this server signs no identity tokens: its identity.issuer is not set (docs/identity.md)");
        }
        return executor.deliversIdentity() ? java.util.Map.of()
                : java.util.Map.of("identity", "this server's executor (" + config.executor().executor() + ") cannot deliver identity tokens");
    }

    /**
     * On the first start there is no admin: create one and leave its token, readable by this user only, in the data
     * directory. Only the token's hash is stored.
     */
    private static void ensureAdminToken(Store store, TokenService tokens, Path dataDir, Clock clock) {
        Path file = dataDir.resolve(ADMIN_TOKEN_FILE);
        if (store.credentials().hasAdminToken(clock.instant())) {
            if (!Files.exists(file)) {
                LOG.warn("an admin token exists but {} does not; use the token you kept, or revoke it to have a new one made", file);
            }
            return;
        }
        TokenView admin = tokens.issue("admin", true, "created at first start", null);
        try {
            Path temporary = dataDir.resolve(ADMIN_TOKEN_FILE + ".tmp");
            Files.deleteIfExists(temporary);
            Files.createFile(temporary, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(temporary, admin.token() + "\n", StandardCharsets.UTF_8);
            Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
        LOG.info("created the admin token; it is in {}", file);
    }

    /** Creates a directory with these permissions; one that exists already is left as it is. */
    private static void createDirectory(Path dir, String permissions) {
        try {
            if (dir.getParent() != null) {
                Files.createDirectories(dir.getParent());
            }
            if (!Files.isDirectory(dir)) {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(permissions)));
            }
        } catch (FileAlreadyExistsException e) {
            throw new UncheckedIOException(dir + " exists and is not a directory", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir, e);
        }
    }

    /** What an executor is given: the data dir, the clock, and the {@code slipstream} command for local instances. */
    private static ExecutorContext executorContext(Path dataDir, Clock clock) {
        return new ExecutorContext() {
            private Optional<Path> tools;

            @Override
            public Path dataDir() {
                return dataDir;
            }

            @Override
            public Clock clock() {
                return clock;
            }

            @Override
            public synchronized Optional<Path> instanceTools() {
                if (tools == null) {
                    tools = InstanceTools.install(dataDir);
                }
                return tools;
            }
        };
    }

    public int port() {
        return api.port();
    }

    /** What signs runs' identity tokens (and serves their discovery document and keys). */
    public IdentityTokens identityTokens() {
        return identity;
    }

    public String url() {
        String host = config.host().contains(":") ? "[" + config.host() + "]" : config.host();
        return "http://" + host + ":" + port();
    }

    /** The nodes the executor runs instances on. */
    public List<NodeInfo> nodes() {
        return executor.nodes();
    }

    public Path adminTokenFile() {
        return config.dataDir().toAbsolutePath().normalize().resolve(ADMIN_TOKEN_FILE);
    }

    public java.util.List<ApiServer.Route> routes() {
        return api.routes();
    }

    /** Stops serving and watching; instances keep running and are adopted by the next start. */
    @Override
    public void close() {
        closeQuietly(api);
        closeQuietly(election);
        closeQuietly(executor);
        closeQuietly(watermark); // last: what the loop wrote is older than the recorded watermark
        closeQuietly(metrics);
        store.close();
    }

    private static void closeQuietly(AutoCloseable closeable) {
        if (closeable == null) {
            return;
        }
        try {
            closeable.close();
        } catch (Exception e) {
            LOG.warn("error while stopping {}", closeable.getClass().getSimpleName(), e);
        }
    }
}
