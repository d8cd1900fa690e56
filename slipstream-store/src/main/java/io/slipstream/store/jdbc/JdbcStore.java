package io.slipstream.store.jdbc;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import io.slipstream.model.usage.UsageChange;
import io.slipstream.store.UsageQuery;
import io.slipstream.store.UsageTotal;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.slipstream.api.codec.Json;
import io.slipstream.api.run.Endpoint;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.SpecWriter;
import io.slipstream.api.spec.StoredFormat;
import io.slipstream.api.spec.StoredSpecs;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.store.ConflictException;
import io.slipstream.store.FencedException;
import io.slipstream.store.Leadership;
import io.slipstream.model.FaultState;
import io.slipstream.model.EventType;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.LaunchFailure;
import io.slipstream.store.NodeDown;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunOrigin;
import io.slipstream.store.RunQuery;
import io.slipstream.model.RunRecord;
import io.slipstream.store.RunRow;
import io.slipstream.store.SecretRecord;
import io.slipstream.store.Store;
import io.slipstream.store.StoredDocument;
import io.slipstream.store.StoreUnavailableException;
import io.slipstream.store.TokenRecord;
import io.slipstream.store.UnreadableRecordException;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.flywaydb.core.Flyway;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.statement.SqlStatement;
import org.jdbi.v3.core.statement.SqlStatements;
import org.jdbi.v3.core.statement.StatementContext;
import org.jdbi.v3.core.statement.StatementException;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@link Store} on a JDBC database: H2 in file mode (the embedded default) or PostgreSQL. The schema comes
 * from versioned Flyway migrations that run unchanged on both.
 */
public final class JdbcStore implements Store {
    private static final TypeReference<Map<String, String>> STRING_MAP = new TypeReference<>() {
    };
    /** Stored JSON is data: a field a later release dropped is ignored, as StoredSpecs does for specs. */
    private static final JsonMapper STORED = Json.mapper().rebuild().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();

    /** How long a caller waits for a connection before the store counts as unavailable. */
    static final long CONNECTION_TIMEOUT_MS = 1_500;
    private static final long VALIDATION_TIMEOUT_MS = 1_000;
    /** No statement of Slipstream's takes seconds; one that does is stuck behind a lock or a sick server. */
    static final long STATEMENT_TIMEOUT_S = 10;

    private final HikariDataSource dataSource;
    /** Only one process can open this store (the embedded H2 file is locked): a previous leader cannot be alive. */
    private final boolean singleProcess;
    private final Jdbi jdbi;
    private final ThreadLocal<Handle> transaction = new ThreadLocal<>();
    /**
     * The epoch the current transaction found, with the fence's row locked ({@link #requireLeader}): the writes it
     * joins check no more, as no other transaction can change the row before this one ends.
     */
    private final ThreadLocal<Long> fencedAt = new ThreadLocal<>();
    private final UnreadableRows unreadable = new UnreadableRows();
    /** Runs after each commit, before it is acknowledged: the embedded H2's {@link H2NewestChunk}; nothing elsewhere. */
    private final Runnable committed;
    /** An H2 file in this process: its writers, one at a time ({@link OneWriterAtATime}); {@code null} elsewhere. */
    private final OneWriterAtATime oneWriter;

    private JdbcStore(HikariDataSource dataSource, boolean singleProcess) {
        this(dataSource, singleProcess, () -> { }, null, true);
    }

    /** @param timeoutPerStatement whether each statement is given the timeout (not where the session has it: H2) */
    private JdbcStore(HikariDataSource dataSource, boolean singleProcess, Runnable committed, OneWriterAtATime oneWriter,
            boolean timeoutPerStatement) {
        this.dataSource = dataSource;
        this.singleProcess = singleProcess;
        this.committed = committed;
        this.oneWriter = oneWriter;
        this.jdbi = Jdbi.create(dataSource);
        if (timeoutPerStatement) {
            jdbi.getConfig(SqlStatements.class).setQueryTimeout((int) STATEMENT_TIMEOUT_S);
        }
        if (oneWriter != null) {
            jdbi.getConfig(SqlStatements.class).addCustomizer(oneWriter);
        }
    }

    /** Opens the embedded H2 store under {@code dataDir} ({@link EmbeddedH2}: its settings, and the checks at open). */
    public static JdbcStore openH2(Path dataDir) {
        return EmbeddedH2.open(dataDir.resolve(EmbeddedH2.DIRECTORY)); // checked: a damaged file is refused (EmbeddedH2)
    }

    /** The JDBC URL of the embedded H2 store under {@code dataDir} (user {@code sa}, no password). */
    public static String h2Url(Path dataDir) {
        return EmbeddedH2.url(dataDir.resolve(EmbeddedH2.DIRECTORY));
    }

    /** Opens a store at a JDBC URL ({@code jdbc:h2:...} or {@code jdbc:postgresql://...}) and migrates its schema. */
    public static JdbcStore open(String url, String user, String password) {
        return open(url, user, password, false);
    }

    /** The embedded store: its file is locked by this process, so no other can be leading over it. */
    static JdbcStore openEmbedded(String url) {
        return open(url, "sa", "", true);
    }

    private static JdbcStore open(String url, String user, String password, boolean singleProcess) {
        HikariConfig config = new HikariConfig();
        // H2 runs a SET QUERY_TIMEOUT before every statement given a timeout (44 of a trivial run's 100 statements):
        // its sessions get the timeout once, at connect, instead (a URL that sets its own keeps it, even 0: none).
        boolean timeoutInSession = url.startsWith("jdbc:h2:");
        config.setJdbcUrl(timeoutInSession && !url.toUpperCase(java.util.Locale.ROOT).contains(";QUERY_TIMEOUT=")
                ? url + ";QUERY_TIMEOUT=" + STATEMENT_TIMEOUT_S * 1000 : url);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize(8);
        config.setMinimumIdle(2);
        config.setPoolName("slipstream-store");
        config.setInitializationFailTimeout(10_000);
        // An outage must answer within moments, not after Hikari's default 30 s wait for a connection.
        config.setConnectionTimeout(CONNECTION_TIMEOUT_MS);
        config.setValidationTimeout(VALIDATION_TIMEOUT_MS);
        if (url.startsWith("jdbc:postgresql:")) {
            // A server that vanished without closing its sockets (host down, network cut) is noticed too.
            config.addDataSourceProperty("connectTimeout", "2");
            config.addDataSourceProperty("socketTimeout", Long.toString(STATEMENT_TIMEOUT_S + 5));
            config.addDataSourceProperty("tcpKeepAlive", "true");
        }
        HikariDataSource dataSource = new HikariDataSource(config);
        try {
            if (!AppliedMigrations.allApplied(dataSource, JdbcStore.class.getClassLoader())) { // else Flyway is not started (see AppliedMigrations)
                org.flywaydb.core.api.configuration.FluentConfiguration flyway = Flyway.configure();
                // On H2 through connections of their own, without the pool's statement timeout: a migration may copy a
                // large table (ALTER TABLE ... ADD COLUMN), which is not a stuck statement.
                (timeoutInSession ? flyway.dataSource(url, user, password) : flyway.dataSource(dataSource))
                        .locations("classpath:" + AppliedMigrations.LOCATION)
                        .loggers("slf4j")
                        .load()
                        .migrate();
            }
            // an H2 file in this process (the embedded store, or one configured by URL): each commit must be found again
            // after a crash (H2NewestChunk), and so must the indexes of what did not commit (OneWriterAtATime)
            boolean h2File = singleProcess || url.startsWith("jdbc:h2:file:");
            Runnable committed = h2File ? H2NewestChunk.of(dataSource)::afterCommit : () -> { };
            committed.run(); // the migrations' commits too
            return new JdbcStore(dataSource, singleProcess, committed, h2File ? OneWriterAtATime.of(dataSource) : null, !timeoutInSession);
        } catch (RuntimeException e) {
            dataSource.close();
            throw e;
        }
    }

