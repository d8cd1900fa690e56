package io.slipstream.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.Resources;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.model.usage.UsageChange;
import io.slipstream.store.ConflictException;
import io.slipstream.store.Leadership;
import io.slipstream.store.NodeDown;
import io.slipstream.store.RunQuery;
import io.slipstream.store.RunRow;
import io.slipstream.store.SecretRecord;
import io.slipstream.store.Store;
import io.slipstream.store.StoredDocument;
import io.slipstream.store.TokenRecord;
import io.slipstream.store.UsageQuery;
import io.slipstream.store.UsageTotal;
import io.slipstream.store.jdbc.h2.EmbeddedH2;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * The {@link Store} on a JDBC database: H2 in file mode (the embedded default) or PostgreSQL. The schema comes from
 * versioned Flyway migrations that run unchanged on both. Each table's SQL is a {@code *Rows} class of static functions
 * over a JDBI handle ({@link RunRows}, {@link InstanceRows}, {@link LeadershipRows}, ...); this class only opens the
 * store, binds them to its {@link Transactions} (a method called inside {@link #inTransaction} joins it; a write of
 * several statements is one transaction of its own) and turns unreadable rows into the SPI's answers
 * ({@link UnreadableRows}). An H2 file in this process is hardened by {@link io.slipstream.store.jdbc.h2}.
 */
public final class JdbcStore implements Store {
    private final HikariDataSource dataSource;
    /** Only one process can open this store (the embedded H2 file is locked): a previous leader cannot be alive. */
    private final boolean singleProcess;
    private final Transactions transactions;
    private final UnreadableRows unreadable = new UnreadableRows();

    JdbcStore(HikariDataSource dataSource, boolean singleProcess, Transactions transactions) {
        this.dataSource = dataSource;
        this.singleProcess = singleProcess;
        this.transactions = transactions;
    }

    /** Opens the embedded H2 store under {@code dataDir} ({@link EmbeddedH2}: its settings, and the checks at open). */
    public static JdbcStore openH2(Path dataDir) {
        return Opening.embedded(dataDir);
    }

    /** The JDBC URL of the embedded H2 store under {@code dataDir} (user {@code sa}, no password). */
    public static String h2Url(Path dataDir) {
        return EmbeddedH2.url(EmbeddedH2.directory(dataDir));
    }

    /** Opens a store at a JDBC URL ({@code jdbc:h2:...} or {@code jdbc:postgresql://...}) and migrates its schema. */
    public static JdbcStore open(String url, String user, String password) {
        return Opening.open(url, user, password, false);
    }

    @Override
    public void close() {
        dataSource.close();
    }

    @Override
    public <T> T inTransaction(Function<Store, T> work) {
        return transactions.inTransaction(() -> work.apply(this));
    }

    /** The timeout, in seconds, that a statement made on a connection of this store's pool has before JDBI sets one. */
    int sessionStatementTimeoutSeconds() {
        return transactions.withHandle(h -> {
            try (java.sql.Statement statement = h.getConnection().createStatement()) {
                return statement.getQueryTimeout();
            } catch (java.sql.SQLException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Override
    public void ping() {
        transactions.withHandle(h -> h.createQuery("SELECT 1").mapTo(Integer.class).one());
    }

    // --- documents ---

    @Override
    public Optional<StoredDocument> getDocument(Kind kind, String workspace, String name) {
        return transactions.withHandle(h -> DocumentRows.get(h, kind, workspace, name)).map(unreadable::orThrow);
    }

    @Override
    public List<StoredDocument> listDocuments(Kind kind, Set<String> workspaces) {
        return none(workspaces) ? List.of() : unreadable.readable(transactions.withHandle(h -> DocumentRows.list(h, kind, workspaces)));
    }

    @Override
    public StoredDocument createDocument(Document<?> document, Instant now) {
        return transactions.atomically(h -> DocumentRows.create(h, document, now));
    }

    @Override
    public StoredDocument updateDocument(Document<?> document, long expectedVersion, Instant now) {
        return transactions.atomically(h -> unreadable.orThrow(DocumentRows.update(h, document, expectedVersion, now)));
    }

    @Override
    public void deleteDocument(Kind kind, String workspace, String name, long expectedVersion) {
        transactions.atomically(h -> run(() -> DocumentRows.delete(h, kind, workspace, name, expectedVersion)));
    }

    @Override
    public Set<String> workspacesOf(String user) {
        return transactions.withHandle(h -> DocumentRows.workspacesOf(h, user));
    }

    // --- tokens ---

    @Override
    public void createToken(TokenRecord token) {
        transactions.withHandle(h -> run(() -> TokenRows.create(h, token)));
    }

    @Override
    public Optional<TokenRecord> findTokenByHash(String hash) {
        return transactions.withHandle(h -> TokenRows.findByHash(h, hash));
    }

    @Override
    public List<TokenRecord> listTokens() {
        return transactions.withHandle(TokenRows::list);
    }

    @Override
    public boolean revokeToken(String id, Instant at) {
        return transactions.withHandle(h -> TokenRows.revoke(h, id, at));
    }

    @Override
    public boolean hasAdminToken(Instant now) {
        return transactions.withHandle(h -> TokenRows.hasAdmin(h, now));
    }

    @Override
    public boolean recordTokenUse(String id, Instant at, Instant unlessUsedSince) {
        return transactions.withHandle(h -> TokenRows.recordUse(h, id, at, unlessUsedSince));
    }

    @Override
    public boolean rehashToken(String id, String expectedHash, String hash, String hashScheme) {
        return transactions.withHandle(h -> TokenRows.rehash(h, id, expectedHash, hash, hashScheme));
    }

    // --- secrets ---

    @Override
    public Optional<SecretRecord> getSecret(String workspace, String name) {
        return transactions.withHandle(h -> SecretRows.get(h, workspace, name));
    }

    @Override
    public List<SecretRecord> listSecrets(Set<String> workspaces) {
        return none(workspaces) ? List.of() : transactions.withHandle(h -> SecretRows.list(h, workspaces));
    }

    @Override
    public SecretRecord createSecret(SecretRecord secret) {
        return transactions.atomically(h -> SecretRows.create(h, secret));
    }

    @Override
    public SecretRecord updateSecret(SecretRecord secret) {
        return transactions.withHandle(h -> SecretRows.update(h, secret));
    }

    @Override
    public void deleteSecret(String workspace, String name, long expectedVersion) {
        transactions.withHandle(h -> run(() -> SecretRows.delete(h, workspace, name, expectedVersion)));
    }

    // --- server keys ---

    @Override
    public Optional<String> serverKeyId(String purpose) {
        return transactions.withHandle(h -> ServerKeyRows.keyId(h, purpose));
    }

    @Override
    public void registerServerKey(String purpose, String keyId, Instant at) {
        transactions.atomically(h -> run(() -> ServerKeyRows.register(h, purpose, keyId, at)));
    }

    @Override
    public void replaceServerKey(String purpose, String expectedKeyId, String keyId, Instant at) {
        transactions.withHandle(h -> run(() -> ServerKeyRows.replace(h, purpose, expectedKeyId, keyId, at)));
    }

    // --- leadership ---

    @Override
    public Leadership claimLeadership(String holder, String goneHolder, Instant now, Duration ttl) {
        try {
            return transactions.atomically(h -> {
                transactions.fenceChanges();
                return LeadershipRows.claim(h, holder, goneHolder, now, ttl, singleProcess);
            });
        } catch (ConflictException e) {
            return leadership().orElseThrow(() -> e); // another replica's first claim won the race: it leads
        }
    }

    @Override
    public Optional<Leadership> leadership() {
        return transactions.withHandle(LeadershipRows::find);
    }

    @Override
    public void requireLeader(long epoch) {
        transactions.requireFence(epoch);
    }

    @Override
    public Leadership advanceEpoch(String holder, long epoch, long past) {
        return transactions.atomically(h -> {
            transactions.fenceChanges(); // a check in this transaction after this one reads the row again
            return LeadershipRows.advance(h, holder, epoch, past);
        });
    }

    @Override
    public void releaseLeadership(String holder, long epoch, Instant now) {
        transactions.withHandle(h -> LeadershipRows.release(h, holder, epoch, now));
    }

    // --- runs ---

    @Override
    public RunRecord createRun(RunRecord run, RunEvent created) {
        return transactions.atomically(h -> RunRows.create(h, run, created));
    }

    @Override
    public Optional<RunRecord> getRun(RunId id) {
        return transactions.withHandle(h -> RunRows.get(h, id)).map(unreadable::orThrow);
    }

    @Override
    public List<RunRecord> listRuns(RunQuery query) {
        return unreadable.readableRuns(listRunRows(query));
    }

    @Override
    public List<RunRow> listRunRows(RunQuery query) {
        return none(query.workspaces()) ? List.of() : transactions.withHandle(h -> RunRows.list(h, query));
    }

    @Override
    public List<RunRecord> activeRuns() {
        return unreadable.readableRuns(transactions.withHandle(RunRows::active));
    }

    @Override
    public RunRecord updateRun(RunRecord run) {
        return transactions.withHandle(h -> RunRows.update(h, run));
    }

    @Override
    public Optional<RunRecord> findRunByIdempotencyKey(String workspace, String key) {
        return transactions.withHandle(h -> RunRows.findByIdempotencyKey(h, workspace, key)).map(unreadable::orThrow);
    }

    @Override
    public void releaseIdempotencyKey(RunId id) {
        transactions.withHandle(h -> run(() -> RunRows.releaseIdempotencyKey(h, id)));
    }

    @Override
    public List<RunRecord> finishedBefore(Instant cutoff, int limit) {
        return unreadable.readableRuns(transactions.withHandle(h -> RunRows.finishedBefore(h, cutoff, limit)));
    }

    @Override
    public void deleteRun(RunId id) {
        transactions.atomically(h -> run(() -> RunRows.delete(h, id)));
    }

    @Override
    public Optional<Instant> lastScheduled(String workspace, String job) {
        return transactions.withHandle(h -> ScheduleRows.lastDue(h, workspace, job));
    }

    @Override
    public void recordScheduled(String workspace, String job, Instant expectedLastDue, Instant due) {
        transactions.withHandle(h -> run(() -> ScheduleRows.record(h, workspace, job, expectedLastDue, due)));
    }

    @Override
    public void markNodeDown(NodeDown down) {
        transactions.withHandle(h -> run(() -> NodeDownRows.markDown(h, down)));
    }

    @Override
    public boolean markNodeUp(String node) {
        return transactions.withHandle(h -> NodeDownRows.markUp(h, node));
    }

    @Override
    public Map<String, NodeDown> downNodes() {
        return transactions.withHandle(NodeDownRows::down);
    }

    // --- instances and events ---

    @Override
    public List<InstanceRecord> createInstances(List<InstanceRecord> instances) {
        return transactions.atomically(h -> InstanceRows.create(h, instances));
    }

    @Override
    public List<InstanceRecord> instancesOf(RunId runId) {
        return transactions.withHandle(h -> InstanceRows.of(h, runId));
    }

    @Override
    public Optional<InstanceRecord> getInstance(InstanceId id) {
        return transactions.withHandle(h -> InstanceRows.get(h, id));
    }

    @Override
    public List<InstanceRecord> instancesOfActiveRuns() {
        return transactions.withHandle(InstanceRows::ofActiveRuns);
    }

    @Override
    public List<InstanceRecord> activeInstances() {
        return transactions.withHandle(InstanceRows::active);
    }

    @Override
    public InstanceRecord updateInstance(InstanceRecord instance) {
        return transactions.withHandle(h -> InstanceRows.update(h, instance));
    }

    @Override
    public RunEvent appendEvent(RunEvent event) {
        return transactions.withHandle(h -> EventRows.append(h, event));
    }

    @Override
    public List<RunEvent> eventsOf(RunId runId, long afterSeq, int limit) {
        return transactions.withHandle(h -> EventRows.of(h, runId, afterSeq, limit));
    }

    // --- usage ---

    @Override
    public void recordUsage(List<UsageChange> changes) {
        if (!changes.isEmpty()) {
            transactions.atomically(h -> run(() -> UsageRows.record(h, changes)));
        }
    }

    @Override
    public List<UsageTotal> usage(UsageQuery query) {
        return transactions.withHandle(h -> UsageRows.totals(h, query));
    }

    @Override
    public Map<QuotaId, Resources> lending() {
        return transactions.withHandle(UsageRows::lending);
    }

    /** A query limited to no workspace answers nothing, without a connection (also while the database is away). */
    private static boolean none(Set<String> workspaces) {
        return workspaces != null && workspaces.isEmpty();
    }

    /** A write that answers nothing, as the value of a handle's work. */
    private static Void run(Runnable write) {
        write.run();
        return null;
    }
}
