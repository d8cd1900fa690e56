package io.slipstream.store.memory;

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
import io.slipstream.store.SecretRecord;
import io.slipstream.store.Store;
import io.slipstream.store.StoredDocument;
import io.slipstream.store.TokenRecord;
import io.slipstream.store.UsageQuery;
import io.slipstream.store.UsageSums;
import io.slipstream.store.UsageTotal;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * The {@link Store} in memory, for tests: nothing survives the process, and a test can cut it off
 * ({@link #simulateOutage}). It keeps every rule of the JDBC store ({@code JdbcStore}) that {@code BaseStoreContractTest}
 * holds both to: versions and {@link ConflictException}s, idempotency keys unique per workspace, events numbered by one
 * sequence, fields that never change after a create, text shortened where a column would, and times kept to the
 * microsecond (like a {@code TIMESTAMP WITH TIME ZONE} column).
 *
 * <p>Each table's rules are a {@code *Table} class of static functions over the {@link Tables} (as the JDBC store's
 * are {@code *Rows} classes over a handle); this class binds them to its {@link Snapshots}: readers never wait and
 * never see a transaction half done, writers take turns, a transaction works on a private copy published at its end.
 */
public final class InMemoryStore implements Store {
    /** How long a writer waits for another thread's transaction before it gives up. */
    public static final Duration LOCK_TIMEOUT = Duration.ofSeconds(10);

    private final Snapshots snapshots = new Snapshots();
    private final Leases leases = new Leases(snapshots);
    /** The events' sequence: numbers taken by a rolled-back transaction are not reused, as with a database sequence. */
    private final AtomicLong eventSeq = new AtomicLong();

    /**
     * Makes every call fail as a database outage would ({@code true}) or work again: for tests of what callers do
     * while the store cannot be reached. Nothing is lost meanwhile.
     */
    public void simulateOutage(boolean on) {
        snapshots.outage(on);
    }

    /** Lets {@code calls} more calls through, then fails every call as {@link #simulateOutage} does: an outage mid-work. */
    public void simulateOutageAfter(int calls) {
        snapshots.outageAfter(calls);
    }

    @Override
    public void close() {
        snapshots.close();
    }

    @Override
    public <T> T inTransaction(Function<Store, T> work) {
        return snapshots.inTransaction(() -> work.apply(this));
    }

    @Override
    public void ping() {
        snapshots.requireOpen();
    }

    // --- documents ---

    @Override
    public Optional<StoredDocument> getDocument(Kind kind, String workspace, String name) {
        return DocumentTable.get(snapshots.read(), kind, workspace, name);
    }

    @Override
    public List<StoredDocument> listDocuments(Kind kind, Set<String> workspaces) {
        return none(workspaces) ? List.of() : DocumentTable.list(snapshots.read(), kind, workspaces);
    }

    @Override
    public StoredDocument createDocument(Document<?> document, Instant now) {
        DocumentTable.requireNotSecret(document.kind());
        return snapshots.write(t -> DocumentTable.create(t, document, now));
    }

    @Override
    public StoredDocument updateDocument(Document<?> document, long expectedVersion, Instant now) {
        DocumentTable.requireNotSecret(document.kind());
        return snapshots.write(t -> DocumentTable.update(t, document, expectedVersion, now));
    }

    @Override
    public void deleteDocument(Kind kind, String workspace, String name, long expectedVersion) {
        snapshots.write(t -> run(() -> DocumentTable.delete(t, kind, workspace, name, expectedVersion)));
    }

    @Override
    public Set<String> workspacesOf(String user) {
        return DocumentTable.workspacesOf(snapshots.read(), user);
    }

    // --- tokens ---

    @Override
    public void createToken(TokenRecord token) {
        snapshots.write(t -> run(() -> TokenTable.create(t, token)));
    }

    @Override
    public Optional<TokenRecord> findTokenByHash(String hash) {
        return TokenTable.findByHash(snapshots.read(), hash);
    }

    @Override
    public List<TokenRecord> listTokens() {
        return TokenTable.list(snapshots.read());
    }

    @Override
    public boolean revokeToken(String id, Instant at) {
        return snapshots.write(t -> TokenTable.revoke(t, id, at));
    }

    @Override
    public boolean hasAdminToken(Instant now) {
        return TokenTable.hasAdmin(snapshots.read(), now);
    }

    @Override
    public boolean recordTokenUse(String id, Instant at, Instant unlessUsedSince) {
        return snapshots.write(t -> TokenTable.recordUse(t, id, at, unlessUsedSince));
    }

    @Override
    public boolean rehashToken(String id, String expectedHash, String hash, String hashScheme) {
        return snapshots.write(t -> TokenTable.rehash(t, id, expectedHash, hash, hashScheme));
    }

    // --- secrets and server keys ---

    @Override
    public Optional<SecretRecord> getSecret(String workspace, String name) {
        return SecretTable.get(snapshots.read(), workspace, name);
    }

    @Override
    public List<SecretRecord> listSecrets(Set<String> workspaces) {
        return none(workspaces) ? List.of() : SecretTable.list(snapshots.read(), workspaces);
    }

    @Override
    public SecretRecord createSecret(SecretRecord secret) {
        return snapshots.write(t -> SecretTable.create(t, secret));
    }

    @Override
    public SecretRecord updateSecret(SecretRecord secret) {
        return snapshots.write(t -> SecretTable.update(t, secret));
    }

    @Override
    public void deleteSecret(String workspace, String name, long expectedVersion) {
        snapshots.write(t -> run(() -> SecretTable.delete(t, workspace, name, expectedVersion)));
    }

    @Override
    public Optional<String> serverKeyId(String purpose) {
        return ServerKeyTable.keyId(snapshots.read(), purpose);
    }

    @Override
    public void registerServerKey(String purpose, String keyId, Instant at) {
        snapshots.write(t -> run(() -> ServerKeyTable.register(t, purpose, keyId)));
    }

    @Override
    public void replaceServerKey(String purpose, String expectedKeyId, String keyId, Instant at) {
        snapshots.write(t -> run(() -> ServerKeyTable.replace(t, purpose, expectedKeyId, keyId)));
    }

    // --- leadership ---

    @Override
    public Leadership claimLeadership(String holder, String goneHolder, Instant now, Duration ttl) {
        return leases.claim(holder, goneHolder, now, ttl);
    }

    @Override
    public Optional<Leadership> leadership() {
        return leases.current();
    }

    @Override
    public void requireLeader(long epoch) {
        leases.requireLeader(epoch);
    }

    @Override
    public Leadership advanceEpoch(String holder, long epoch, long past) {
        return leases.advance(holder, epoch, past);
    }

    @Override
    public void releaseLeadership(String holder, long epoch, Instant now) {
        leases.release(holder, epoch, now);
    }

    // --- runs ---

    @Override
    public RunRecord createRun(RunRecord run, RunEvent created) {
        return snapshots.write(t -> RunTable.create(t, eventSeq, run, created));
    }

    @Override
    public Optional<RunRecord> getRun(RunId id) {
        return RunTable.get(snapshots.read(), id);
    }

    @Override
    public List<RunRecord> listRuns(RunQuery query) {
        return none(query.workspaces()) ? List.of() : RunTable.list(snapshots.read(), query);
    }

    @Override
    public List<RunRecord> activeRuns() {
        return RunTable.active(snapshots.read());
    }

    @Override
    public RunRecord updateRun(RunRecord run) {
        return snapshots.write(t -> RunTable.update(t, run));
    }

    @Override
    public Optional<RunRecord> findRunByIdempotencyKey(String workspace, String key) {
        return key == null ? Optional.empty() : RunTable.findByIdempotencyKey(snapshots.read(), workspace, key);
    }

    @Override
    public void releaseIdempotencyKey(RunId id) {
        snapshots.write(t -> run(() -> RunTable.releaseIdempotencyKey(t, id)));
    }

    @Override
    public List<RunRecord> finishedBefore(Instant cutoff, int limit) {
        return RunTable.finishedBefore(snapshots.read(), cutoff, limit);
    }

    @Override
    public void deleteRun(RunId id) {
        snapshots.write(t -> run(() -> RunTable.delete(t, id)));
    }

    @Override
    public Optional<Instant> lastScheduled(String workspace, String job) {
        return ScheduleTable.lastDue(snapshots.read(), workspace, job);
    }

    @Override
    public void recordScheduled(String workspace, String job, Instant expectedLastDue, Instant due) {
        snapshots.write(t -> run(() -> ScheduleTable.record(t, workspace, job, expectedLastDue, due)));
    }

    @Override
    public void markNodeDown(NodeDown down) {
        snapshots.write(t -> run(() -> NodeDownTable.markDown(t, down)));
    }

    @Override
    public boolean markNodeUp(String node) {
        return snapshots.write(t -> NodeDownTable.markUp(t, node));
    }

    @Override
    public Map<String, NodeDown> downNodes() {
        return NodeDownTable.down(snapshots.read());
    }

    // --- instances and events ---

    @Override
    public List<InstanceRecord> createInstances(List<InstanceRecord> instances) {
        return snapshots.write(t -> InstanceTable.create(t, instances));
    }

    @Override
    public List<InstanceRecord> instancesOf(RunId runId) {
        return InstanceTable.of(snapshots.read(), runId);
    }

    @Override
    public Optional<InstanceRecord> getInstance(InstanceId id) {
        return InstanceTable.get(snapshots.read(), id);
    }

    @Override
    public List<InstanceRecord> instancesOfActiveRuns() {
        return InstanceTable.ofActiveRuns(snapshots.read());
    }

    @Override
    public List<InstanceRecord> activeInstances() {
        return InstanceTable.active(snapshots.read());
    }

    @Override
    public InstanceRecord updateInstance(InstanceRecord instance) {
        return snapshots.write(t -> InstanceTable.update(t, instance));
    }

    @Override
    public RunEvent appendEvent(RunEvent event) {
        return snapshots.write(t -> EventTable.append(t, eventSeq, event));
    }

    @Override
    public List<RunEvent> eventsOf(RunId runId, long afterSeq, int limit) {
        return EventTable.of(snapshots.read(), runId, afterSeq, limit);
    }

    // --- usage ---

    @Override
    public void recordUsage(List<UsageChange> changes) {
        if (!changes.isEmpty()) {
            snapshots.write(t -> run(() -> UsageSegments.apply(t.usage(), changes)));
        }
    }

    @Override
    public List<UsageTotal> usage(UsageQuery query) {
        return none(query.workspaces()) ? List.of() : UsageSums.of(snapshots.read().usage, query);
    }

    @Override
    public Map<QuotaId, Resources> lending() {
        return UsageSegments.lending(snapshots.read().usage);
    }

    /** A query limited to no workspace answers nothing, without reading (also while a test's outage lasts). */
    private static boolean none(Set<String> workspaces) {
        return workspaces != null && workspaces.isEmpty();
    }

    /** A write that answers nothing, as the value of a change. */
    private static Void run(Runnable write) {
        write.run();
        return null;
    }
}