    /** Opens a store at a JDBC URL as it is, to read: no migration (for checks that must not change it). */
    static JdbcStore openReadOnly(String url, String user, String password) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(user);
        config.setPassword(password);
        config.setReadOnly(true);
        config.setMaximumPoolSize(2);
        config.setMinimumIdle(1);
        config.setPoolName("slipstream-store-check");
        return new JdbcStore(new HikariDataSource(config), true);
    }

    @Override
    public void close() {
        dataSource.close();
    }

    // --- transactions ---

    @Override
    public <T> T inTransaction(Function<Store, T> work) {
        if (transaction.get() != null) {
            return work.apply(this);
        }
        try {
            T result = jdbi.inTransaction(handle -> {
                transaction.set(handle);
                try {
                    return work.apply(this);
                } finally {
                    transaction.remove();
                    fencedAt.remove();
                }
            });
            committed.run();
            return result;
        } catch (StatementException e) {
            throw duplicateKeyAsConflict(e);
        } catch (JdbiException e) {
            throw connectionLost(e) ? unavailable(e) : e;
        } finally {
            leaveWriter(); // committed or rolled back
        }
    }

    private void leaveWriter() {
        if (oneWriter != null) {
            oneWriter.leave();
        }
    }

    private <T> T withHandle(Function<Handle, T> work) {
        try {
            Handle bound = transaction.get();
            if (bound != null) {
                return work.apply(bound);
            }
            try {
                T result = jdbi.withHandle(work::apply); // autocommit: a write is committed
                committed.run();
                return result;
            } finally {
                leaveWriter();
            }
        } catch (StatementException e) {
            throw duplicateKeyAsConflict(e);
        } catch (JdbiException e) {
            throw connectionLost(e) ? unavailable(e) : e;
        }
    }

    /** The timeout, in seconds, that a statement made on a connection of this store's pool has before JDBI sets one. */
    int sessionStatementTimeoutSeconds() {
        return withHandle(h -> {
            try (java.sql.Statement statement = h.getConnection().createStatement()) {
                return statement.getQueryTimeout();
            } catch (java.sql.SQLException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Override
    public void ping() {
        withHandle(h -> h.createQuery("SELECT 1").mapTo(Integer.class).one());
    }

    private static StoreUnavailableException unavailable(Exception e) {
        return new StoreUnavailableException("the store cannot be reached: " + rootMessage(e), e);
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
        return message.lines().findFirst().orElse("");
    }

    /**
     * A statement that failed because the connection did: SQL state class 08 (connection exception), 57P01-03 (the
     * server is shutting down or starting), a connection the pool could not give, 57014 a statement cancelled by its
     * timeout (the server stopped answering, or it waits on a lock that long), H2's timeouts (a lock waited for past
     * its lock timeout: under load, another transaction held the row that long). Everything else (a constraint, a
     * bug) stays what it is.
     */
    static boolean connectionLost(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof java.sql.SQLTransientConnectionException || cause instanceof java.sql.SQLNonTransientConnectionException
                    || cause instanceof java.sql.SQLRecoverableException || cause instanceof java.net.SocketException
                    || cause instanceof java.io.EOFException
                    || cause instanceof java.sql.SQLTimeoutException) { // H2: a lock waited for past its lock timeout
                return true;
            }
            if (cause instanceof SQLException sql && sql.getSQLState() != null) {
                String state = sql.getSQLState();
                if (state.startsWith("08") || state.startsWith("57P") || state.equals("57014")) {
                    return true;
                }
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return false;
    }

    /** Two writers creating the same row at once: the loser gets a conflict, like any lost compare-and-set. */
    private static RuntimeException duplicateKeyAsConflict(StatementException e) {
        if (connectionLost(e)) {
            return unavailable(e);
        }
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLException sql && "23505".equals(sql.getSQLState())) {
                return new ConflictException("it was created by someone else meanwhile: " + sql.getMessage().lines().findFirst().orElse(""));
            }
        }
        return e;
    }

    // --- documents ---

    @Override
    public Optional<StoredDocument> getDocument(Kind kind, String workspace, String name) {
        return withHandle(h -> h.createQuery("SELECT * FROM documents WHERE kind = :kind AND workspace = :workspace AND name = :name")
                .bind("kind", kind.name())
                .bind("workspace", workspaceKey(workspace))
                .bind("name", name)
                .map(JdbcStore::document)
                .findOne()).map(this::orThrow);
    }

    @Override
    public List<StoredDocument> listDocuments(Kind kind, Set<String> workspaces) {
        if (workspaces != null && workspaces.isEmpty()) {
            return List.of();
        }
        return withHandle(h -> {
            var query = h.createQuery("SELECT * FROM documents WHERE kind = :kind"
                    + (workspaces == null ? "" : kind == Kind.Workspace ? " AND name IN (<workspaces>)" : " AND workspace IN (<workspaces>)")
                    + " ORDER BY workspace, name");
            query.bind("kind", kind.name());
            if (workspaces != null) {
                query.bindList("workspaces", new ArrayList<>(workspaces));
            }
            return readable(query.map(JdbcStore::document).list());
        });
    }

    @Override
    public StoredDocument createDocument(Document<?> document, Instant now) {
        requireNotSecret(document.kind());
        return inTransaction(store -> withHandle(h -> {
            boolean exists = h.createQuery("SELECT COUNT(*) FROM documents WHERE kind = :kind AND workspace = :workspace AND name = :name")
                    .bind("kind", document.kind().name())
                    .bind("workspace", workspaceKey(document.workspace()))
                    .bind("name", document.name())
                    .mapTo(Long.class).one() > 0;
            if (exists) {
                throw new ConflictException(document.reference() + " already exists");
            }
            time(time(h.createUpdate("INSERT INTO documents (kind, workspace, name, version, body, schema_version, created_at, updated_at) "
                                    + "VALUES (:kind, :workspace, :name, 1, :body, :schemaVersion, :created, :updated)")
                            .bind("schemaVersion", StoredFormat.CURRENT)
                            .bind("kind", document.kind().name())
                            .bind("workspace", workspaceKey(document.workspace()))
                            .bind("name", document.name())
                            .bind("body", body(document)), "created", now), "updated", now)
                    .execute();
            syncMembers(h, document);
            return new StoredDocument(unversioned(document), 1, now, now);
        }));
    }

    @Override
    public StoredDocument updateDocument(Document<?> document, long expectedVersion, Instant now) {
        requireNotSecret(document.kind());
        return inTransaction(store -> withHandle(h -> {
            int updated = time(h.createUpdate("UPDATE documents SET body = :body, schema_version = :schemaVersion, version = version + 1, "
                            + "updated_at = :updated WHERE kind = :kind AND workspace = :workspace AND name = :name AND version = :version")
                    .bind("schemaVersion", StoredFormat.CURRENT)
                    .bind("kind", document.kind().name())
                    .bind("workspace", workspaceKey(document.workspace()))
                    .bind("name", document.name())
                    .bind("version", expectedVersion)
                    .bind("body", body(document)), "updated", now)
                    .execute();
            if (updated == 0) {
                throw new ConflictException(document.reference() + " is not at version " + expectedVersion
                        + " (it was changed or deleted meanwhile)");
            }
            syncMembers(h, document);
            return getDocument(document.kind(), document.workspace(), document.name()).orElseThrow();
        }));
    }

    @Override
    public void deleteDocument(Kind kind, String workspace, String name, long expectedVersion) {
        inTransaction(store -> withHandle(h -> {
            int deleted = h.createUpdate("DELETE FROM documents WHERE kind = :kind AND workspace = :workspace AND name = :name AND version = :version")
                    .bind("kind", kind.name())
                    .bind("workspace", workspaceKey(workspace))
                    .bind("name", name)
                    .bind("version", expectedVersion)
                    .execute();
            if (deleted == 0) {
                throw new ConflictException(kind + " " + name + " is not at version " + expectedVersion);
            }
            if (kind == Kind.Workspace) {
                h.createUpdate("DELETE FROM workspace_members WHERE workspace = :workspace").bind("workspace", name).execute();
            }
            if (kind == Kind.Job) {
                // A job made again under the same name starts its schedule afresh, without catching up on old times.
                h.createUpdate("DELETE FROM schedule_states WHERE workspace = :workspace AND job = :job")
                        .bind("workspace", workspace).bind("job", name).execute();
            }
            return null;
        }));
    }

    /** Secrets have a table of their own, with sealed values: a Secret document would hold them in clear. */
    private static void requireNotSecret(Kind kind) {
        if (kind == Kind.Secret) {
            throw new IllegalArgumentException("a Secret is stored with createSecret, sealed, never as a document");
        }
    }

    private static void syncMembers(Handle h, Document<?> document) {
        if (document.spec() instanceof WorkspaceSpec workspace) {
            h.createUpdate("DELETE FROM workspace_members WHERE workspace = :workspace").bind("workspace", document.name()).execute();
            for (String member : workspace.members()) {
                h.createUpdate("INSERT INTO workspace_members (workspace, user_name) VALUES (:workspace, :user)")
                        .bind("workspace", document.name())
                        .bind("user", member)
                        .execute();
            }
        }
    }

    @Override
    public Set<String> workspacesOf(String user) {
        return withHandle(h -> new TreeSet<>(h.createQuery("SELECT workspace FROM workspace_members WHERE user_name = :user")
                .bind("user", user)
                .mapTo(String.class)
                .list()));
    }

    private static String workspaceKey(String workspace) {
        return workspace == null ? "" : workspace;
    }

    private static String body(Document<?> document) {
        return SpecWriter.write(unversioned(document)).toString();
    }

    private static Document<?> unversioned(Document<?> document) {
        ObjectMeta meta = document.metadata();
        return meta.version() == null ? document : new Document<>(ObjectMeta.of(meta.name(), meta.workspace()), document.spec());
    }

    private static Read<StoredDocument> document(ResultSet rs, StatementContext ctx) throws SQLException {
        String workspace = rs.getString("workspace");
        String record = rs.getString("kind") + " " + (workspace.isEmpty() ? "" : workspace + "/") + rs.getString("name");
        String body = rs.getString("body");
        int schemaVersion = rs.getInt("schema_version");
        long version = rs.getLong("version");
        Instant created = instant(rs, "created_at");
        Instant updated = instant(rs, "updated_at");
        try {
            return new Read<>(new StoredDocument(StoredSpecs.read(Json.mapper().readTree(body), schemaVersion), version, created, updated), null);
        } catch (RuntimeException e) {
            return new Read<>(null, UnreadableRows.of(record, workspace.isEmpty() ? null : workspace, e));
        }
    }

    /** A row read into its record, or why it could not be: mappers never throw for one row, so a list goes on past it. */
    private record Read<T>(T value, UnreadableRecordException unreadable) {
    }

    private <T> T orThrow(Read<T> read) {
        if (read.unreadable() != null) {
            unreadable.report(read.unreadable());
            throw read.unreadable();
        }
        return read.value();
    }

    private <T> List<T> readable(List<Read<T>> reads) {
        List<T> values = new ArrayList<>(reads.size());
        for (Read<T> read : reads) {
            if (read.unreadable() != null) {
                unreadable.report(read.unreadable());
            } else {
                values.add(read.value());
            }
        }
        return values;
    }

    // --- tokens ---

    @Override
    public void createToken(TokenRecord token) {
        withHandle(h -> time(time(time(time(h.createUpdate("INSERT INTO tokens (id, hash, hash_scheme, user_name, admin, description, created_at, "
                                + "expires_at, revoked_at, last_used_at) VALUES (:id, :hash, :scheme, :user, :admin, :description, :created, :expires, "
                                + ":revoked, :lastUsed)")
                        .bind("id", token.id())
                        .bind("hash", token.hash())
                        .bind("scheme", token.hashScheme())
                        .bind("user", token.user())
                        .bind("admin", token.admin())
                        .bind("description", token.description()), "created", token.createdAt()), "expires", token.expiresAt()),
                "revoked", token.revokedAt()), "lastUsed", token.lastUsedAt())
                .execute());
    }

    @Override
    public Optional<TokenRecord> findTokenByHash(String hash) {
        return withHandle(h -> h.createQuery("SELECT * FROM tokens WHERE hash = :hash").bind("hash", hash).map(JdbcStore::token).findOne());
    }

    @Override
    public List<TokenRecord> listTokens() {
        return withHandle(h -> h.createQuery("SELECT * FROM tokens ORDER BY created_at, id").map(JdbcStore::token).list());
    }

    @Override
    public boolean revokeToken(String id, Instant at) {
        return withHandle(h -> time(h.createUpdate("UPDATE tokens SET revoked_at = :at WHERE id = :id AND revoked_at IS NULL")
                .bind("id", id), "at", at)
                .execute() > 0);
    }

    @Override
    public boolean hasAdminToken(Instant now) {
        return listTokens().stream().anyMatch(t -> t.admin() && t.isUsableAt(now));
    }

    @Override
    public boolean recordTokenUse(String id, Instant at, Instant unlessUsedSince) {
        return withHandle(h -> time(time(h.createUpdate("UPDATE tokens SET last_used_at = :at WHERE id = :id "
                        + "AND (last_used_at IS NULL OR last_used_at < :since)")
                .bind("id", id), "at", at), "since", unlessUsedSince)
                .execute() > 0);
    }

    @Override
    public boolean rehashToken(String id, String expectedHash, String hash, String hashScheme) {
        return withHandle(h -> h.createUpdate("UPDATE tokens SET hash = :hash, hash_scheme = :scheme WHERE id = :id AND hash = :expected")
                .bind("id", id)
                .bind("expected", expectedHash)
                .bind("hash", hash)
                .bind("scheme", hashScheme)
                .execute() > 0);
    }

    private static TokenRecord token(ResultSet rs, StatementContext ctx) throws SQLException {
        return new TokenRecord(rs.getString("id"), rs.getString("hash"), rs.getString("hash_scheme"), rs.getString("user_name"),
                rs.getBoolean("admin"), rs.getString("description"), instant(rs, "created_at"), instant(rs, "expires_at"),
                instant(rs, "revoked_at"), instant(rs, "last_used_at"));
    }

    // --- secrets ---

    @Override
    public Optional<SecretRecord> getSecret(String workspace, String name) {
        return withHandle(h -> h.createQuery("SELECT * FROM secrets WHERE workspace = :workspace AND name = :name")
                .bind("workspace", workspace)
                .bind("name", name)
                .map(JdbcStore::secret)
                .findOne());
    }

    @Override
    public List<SecretRecord> listSecrets(Set<String> workspaces) {
        if (workspaces != null && workspaces.isEmpty()) {
            return List.of();
        }
        return withHandle(h -> {
            var query = h.createQuery("SELECT * FROM secrets" + (workspaces == null ? "" : " WHERE workspace IN (<workspaces>)")
                    + " ORDER BY workspace, name");
            if (workspaces != null) {
                query.bindList("workspaces", new ArrayList<>(workspaces));
            }
            return query.map(JdbcStore::secret).list();
        });
    }

    @Override
    public SecretRecord createSecret(SecretRecord secret) {
        return inTransaction(store -> withHandle(h -> {
            boolean exists = h.createQuery("SELECT COUNT(*) FROM secrets WHERE workspace = :workspace AND name = :name")
                    .bind("workspace", secret.workspace())
                    .bind("name", secret.name())
                    .mapTo(Long.class).one() > 0;
            if (exists) {
                throw new ConflictException("Secret " + secret.workspace() + "/" + secret.name() + " already exists");
            }
            SecretRecord stored = new SecretRecord(secret.workspace(), secret.name(), secret.keyId(), secret.sealed(), 1, secret.createdAt(),
                    secret.updatedAt());
            time(time(h.createUpdate("INSERT INTO secrets (workspace, name, key_id, data, version, created_at, updated_at) "
                            + "VALUES (:workspace, :name, :keyId, :data, 1, :created, :updated)")
                    .bind("workspace", stored.workspace())
                    .bind("name", stored.name())
                    .bind("keyId", stored.keyId())
                    .bind("data", Json.mapper().writeValueAsString(stored.sealed())), "created", stored.createdAt()), "updated", stored.updatedAt())
                    .execute();
            return stored;
        }));
    }

    @Override
    public SecretRecord updateSecret(SecretRecord secret) {
        int updated = withHandle(h -> time(h.createUpdate("UPDATE secrets SET key_id = :keyId, data = :data, version = version + 1, "
                        + "updated_at = :updated WHERE workspace = :workspace AND name = :name AND version = :version")
                .bind("workspace", secret.workspace())
                .bind("name", secret.name())
                .bind("keyId", secret.keyId())
                .bind("data", Json.mapper().writeValueAsString(secret.sealed()))
                .bind("version", secret.version()), "updated", secret.updatedAt())
                .execute());
        if (updated == 0) {
            throw new ConflictException("Secret " + secret.workspace() + "/" + secret.name() + " is not at version " + secret.version()
                    + " (it was changed or deleted meanwhile)");
        }
        return new SecretRecord(secret.workspace(), secret.name(), secret.keyId(), secret.sealed(), secret.version() + 1, secret.createdAt(),
                secret.updatedAt());
    }

    @Override
    public void deleteSecret(String workspace, String name, long expectedVersion) {
        int deleted = withHandle(h -> h.createUpdate("DELETE FROM secrets WHERE workspace = :workspace AND name = :name AND version = :version")
                .bind("workspace", workspace)
                .bind("name", name)
                .bind("version", expectedVersion)
                .execute());
        if (deleted == 0) {
            throw new ConflictException("Secret " + workspace + "/" + name + " is not at version " + expectedVersion);
        }
    }

    private static SecretRecord secret(ResultSet rs, StatementContext ctx) throws SQLException {
        return new SecretRecord(rs.getString("workspace"), rs.getString("name"), rs.getString("key_id"),
                Json.mapper().readValue(rs.getString("data"), STRING_MAP), rs.getLong("version"), instant(rs, "created_at"),
                instant(rs, "updated_at"));
    }

    // --- server keys ---

    @Override
    public Optional<String> serverKeyId(String purpose) {
        return withHandle(h -> h.createQuery("SELECT key_id FROM server_keys WHERE purpose = :purpose").bind("purpose", purpose)
                .mapTo(String.class).findOne());
    }

    @Override
    public void registerServerKey(String purpose, String keyId, Instant at) {
        inTransaction(store -> withHandle(h -> {
            if (h.createQuery("SELECT COUNT(*) FROM server_keys WHERE purpose = :purpose").bind("purpose", purpose).mapTo(Long.class).one() > 0) {
                throw new ConflictException("a " + purpose + " key is registered already");
            }
            return time(h.createUpdate("INSERT INTO server_keys (purpose, key_id, created_at) VALUES (:purpose, :keyId, :at)")
                    .bind("purpose", purpose).bind("keyId", keyId), "at", at).execute();
        }));
    }

    @Override
    public void replaceServerKey(String purpose, String expectedKeyId, String keyId, Instant at) {
        int changed = withHandle(h -> time(h.createUpdate("UPDATE server_keys SET key_id = :keyId, created_at = :at "
                        + "WHERE purpose = :purpose AND key_id = :expected")
                .bind("purpose", purpose).bind("keyId", keyId).bind("expected", expectedKeyId), "at", at).execute());
        if (changed == 0) {
            throw new ConflictException("the " + purpose + " key is not " + expectedKeyId + " (it changed meanwhile)");
        }
    }

    // --- runs ---

    // --- leadership (its SQL: LeadershipRows) ---

    @Override
    public Leadership claimLeadership(String holder, String goneHolder, Instant now, java.time.Duration ttl) {
        try {
            return inTransaction(store -> withHandle(h -> {
                fencedAt.remove();
                return LeadershipRows.claim(h, holder, goneHolder, now, ttl, singleProcess);
            }));
        } catch (ConflictException e) {
            return leadership().orElseThrow(() -> e); // another replica's first claim won the race: it leads
        }
    }

    @Override
    public Optional<Leadership> leadership() {
        return withHandle(LeadershipRows::find);
    }

    @Override
    public void requireLeader(long epoch) {
        if (transaction.get() != null && Long.valueOf(epoch).equals(fencedAt.get())) {
            return; // this transaction holds the fence's row, locked at this epoch, until it ends
        }
        withHandle(h -> {
            Optional<Long> fence = transaction.get() == null ? LeadershipRows.fence(h) : LeadershipRows.lockedFence(h);
            long current = fence.orElse(0L);
            if (current != epoch) {
                throw new FencedException(epoch, current);
            }
            if (transaction.get() != null && fence.isPresent()) {
                fencedAt.set(epoch); // only a row that exists is locked
            }
            return null;
        });
    }

    @Override
    public Leadership advanceEpoch(String holder, long epoch, long past) {
        return inTransaction(store -> withHandle(h -> {
            fencedAt.remove(); // the row changes: a check in this transaction after this one reads it again
            return LeadershipRows.advance(h, holder, epoch, past);
        }));
    }

    @Override
    public void releaseLeadership(String holder, long epoch, Instant now) {
        withHandle(h -> LeadershipRows.release(h, holder, epoch, now));
    }

    @Override
    public RunRecord createRun(RunRecord run, RunEvent created) {
        return inTransaction(store -> withHandle(h -> {
            boolean exists = h.createQuery("SELECT COUNT(*) FROM runs WHERE id = :id").bind("id", run.id().value()).mapTo(Long.class).one() > 0;
            if (exists) {
                throw new ConflictException("run " + run.id() + " already exists");
            }
            RunRecord stored = run.withVersion(1);
            var insert = bindRun(h.createUpdate("INSERT INTO runs (id, workspace, job, job_version, state, reason, outcome, attempt, priority, spec, "
                    + "created_at, started_at, finished_at, cancel_requested_at, real_time_resources, reclaim_for, capacity_reclaimed, preemptions, overrides, schedule_time, "
                    + "idempotency_key, submitted_by, labels, attempt_started_at, prior_runtime_millis, faults, schema_version, active, version) "
                    + "VALUES (:id, :workspace, :job, :jobVersion, :state, :reason, :outcome, :attempt, :priority, :spec, :created, :started, "
                    + ":finished, :cancelRequested, :realTimeResources, :reclaimFor, :capacityReclaimed, :preemptions, :overrides, :scheduleTime, :idempotencyKey, "
                    + ":submittedBy, :labels, :attemptStarted, :priorRuntime, :faults, :schemaVersion, :active, :version)"), stored)
                    .bind("schemaVersion", StoredFormat.CURRENT)
                    .bind("workspace", run.workspace())
                    .bind("job", run.job())
                    .bind("jobVersion", run.jobVersion())
                    .bind("priority", run.priority())
                    .bind("spec", runSpec(run))
                    .bind("overrides", Json.mapper().writeValueAsString(run.origin().overrides()))
                    .bind("idempotencyKey", run.origin().idempotencyKey())
                    .bind("submittedBy", run.origin().submittedBy())
                    .bind("labels", run.origin().labels().isEmpty() ? null : Json.mapper().writeValueAsString(run.origin().labels()));
            time(insert, "scheduleTime", run.origin().scheduleTime()).execute();
            if (!run.origin().labels().isEmpty()) {
                var labels = h.prepareBatch("INSERT INTO run_labels (run_id, label_key, label_value) VALUES (:id, :key, :value)");
                run.origin().labels().forEach((key, value) -> labels.bind("id", run.id().value()).bind("key", key).bind("value", value).add());
                labels.execute();
            }
            appendEvent(created);
            return stored;
        }));
    }

    @Override
    public Optional<RunRecord> getRun(RunId id) {
        return withHandle(h -> h.createQuery("SELECT * FROM runs WHERE id = :id").bind("id", id.value()).map(JdbcStore::run).findOne())
                .map(this::orThrowRun);
    }

    @Override
    public List<RunRecord> listRuns(RunQuery query) {
        return runs(listRunRows(query));
    }

    @Override
    public List<RunRow> listRunRows(RunQuery query) {
        if (query.workspaces() != null && query.workspaces().isEmpty()) {
            return List.of();
        }
        StringBuilder sql = new StringBuilder("SELECT * FROM runs WHERE 1 = 1");
        if (query.workspaces() != null) {
            sql.append(" AND workspace IN (<workspaces>)");
        }
        if (query.workspace() != null) {
            sql.append(" AND workspace = :workspace");
        }
        if (query.job() != null) {
            sql.append(" AND job = :job");
        }
        if (!query.states().isEmpty()) {
            sql.append(" AND state IN (<states>)");
        }
        if (query.before() != null) {
            sql.append(" AND (created_at < :beforeTime OR (created_at = :beforeTime AND id < :beforeId))");
        }
        if (query.createdAfter() != null) {
            sql.append(" AND created_at >= :createdAfter");
        }
        if (query.createdBefore() != null) {
            sql.append(" AND created_at < :createdBefore");
        }
        return withHandle(h -> {
            Map<Integer, Long> labelled = LabelSql.counts(h, query.selector());
            if (labelled.containsValue(0L)) {
                return List.<RunRow>of(); // no run has a label the selector requires
            }
            StringBuilder statement = new StringBuilder(sql);
            LabelSql.where(query.selector(), LabelSql.plan(query.selector(), labelled), statement);
            statement.append(" ORDER BY created_at DESC, id DESC LIMIT :limit");
            var q = h.createQuery(statement.toString()).bind("limit", query.limit());
            if (query.workspaces() != null) {
                q.bindList("workspaces", new ArrayList<>(new TreeSet<>(query.workspaces())));
            }
            if (query.workspace() != null) {
                q.bind("workspace", query.workspace());
            }
            if (query.job() != null) {
                q.bind("job", query.job());
            }
            if (!query.states().isEmpty()) {
                q.bindList("states", query.states().stream().map(Enum::name).sorted().collect(Collectors.toList()));
            }
            if (query.before() != null) {
                time(q, "beforeTime", Instant.ofEpochMilli(query.before().createdAtMillis())).bind("beforeId", query.before().id());
            }
            if (query.createdAfter() != null) {
                time(q, "createdAfter", query.createdAfter());
            }
            if (query.createdBefore() != null) {
                time(q, "createdBefore", query.createdBefore());
            }
            LabelSql.bind(query.selector(), q);
            return q.map(JdbcStore::run).list();
        });
    }

    @Override
    public List<RunRecord> activeRuns() {
        return runs(withHandle(h -> h.createQuery("SELECT * FROM runs WHERE active = TRUE ORDER BY created_at, id").map(JdbcStore::run).list()));
    }

    @Override
    public RunRecord updateRun(RunRecord run) {
        RunRecord next = run.withVersion(run.version() + 1);
        int updated = withHandle(h -> bindRun(h.createUpdate("UPDATE runs SET state = :state, reason = :reason, outcome = :outcome, "
                + "attempt = :attempt, started_at = :started, finished_at = :finished, cancel_requested_at = :cancelRequested, "
                + "real_time_resources = :realTimeResources, reclaim_for = :reclaimFor, capacity_reclaimed = :capacityReclaimed, preemptions = :preemptions, "
                + "attempt_started_at = :attemptStarted, prior_runtime_millis = :priorRuntime, faults = :faults, "
                + "active = :active, version = :version WHERE id = :id AND version = :expected"), next)
                .bind("expected", run.version())
                .execute());
        if (updated == 0) {
            throw new ConflictException("run " + run.id() + " is not at version " + run.version());
        }
        return next;
    }

    private static <S extends SqlStatement<S>> S bindRun(S statement, RunRecord run) {
        statement.bind("id", run.id().value())
                .bind("state", run.state().name())
                .bind("reason", truncate(run.reason(), 1024))
                .bind("outcome", run.outcome() == null ? null : run.outcome().name())
                .bind("attempt", run.attempt())
                .bind("realTimeResources", run.realTimeResources() == null ? null : run.realTimeResources().name())
                .bind("reclaimFor", run.reclaimFor() == null ? null : run.reclaimFor().value())
                .bind("capacityReclaimed", run.capacityReclaimed())
                .bind("preemptions", run.preemptions())
                .bind("priorRuntime", run.priorRuntimeMillis())
                .bind("faults", run.faults().equals(FaultState.NONE) ? null : Json.mapper().writeValueAsString(run.faults()))
                .bind("active", !run.state().isFinal())
                .bind("version", run.version());
        time(statement, "created", run.createdAt());
        time(statement, "started", run.startedAt());
        time(statement, "finished", run.finishedAt());
        time(statement, "attemptStarted", run.attemptStartedAt());
        return time(statement, "cancelRequested", run.cancelRequestedAt());
    }

    private static String runSpec(RunRecord run) {
        return SpecWriter.write(new Document<>(ObjectMeta.of(run.job(), run.workspace()), run.spec())).toString();
    }

    /** A run's row, read or with why it cannot be (what it tells beside that: its id, workspace, job, state, creation). */
    private static RunRow run(ResultSet rs, StatementContext ctx) throws SQLException {
        try {
            return new RunRow.Readable(readRun(rs));
        } catch (RuntimeException e) {
            RunId id = new RunId(rs.getString("id"));
            String workspace = rs.getString("workspace");
            return new RunRow.Unreadable(id, workspace, rs.getString("job"), rs.getString("state"), instant(rs, "created_at"),
                    UnreadableRows.of("run " + id, workspace, e).why());
        }
    }

    private static Read<RunRecord> read(RunRow row) {
        if (row instanceof RunRow.Readable readable) {
            return new Read<>(readable.run(), null);
        }
        RunRow.Unreadable unreadable = (RunRow.Unreadable) row;
        return new Read<>(null, new UnreadableRecordException("run " + unreadable.id(), unreadable.workspace(), unreadable.error(), null));
    }

    private RunRecord orThrowRun(RunRow row) {
        return orThrow(read(row));
    }

    private List<RunRecord> runs(List<RunRow> rows) {
        return readable(rows.stream().map(JdbcStore::read).toList());
    }

    private static RunRecord readRun(ResultSet rs) throws SQLException {
        JobSpec spec = StoredSpecs.readJob(Json.mapper().readTree(rs.getString("spec")), rs.getInt("schema_version"));
        String outcome = rs.getString("outcome");
        String where = rs.getString("real_time_resources");
        String reclaimFor = rs.getString("reclaim_for");
        return new RunRecord(new RunId(rs.getString("id")), rs.getString("workspace"), rs.getString("job"), rs.getLong("job_version"),
                RunState.valueOf(rs.getString("state")), rs.getString("reason"), outcome == null ? null : RunState.valueOf(outcome),
                rs.getInt("attempt"), rs.getInt("priority"), spec, instant(rs, "created_at"), instant(rs, "started_at"),
                instant(rs, "finished_at"), instant(rs, "cancel_requested_at"), where == null ? null : RealTimeResources.valueOf(where),
                reclaimFor == null ? null : new RunId(reclaimFor), rs.getBoolean("capacity_reclaimed"), origin(rs), instant(rs, "attempt_started_at"),
                rs.getLong("prior_runtime_millis"), faults(rs.getString("faults")).withPreemptionsAtLeast(rs.getInt("preemptions")),
                rs.getLong("version"));
    }

    private static FaultState faults(String json) {
        return json == null ? FaultState.NONE : STORED.readValue(json, FaultState.class);
    }

    private static RunOrigin origin(ResultSet rs) throws SQLException {
        String overrides = rs.getString("overrides");
        String labels = rs.getString("labels");
        return new RunOrigin(overrides == null ? Map.of() : Json.mapper().readValue(overrides, STRING_MAP), instant(rs, "schedule_time"),
                rs.getString("idempotency_key"), rs.getString("submitted_by"), labels == null ? Map.of() : Json.mapper().readValue(labels, STRING_MAP));
    }

    @Override
    public Optional<RunRecord> findRunByIdempotencyKey(String workspace, String key) {
        return withHandle(h -> h.createQuery("SELECT * FROM runs WHERE workspace = :workspace AND idempotency_key = :key")
                .bind("workspace", workspace)
                .bind("key", key)
                .map(JdbcStore::run)
                .findOne()).map(this::orThrowRun);
    }

    @Override
    public void releaseIdempotencyKey(RunId id) {
        withHandle(h -> h.createUpdate("UPDATE runs SET idempotency_key = NULL WHERE id = :id").bind("id", id.value()).execute());
    }

    @Override
    public List<RunRecord> finishedBefore(Instant cutoff, int limit) {
        return runs(withHandle(h -> time(h.createQuery("SELECT * FROM runs WHERE active = FALSE AND finished_at < :cutoff ORDER BY finished_at, id LIMIT :limit")
                .bind("limit", limit), "cutoff", cutoff)
                .map(JdbcStore::run)
                .list()));
    }

    @Override
    public void deleteRun(RunId id) {
        inTransaction(tx -> withHandle(h -> {
            int deleted = h.createUpdate("DELETE FROM runs WHERE id = :id AND active = FALSE").bind("id", id.value()).execute();
            if (deleted == 0) {
                throw new ConflictException("run " + id + " is not finished (or does not exist): only finished runs are removed");
            }
            h.createUpdate("DELETE FROM instances WHERE run_id = :id").bind("id", id.value()).execute();
            h.createUpdate("DELETE FROM run_events WHERE run_id = :id").bind("id", id.value()).execute();
            h.createUpdate("DELETE FROM run_labels WHERE run_id = :id").bind("id", id.value()).execute();
            return null;
        }));
    }

    @Override
    public void markNodeDown(NodeDown down) {
        withHandle(h -> {
            boolean exists = h.createQuery("SELECT COUNT(*) FROM nodes_down WHERE node = :node").bind("node", down.node())
                    .mapTo(Long.class).one() > 0;
            if (!exists) {
                time(h.createUpdate("INSERT INTO nodes_down (node, reason, since) VALUES (:node, :reason, :since)")
                        .bind("node", down.node()).bind("reason", truncate(down.reason(), 1024)), "since", down.since()).execute();
            }
            return null;
        });
    }

    @Override
    public boolean markNodeUp(String node) {
        return withHandle(h -> h.createUpdate("DELETE FROM nodes_down WHERE node = :node").bind("node", node).execute()) > 0;
    }

    @Override
    public void recordUsage(List<UsageChange> changes) {
        if (!changes.isEmpty()) {
            inTransaction(store -> withHandle(h -> {
                UsageRows.record(h, changes);
                return null;
            }));
        }
    }

    @Override
    public List<UsageTotal> usage(UsageQuery query) {
        return withHandle(h -> UsageRows.totals(h, query));
    }

    @Override
    public Map<QuotaId, Resources> lending() {
        return withHandle(UsageRows::lending);
    }

    @Override
    public Map<String, NodeDown> downNodes() {
        return withHandle(h -> h.createQuery("SELECT * FROM nodes_down ORDER BY node")
                .map((rs, ctx) -> new NodeDown(rs.getString("node"), rs.getString("reason"), instant(rs, "since")))
                .list()).stream().collect(Collectors.toMap(NodeDown::node, d -> d, (a, b) -> a, java.util.TreeMap::new));
    }

    @Override
    public Optional<Instant> lastScheduled(String workspace, String job) {
        return withHandle(h -> h.createQuery("SELECT last_due FROM schedule_states WHERE workspace = :workspace AND job = :job")
                .bind("workspace", workspace)
                .bind("job", job)
                .map((rs, ctx) -> instant(rs, "last_due"))
                .findOne());
    }

    @Override
    public void recordScheduled(String workspace, String job, Instant expectedLastDue, Instant due) {
        withHandle(h -> {
            int changed;
            if (expectedLastDue == null) {
                boolean exists = h.createQuery("SELECT COUNT(*) FROM schedule_states WHERE workspace = :workspace AND job = :job")
                        .bind("workspace", workspace).bind("job", job).mapTo(Long.class).one() > 0;
                if (exists) {
                    throw new ConflictException("the schedule of " + workspace + "/" + job + " fired meanwhile");
                }
                changed = time(h.createUpdate("INSERT INTO schedule_states (workspace, job, last_due) VALUES (:workspace, :job, :due)")
                        .bind("workspace", workspace).bind("job", job), "due", due).execute();
            } else {
                changed = time(time(h.createUpdate("UPDATE schedule_states SET last_due = :due WHERE workspace = :workspace AND job = :job "
                                + "AND last_due = :expected AND last_due < :due")
                        .bind("workspace", workspace).bind("job", job), "due", due), "expected", expectedLastDue).execute();
            }
            if (changed == 0) {
                throw new ConflictException("the schedule of " + workspace + "/" + job + " fired meanwhile");
            }
            return null;
        });
    }

    // --- instances ---

    @Override
    public List<InstanceRecord> createInstances(List<InstanceRecord> instances) {
        return inTransaction(store -> withHandle(h -> {
            List<InstanceRecord> stored = new ArrayList<>();
            for (InstanceRecord instance : instances) {
                InstanceRecord next = instance.withVersion(1);
                bindInstance(h.createUpdate("INSERT INTO instances (run_id, attempt, instance_rank, node_group, group_rank, node, gpus, "
                        + "state, exit_code, reason, handle, started_at, finished_at, endpoint, ready_at, stop_requested_at, probe_failure, "
                        + "launch_failure, restarts, active, version) VALUES (:runId, :attempt, :rank, :nodeGroup, :groupRank, :node, :gpus, :state, "
                        + ":exitCode, :reason, :handle, :started, :finished, :endpoint, :ready, :stopRequested, :probeFailure, :launchFailure, "
                        + ":restarts, :active, :version)"),
                        next).execute();
                stored.add(next);
            }
            return stored;
        }));
    }

    @Override
    public List<InstanceRecord> instancesOf(RunId runId) {
        return withHandle(h -> h.createQuery("SELECT * FROM instances WHERE run_id = :runId ORDER BY attempt, instance_rank")
                .bind("runId", runId.value())
                .map(JdbcStore::instance)
                .list());
    }

    @Override
    public Optional<InstanceRecord> getInstance(InstanceId id) {
        return withHandle(h -> h.createQuery("SELECT * FROM instances WHERE run_id = :runId AND attempt = :attempt AND instance_rank = :rank")
                .bind("runId", id.runId().value())
                .bind("attempt", id.attempt())
                .bind("rank", id.rank())
                .map(JdbcStore::instance)
                .findOne());
    }

    @Override
    public List<InstanceRecord> instancesOfActiveRuns() {
        return withHandle(h -> h.createQuery("SELECT i.* FROM instances i JOIN runs r ON r.id = i.run_id AND r.attempt = i.attempt "
                        + "WHERE r.active = TRUE ORDER BY i.run_id, i.instance_rank")
                .map(JdbcStore::instance)
                .list());
    }

    @Override
    public List<InstanceRecord> activeInstances() {
        return withHandle(h -> h.createQuery("SELECT * FROM instances WHERE active = TRUE ORDER BY run_id, attempt, instance_rank")
                .map(JdbcStore::instance)
                .list());
    }

    @Override
    public InstanceRecord updateInstance(InstanceRecord instance) {
        InstanceRecord next = instance.withVersion(instance.version() + 1);
        int updated = withHandle(h -> bindInstance(h.createUpdate("UPDATE instances SET node = :node, gpus = :gpus, state = :state, "
                + "exit_code = :exitCode, reason = :reason, handle = :handle, started_at = :started, finished_at = :finished, "
                + "endpoint = :endpoint, ready_at = :ready, stop_requested_at = :stopRequested, probe_failure = :probeFailure, "
                + "launch_failure = :launchFailure, restarts = :restarts, active = :active, version = :version "
                + "WHERE run_id = :runId AND attempt = :attempt AND instance_rank = :rank AND version = :expected"), next)
                .bind("expected", instance.version())
                .execute());
        if (updated == 0) {
            throw new ConflictException("instance " + instance.id() + " is not at version " + instance.version());
        }
        return next;
    }

    private static <S extends SqlStatement<S>> S bindInstance(S statement, InstanceRecord instance) {
        statement.bind("runId", instance.id().runId().value())
                .bind("attempt", instance.id().attempt())
                .bind("rank", instance.id().rank())
                .bind("nodeGroup", instance.nodeGroup())
                .bind("groupRank", instance.groupRank())
                .bind("node", instance.node())
                .bind("gpus", instance.gpus().stream().map(String::valueOf).collect(Collectors.joining(",")))
                .bind("state", instance.state().name())
                .bind("reason", truncate(instance.reason(), 1024))
                .bind("handle", Json.mapper().writeValueAsString(new LinkedHashMap<>(instance.handle())))
                .bind("endpoint", instance.endpoint() == null ? null : Json.mapper().writeValueAsString(instance.endpoint()))
                .bind("probeFailure", truncate(instance.probeFailure(), 1024))
                .bind("launchFailure", instance.launchFailure() == null ? null : instance.launchFailure().name())
                .bind("restarts", instance.restarts())
                .bind("active", !instance.state().isFinal())
                .bind("version", instance.version());
        if (instance.exitCode() == null) {
            statement.bindNull("exitCode", Types.INTEGER);
        } else {
            statement.bind("exitCode", instance.exitCode());
        }
        time(statement, "started", instance.startedAt());
        time(statement, "ready", instance.readyAt());
        time(statement, "stopRequested", instance.stopRequestedAt());
        return time(statement, "finished", instance.finishedAt());
    }

    private static InstanceRecord instance(ResultSet rs, StatementContext ctx) throws SQLException {
        String gpus = rs.getString("gpus");
        int exitCode = rs.getInt("exit_code");
        Integer exit = rs.wasNull() ? null : exitCode;
        return new InstanceRecord(
                new InstanceId(new RunId(rs.getString("run_id")), rs.getInt("attempt"), rs.getInt("instance_rank")),
                rs.getString("node_group"), rs.getInt("group_rank"), rs.getString("node"),
                gpus.isEmpty() ? List.of() : Arrays.stream(gpus.split(",")).map(Integer::valueOf).toList(),
                InstanceState.valueOf(rs.getString("state")), exit, rs.getString("reason"),
                Json.mapper().readValue(rs.getString("handle"), STRING_MAP),
                instant(rs, "started_at"), instant(rs, "finished_at"),
                rs.getString("endpoint") == null ? null : STORED.readValue(rs.getString("endpoint"), Endpoint.class),
                instant(rs, "ready_at"), instant(rs, "stop_requested_at"), rs.getString("probe_failure"),
                rs.getString("launch_failure") == null ? null : LaunchFailure.valueOf(rs.getString("launch_failure")), rs.getInt("restarts"),
                rs.getLong("version"));
    }

    // --- events ---

    @Override
    public RunEvent appendEvent(RunEvent event) {
        long seq = withHandle(h -> time(h.createUpdate("INSERT INTO run_events (run_id, event_time, type, state, reason, message, instance) "
                        + "VALUES (:runId, :time, :type, :state, :reason, :message, :instance)")
                .bind("runId", event.runId().value())
                .bind("type", event.type().name())
                .bind("state", event.state())
                .bind("reason", truncate(event.reason(), 1024))
                .bind("message", truncate(event.message(), 4096))
                .bind("instance", event.instance()), "time", event.time())
                .executeAndReturnGeneratedKeys("seq")
                .mapTo(Long.class)
                .one());
        return new RunEvent(seq, event.runId(), event.time(), event.type(), event.state(), event.reason(), event.message(), event.instance());
    }

    @Override
    public List<RunEvent> eventsOf(RunId runId, long afterSeq, int limit) {
        return withHandle(h -> h.createQuery("SELECT * FROM run_events WHERE run_id = :runId AND seq > :after ORDER BY seq LIMIT :limit")
                .bind("runId", runId.value())
                .bind("after", afterSeq)
                .bind("limit", limit)
                .map((rs, ctx) -> new RunEvent(rs.getLong("seq"), new RunId(rs.getString("run_id")), instant(rs, "event_time"),
                        EventType.valueOf(rs.getString("type")), rs.getString("state"), rs.getString("reason"), rs.getString("message"),
                        rs.getString("instance")))
                .list());
    }

    // --- helpers ---

    static <S extends SqlStatement<S>> S time(S statement, String name, Instant instant) {
        if (instant == null) {
            return statement.bindNull(name, Types.TIMESTAMP_WITH_TIMEZONE);
        }
        return statement.bind(name, OffsetDateTime.ofInstant(instant, ZoneOffset.UTC));
    }

    static Instant instant(ResultSet rs, String column) throws SQLException {
        OffsetDateTime time = rs.getObject(column, OffsetDateTime.class);
        return time == null ? null : time.toInstant();
    }

    private static String truncate(String text, int max) {
        return text == null || text.length() <= max ? text : text.substring(0, max - 1) + "…";
    }
}
