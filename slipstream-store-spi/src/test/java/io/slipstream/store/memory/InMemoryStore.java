package io.slipstream.store.memory;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import io.slipstream.model.usage.UsageChange;
import io.slipstream.store.UsageQuery;
import io.slipstream.store.UsageSums;
import io.slipstream.store.UsageTotal;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunOrigin;
import io.slipstream.model.RunRecord;
import io.slipstream.store.ConflictException;
import io.slipstream.store.FencedException;
import io.slipstream.store.Leadership;
import io.slipstream.store.NodeDown;
import io.slipstream.store.RunQuery;
import io.slipstream.store.SecretRecord;
import io.slipstream.store.Store;
import io.slipstream.store.StoredDocument;
import io.slipstream.store.TokenRecord;
import io.slipstream.store.memory.Tables.DocumentKey;
import io.slipstream.store.memory.Tables.InstanceKey;
import io.slipstream.store.memory.Tables.NameKey;
import io.slipstream.store.memory.Tables.ScheduleKey;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The {@link Store} in memory, for tests and for trying Slipstream out: nothing survives the process. It keeps every
 * rule of the JDBC store ({@code JdbcStore}) that {@code BaseStoreContractTest} holds both to: versions and
 * {@link ConflictException}s, idempotency keys unique per workspace, events numbered by one sequence, fields that never
 * change after a create, text shortened where a column would, and times kept to the microsecond (like a
 * {@code TIMESTAMP WITH TIME ZONE} column).
 *
 * <p>Concurrency: the committed state is an immutable snapshot behind one volatile reference, replaced whole on each
 * commit. Readers never wait and never see a transaction half done. Writers take one lock: a single write copies the
 * tables it changes and publishes them; {@link #inTransaction} holds the lock for the whole transaction and works on a
 * private copy, published if the work returns and dropped if it throws (a rollback). Inside a transaction, the
 * calling thread reads its own writes; other threads read what was committed before, and their writes wait for it
 * (up to {@link #LOCK_TIMEOUT}, like a database's lock timeout). Event numbers taken by a rolled-back transaction are
 * not reused, as with a database sequence.
 */
public final class InMemoryStore implements Store {
    /** How long a writer waits for another thread's transaction before it gives up. */
    public static final java.time.Duration LOCK_TIMEOUT = java.time.Duration.ofSeconds(10);

    private static final int REASON_LENGTH = 1024;
    private static final int MESSAGE_LENGTH = 4096;

    private final ReentrantLock writer = new ReentrantLock();
    private final ThreadLocal<Tables> transaction = new ThreadLocal<>();
    private final AtomicLong eventSeq = new AtomicLong();
    private volatile Tables committed = new Tables();
    /** The leader's lease, apart from the fence (its epoch, in the tables): renewals change only this. */
    private volatile Leadership lease;
    private final Object leases = new Object();
    private volatile boolean closed;
    private volatile boolean unreachable;
    private final AtomicLong callsUntilOutage = new AtomicLong(-1);

    @Override
    public void close() {
        closed = true;
    }

    // --- transactions ---

    @Override
    public <T> T inTransaction(Function<Store, T> work) {
        if (transaction.get() != null) {
            return work.apply(this);
        }
        requireOpen();
        lock();
        try {
            Tables working = committed.copy();
            transaction.set(working);
            T result;
            try {
                result = work.apply(this);
            } finally {
                transaction.remove();
            }
            committed = working.frozen();
            return result;
        } finally {
            writer.unlock();
        }
    }

    /** The state this thread reads: its open transaction's, or the last committed one. */
    private Tables read() {
        requireOpen();
        Tables open = transaction.get();
        return open != null ? open : committed;
    }

    /** One write: joins this thread's transaction, or commits on its own (all of it, or nothing if it throws). */
    private <T> T write(Function<Tables, T> change) {
        requireOpen();
        Tables open = transaction.get();
        if (open != null) {
            return change.apply(open);
        }
        lock();
        try {
            Tables working = committed.copy();
            T result = change.apply(working);
            committed = working.frozen();
            return result;
        } finally {
            writer.unlock();
        }
    }

    private void lock() {
        requireOpen();
        try {
            if (!writer.tryLock(LOCK_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new io.slipstream.store.StoreUnavailableException("the in-memory store waited " + LOCK_TIMEOUT.toSeconds()
                        + " s for another thread's transaction", null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the in-memory store", e);
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the in-memory store is closed");
        }
        if (!unreachable && callsUntilOutage.get() >= 0 && callsUntilOutage.getAndDecrement() == 0) {
            unreachable = true;
        }
        if (unreachable) {
            throw new io.slipstream.store.StoreUnavailableException("the in-memory store is unreachable (a test's outage)", null);
        }
    }

    /**
     * Makes every call fail as a database outage would ({@code true}) or work again: for tests of what callers do
     * while the store cannot be reached. Nothing is lost meanwhile.
     */
    public void simulateOutage(boolean on) {
        callsUntilOutage.set(-1);
        unreachable = on;
    }

    /** Lets {@code calls} more calls through, then fails every call as {@link #simulateOutage} does: an outage mid-work. */
    public void simulateOutageAfter(int calls) {
        unreachable = false;
        callsUntilOutage.set(calls);
    }

    @Override
    public void ping() {
        requireOpen();
    }

    // --- documents ---

    @Override
    public Optional<StoredDocument> getDocument(Kind kind, String workspace, String name) {
        return Optional.ofNullable(read().documents.get(new DocumentKey(kind, workspaceKey(workspace), name)));
    }

    @Override
    public List<StoredDocument> listDocuments(Kind kind, Set<String> workspaces) {
        if (workspaces != null && workspaces.isEmpty()) {
            return List.of();
        }
        List<StoredDocument> found = new ArrayList<>();
        read().documents.forEach((key, document) -> {
            if (key.kind() == kind && (workspaces == null || workspaces.contains(kind == Kind.Workspace ? key.name() : key.workspace()))) {
                found.add(document);
            }
        });
        return List.copyOf(found);
    }

    @Override
    public StoredDocument createDocument(Document<?> document, Instant now) {
        requireNotSecret(document.kind());
        return write(t -> {
            DocumentKey key = DocumentKey.of(document);
            if (t.documents.containsKey(key)) {
                throw new ConflictException(document.reference() + " already exists");
            }
            requireDistinctMembers(document);
            t.documents().put(key, new StoredDocument(unversioned(document), 1, micros(now), micros(now)));
            return new StoredDocument(unversioned(document), 1, now, now);
        });
    }

    @Override
    public StoredDocument updateDocument(Document<?> document, long expectedVersion, Instant now) {
        requireNotSecret(document.kind());
        return write(t -> {
            DocumentKey key = DocumentKey.of(document);
            StoredDocument stored = t.documents.get(key);
            if (stored == null || stored.version() != expectedVersion) {
                throw new ConflictException(document.reference() + " is not at version " + expectedVersion
                        + " (it was changed or deleted meanwhile)");
            }
            requireDistinctMembers(document);
            StoredDocument updated = new StoredDocument(unversioned(document), expectedVersion + 1, stored.createdAt(), micros(now));
            t.documents().put(key, updated);
            return updated;
        });
    }

    @Override
    public void deleteDocument(Kind kind, String workspace, String name, long expectedVersion) {
        write(t -> {
            DocumentKey key = new DocumentKey(kind, workspaceKey(workspace), name);
            StoredDocument stored = t.documents.get(key);
            if (stored == null || stored.version() != expectedVersion) {
                throw new ConflictException(kind + " " + name + " is not at version " + expectedVersion);
            }
            t.documents().remove(key);
            if (kind == Kind.Job) {
                // A job made again under the same name starts its schedule afresh, without catching up on old times.
                t.schedules().remove(new ScheduleKey(workspace, name));
            }
            return null;
        });
    }

    @Override
    public Set<String> workspacesOf(String user) {
        Set<String> names = new TreeSet<>();
        read().documents.forEach((key, document) -> {
            if (document.document().spec() instanceof WorkspaceSpec workspace && workspace.members().contains(user)) {
                names.add(key.name());
            }
        });
        return names;
    }

    /** Secrets have a table of their own, with sealed values: a Secret document would hold them in clear. */
    private static void requireNotSecret(Kind kind) {
        if (kind == Kind.Secret) {
            throw new IllegalArgumentException("a Secret is stored with createSecret, sealed, never as a document");
        }
    }

    /** A member listed twice is one row twice in JdbcStore's membership table: refused the same way. */
    private static void requireDistinctMembers(Document<?> document) {
        if (document.spec() instanceof WorkspaceSpec workspace && new HashSet<>(workspace.members()).size() != workspace.members().size()) {
            throw new ConflictException("it was created by someone else meanwhile: a member of " + document.reference() + " is listed twice");
        }
    }

    private static Document<?> unversioned(Document<?> document) {
        ObjectMeta meta = document.metadata();
        return meta.version() == null ? document : new Document<>(ObjectMeta.of(meta.name(), meta.workspace()), document.spec());
    }

    static String workspaceKey(String workspace) {
        return workspace == null ? "" : workspace;
    }

    // --- tokens ---

    @Override
    public void createToken(TokenRecord token) {
        write(t -> {
            if (t.tokens.containsKey(token.id()) || t.tokens.values().stream().anyMatch(other -> other.hash().equals(token.hash()))) {
                throw new ConflictException("it was created by someone else meanwhile: token " + token.id() + " (its id or hash is taken)");
            }
            t.tokens().put(token.id(), new TokenRecord(token.id(), token.hash(), token.hashScheme(), token.user(), token.admin(),
                    token.description(), micros(token.createdAt()), micros(token.expiresAt()), micros(token.revokedAt()),
                    micros(token.lastUsedAt())));
            return null;
        });
    }

    @Override
    public Optional<TokenRecord> findTokenByHash(String hash) {
        return read().tokens.values().stream().filter(token -> token.hash().equals(hash)).findFirst();
    }

    @Override
    public List<TokenRecord> listTokens() {
        return read().tokens.values().stream()
                .sorted(Comparator.comparing(TokenRecord::createdAt).thenComparing(TokenRecord::id))
                .toList();
    }

    @Override
    public boolean revokeToken(String id, Instant at) {
        return write(t -> {
            TokenRecord token = t.tokens.get(id);
            if (token == null || token.revokedAt() != null) {
                return false;
            }
            t.tokens().put(id, new TokenRecord(token.id(), token.hash(), token.hashScheme(), token.user(), token.admin(), token.description(),
                    token.createdAt(), token.expiresAt(), micros(at), token.lastUsedAt()));
            return true;
        });
    }

    @Override
    public boolean hasAdminToken(Instant now) {
        return listTokens().stream().anyMatch(t -> t.admin() && t.isUsableAt(now));
    }

    @Override
    public boolean recordTokenUse(String id, Instant at, Instant unlessUsedSince) {
        return write(t -> {
            TokenRecord token = t.tokens.get(id);
            if (token == null || token.lastUsedAt() != null && !token.lastUsedAt().isBefore(micros(unlessUsedSince))) {
                return false;
            }
            t.tokens().put(id, new TokenRecord(token.id(), token.hash(), token.hashScheme(), token.user(), token.admin(), token.description(),
                    token.createdAt(), token.expiresAt(), token.revokedAt(), micros(at)));
            return true;
        });
    }

    @Override
    public boolean rehashToken(String id, String expectedHash, String hash, String hashScheme) {
        return write(t -> {
            TokenRecord token = t.tokens.get(id);
            if (token == null || !token.hash().equals(expectedHash)) {
                return false;
            }
            if (t.tokens.values().stream().anyMatch(other -> !other.id().equals(id) && other.hash().equals(hash))) {
                throw new ConflictException("it was created by someone else meanwhile: another token has that hash");
            }
            t.tokens().put(id, new TokenRecord(token.id(), hash, hashScheme, token.user(), token.admin(), token.description(),
                    token.createdAt(), token.expiresAt(), token.revokedAt(), token.lastUsedAt()));
            return true;
        });
    }

    // --- secrets ---

    @Override
    public Optional<SecretRecord> getSecret(String workspace, String name) {
        return Optional.ofNullable(read().secrets.get(new NameKey(workspace, name)));
    }

    @Override
    public List<SecretRecord> listSecrets(Set<String> workspaces) {
        if (workspaces != null && workspaces.isEmpty()) {
            return List.of();
        }
        return read().secrets.values().stream().filter(s -> workspaces == null || workspaces.contains(s.workspace())).toList();
    }

    @Override
    public SecretRecord createSecret(SecretRecord secret) {
        return write(t -> {
            NameKey key = new NameKey(secret.workspace(), secret.name());
            if (t.secrets.containsKey(key)) {
                throw new ConflictException("Secret " + secret.workspace() + "/" + secret.name() + " already exists");
            }
            t.secrets().put(key, new SecretRecord(secret.workspace(), secret.name(), secret.keyId(), secret.sealed(), 1,
                    micros(secret.createdAt()), micros(secret.updatedAt())));
            return new SecretRecord(secret.workspace(), secret.name(), secret.keyId(), secret.sealed(), 1, secret.createdAt(),
                    secret.updatedAt());
        });
    }

    @Override
    public SecretRecord updateSecret(SecretRecord secret) {
        return write(t -> {
            NameKey key = new NameKey(secret.workspace(), secret.name());
            SecretRecord stored = t.secrets.get(key);
            if (stored == null || stored.version() != secret.version()) {
                throw new ConflictException("Secret " + secret.workspace() + "/" + secret.name() + " is not at version " + secret.version()
                        + " (it was changed or deleted meanwhile)");
            }
            t.secrets().put(key, new SecretRecord(secret.workspace(), secret.name(), secret.keyId(), secret.sealed(), secret.version() + 1,
                    stored.createdAt(), micros(secret.updatedAt())));
            return new SecretRecord(secret.workspace(), secret.name(), secret.keyId(), secret.sealed(), secret.version() + 1,
                    secret.createdAt(), secret.updatedAt());
        });
    }

    @Override
    public void deleteSecret(String workspace, String name, long expectedVersion) {
        write(t -> {
            NameKey key = new NameKey(workspace, name);
            SecretRecord stored = t.secrets.get(key);
            if (stored == null || stored.version() != expectedVersion) {
                throw new ConflictException("Secret " + workspace + "/" + name + " is not at version " + expectedVersion);
            }
            t.secrets().remove(key);
            return null;
        });
    }

    // --- server keys ---

    @Override
    public Optional<String> serverKeyId(String purpose) {
        return Optional.ofNullable(read().serverKeys.get(purpose));
    }

    @Override
    public void registerServerKey(String purpose, String keyId, Instant at) {
        write(t -> {
            if (t.serverKeys.containsKey(purpose)) {
                throw new ConflictException("a " + purpose + " key is registered already");
            }
            t.serverKeys().put(purpose, keyId);
            return null;
        });
    }

    @Override
    public void replaceServerKey(String purpose, String expectedKeyId, String keyId, Instant at) {
        write(t -> {
            if (!expectedKeyId.equals(t.serverKeys.get(purpose))) {
                throw new ConflictException("the " + purpose + " key is not " + expectedKeyId + " (it changed meanwhile)");
            }
            t.serverKeys().put(purpose, keyId);
            return null;
        });
    }

    // --- leadership ---

    /**
     * Several control loops of one process may share this store (tests of fencing): a lease is waited out. A renewal
     * changes only the lease, so it never waits for the leader's open transactions; a new epoch is a write of the
     * fence, so it waits for them (the writer lock), and no transaction of the old epoch is open once it is in place.
     * Unlike the JDBC store's, a claim or an epoch move made inside a transaction that then rolls back keeps the lease
     * it set (the fence goes back): the servers and tests that use this store make them on their own or commit them.
     */
    @Override
    public Leadership claimLeadership(String holder, String goneHolder, Instant now, java.time.Duration ttl) {
        synchronized (leases) {
            Leadership current = lease;
            if (current != null && current.heldBy(holder) && !current.expiredAt(now)) {
                requireOpen(); // one check per call, as write's below (tests count calls to an outage)
                lease = new Leadership(holder, current.epoch(), micros(now), micros(now.plus(ttl)));
                return lease;
            }
            if (current != null && !current.expiredAt(now) && !current.heldBy(goneHolder)) {
                requireOpen();
                return current;
            }
        }
        return write(t -> {
            synchronized (leases) { // taken after the writer lock, never before: a renewal holds only this one
                Leadership current = lease;
                boolean renew = current != null && current.heldBy(holder) && !current.expiredAt(now);
                if (current != null && !renew && !current.expiredAt(now) && !current.heldBy(goneHolder)) {
                    return current; // another claim won the lease while this one waited
                }
                long epoch = current == null ? 1 : renew ? current.epoch() : current.epoch() + 1;
                t.fenceEpoch = epoch;
                lease = new Leadership(holder, epoch, micros(now), micros(now.plus(ttl)));
                return lease;
            }
        });
    }

    @Override
    public Optional<Leadership> leadership() {
        requireOpen();
        return Optional.ofNullable(lease);
    }

    @Override
    public void requireLeader(long epoch) {
        long current = read().fenceEpoch; // inside a transaction, the writer lock holds off every takeover
        if (current != epoch) {
            throw new FencedException(epoch, current);
        }
    }

    @Override
    public Leadership advanceEpoch(String holder, long epoch, long past) {
        return write(t -> {
            synchronized (leases) {
                Leadership current = lease;
                if (current != null && current.heldBy(holder) && current.epoch() == epoch && past >= epoch) {
                    t.fenceEpoch = past + 1;
                    lease = new Leadership(holder, past + 1, current.renewedAt(), current.expiresAt());
                }
                return lease;
            }
        });
    }

    @Override
    public void releaseLeadership(String holder, long epoch, Instant now) {
        requireOpen();
        synchronized (leases) {
            Leadership current = lease;
            if (current != null && current.heldBy(holder) && current.epoch() == epoch) {
                lease = new Leadership(holder, epoch, current.renewedAt(), micros(now));
            }
        }
    }

    // --- runs ---

    @Override
    public RunRecord createRun(RunRecord run, RunEvent created) {
        return write(t -> {
            if (t.runs.containsKey(run.id().value())) {
                throw new ConflictException("run " + run.id() + " already exists");
            }
            String key = run.origin().idempotencyKey();
            if (key != null && t.runs.values().stream().anyMatch(r -> r.workspace().equals(run.workspace()) && key.equals(r.origin().idempotencyKey()))) {
                throw new ConflictException("it was created by someone else meanwhile: a run of " + run.workspace() + " has idempotency key " + key);
            }
            RunRecord stored = run.withVersion(1);
            t.runs().put(run.id().value(), asStored(stored, stored));
            appendEvent(t, created);
            return stored;
        });
    }

    @Override
    public Optional<RunRecord> getRun(RunId id) {
        return Optional.ofNullable(read().runs.get(id.value()));
    }

    @Override
    public List<RunRecord> listRuns(RunQuery query) {
        if (query.workspaces() != null && query.workspaces().isEmpty()) {
            return List.of();
        }
        Instant beforeTime = query.before() == null ? null : Instant.ofEpochMilli(query.before().createdAtMillis());
        Instant after = micros(query.createdAfter());
        Instant before = micros(query.createdBefore());
        return read().runs.values().stream()
                .filter(r -> query.workspaces() == null || query.workspaces().contains(r.workspace()))
                .filter(r -> query.workspace() == null || query.workspace().equals(r.workspace()))
                .filter(r -> query.job() == null || query.job().equals(r.job()))
                .filter(r -> query.states().isEmpty() || query.states().contains(r.state()))
                .filter(r -> beforeTime == null || r.createdAt().isBefore(beforeTime)
                        || r.createdAt().equals(beforeTime) && r.id().value().compareTo(query.before().id()) < 0)
                .filter(r -> after == null || !r.createdAt().isBefore(after))
                .filter(r -> before == null || r.createdAt().isBefore(before))
                .filter(r -> query.selector().matches(r.origin().labels()))
                .sorted(BY_CREATION.reversed())
                .limit(query.limit())
                .toList();
    }

    private static final Comparator<RunRecord> BY_CREATION = Comparator.comparing(RunRecord::createdAt).thenComparing(r -> r.id().value());

    @Override
    public List<RunRecord> activeRuns() {
        return read().runs.values().stream().filter(r -> !r.state().isFinal()).sorted(BY_CREATION).toList();
    }

    @Override
    public RunRecord updateRun(RunRecord run) {
        return write(t -> {
            RunRecord stored = t.runs.get(run.id().value());
            if (stored == null || stored.version() != run.version()) {
                throw new ConflictException("run " + run.id() + " is not at version " + run.version());
            }
            RunRecord next = run.withVersion(run.version() + 1);
            t.runs().put(run.id().value(), asStored(stored, next));
            return next;
        });
    }

    /**
     * {@code run} as stored: what a run is (its workspace, job, spec, priority, origin, creation) stays as {@code created}
     * says; the rest comes from {@code run}, with times to the microsecond and the reason shortened to its column.
     */
    private static RunRecord asStored(RunRecord created, RunRecord run) {
        RunOrigin origin = created.origin();
        return new RunRecord(run.id(), created.workspace(), created.job(), created.jobVersion(), run.state(), truncate(run.reason(), REASON_LENGTH),
                run.outcome(), run.attempt(), created.priority(), created.spec(), micros(created.createdAt()), micros(run.startedAt()),
                micros(run.finishedAt()), micros(run.cancelRequestedAt()), run.realTimeResources(), run.reclaimFor(), run.capacityReclaimed(),
                new RunOrigin(origin.overrides(), micros(origin.scheduleTime()), origin.idempotencyKey(), origin.submittedBy(), origin.labels()),
                micros(run.attemptStartedAt()),
                run.priorRuntimeMillis(), run.faults(), run.version());
    }

    @Override
    public Optional<RunRecord> findRunByIdempotencyKey(String workspace, String key) {
        if (key == null) {
            return Optional.empty();
        }
        return read().runs.values().stream()
                .filter(r -> r.workspace().equals(workspace) && key.equals(r.origin().idempotencyKey()))
                .findFirst();
    }

    @Override
    public void releaseIdempotencyKey(RunId id) {
        write(t -> {
            RunRecord run = t.runs.get(id.value());
            if (run != null && run.origin().idempotencyKey() != null) {
                RunOrigin origin = run.origin().withoutIdempotencyKey();
                t.runs().put(id.value(), new RunRecord(run.id(), run.workspace(), run.job(), run.jobVersion(), run.state(), run.reason(),
                        run.outcome(), run.attempt(), run.priority(), run.spec(), run.createdAt(), run.startedAt(), run.finishedAt(),
                        run.cancelRequestedAt(), run.realTimeResources(), run.reclaimFor(), run.capacityReclaimed(), origin, run.attemptStartedAt(),
                        run.priorRuntimeMillis(), run.faults(), run.version()));
            }
            return null;
        });
    }

    @Override
    public List<RunRecord> finishedBefore(Instant cutoff, int limit) {
        Instant before = micros(cutoff);
        return read().runs.values().stream()
                .filter(r -> r.state().isFinal() && r.finishedAt() != null && r.finishedAt().isBefore(before))
                .sorted(Comparator.comparing(RunRecord::finishedAt).thenComparing(r -> r.id().value()))
                .limit(limit)
                .toList();
    }

    @Override
    public void deleteRun(RunId id) {
        write(t -> {
            RunRecord run = t.runs.get(id.value());
            if (run == null || !run.state().isFinal()) {
                throw new ConflictException("run " + id + " is not finished (or does not exist): only finished runs are removed");
            }
            t.runs().remove(id.value());
            t.instances().remove(id.value());
            t.events().remove(id.value());
            return null;
        });
    }

    @Override
    public Optional<Instant> lastScheduled(String workspace, String job) {
        return Optional.ofNullable(read().schedules.get(new ScheduleKey(workspace, job)));
    }

    @Override
    public void recordScheduled(String workspace, String job, Instant expectedLastDue, Instant due) {
        write(t -> {
            ScheduleKey key = new ScheduleKey(workspace, job);
            Instant stored = t.schedules.get(key);
            boolean moves = expectedLastDue == null
                    ? stored == null
                    : stored != null && stored.equals(micros(expectedLastDue)) && stored.isBefore(micros(due));
            if (!moves) {
                throw new ConflictException("the schedule of " + workspace + "/" + job + " fired meanwhile");
            }
            t.schedules().put(key, micros(due));
            return null;
        });
    }

    @Override
    public void markNodeDown(NodeDown down) {
        write(t -> {
            if (!t.nodesDown.containsKey(down.node())) {
                t.nodesDown().put(down.node(), new NodeDown(down.node(), truncate(down.reason(), REASON_LENGTH), micros(down.since())));
            }
            return null;
        });
    }

    @Override
    public boolean markNodeUp(String node) {
        return write(t -> t.nodesDown.containsKey(node) && t.nodesDown().remove(node) != null);
    }

    @Override
    public Map<String, NodeDown> downNodes() {
        return new TreeMap<>(read().nodesDown);
    }

    // --- usage ---

    @Override
    public void recordUsage(List<UsageChange> changes) {
        if (!changes.isEmpty()) {
            write(t -> {
                UsageSegments.apply(t.usage(), changes);
                return null;
            });
        }
    }

    @Override
    public List<UsageTotal> usage(UsageQuery query) {
        if (query.workspaces() != null && query.workspaces().isEmpty()) {
            return List.of();
        }
        return UsageSums.of(read().usage, query);
    }

    @Override
    public Map<QuotaId, Resources> lending() {
        return UsageSegments.lending(read().usage);
    }

    // --- instances ---

    @Override
    public List<InstanceRecord> createInstances(List<InstanceRecord> instances) {
        return write(t -> {
            List<InstanceRecord> stored = new ArrayList<>();
            for (InstanceRecord instance : instances) {
                InstanceRecord next = instance.withVersion(1);
                TreeMap<InstanceKey, InstanceRecord> ofRun = t.instancesOf(instance.id().runId().value());
                if (ofRun.containsKey(InstanceKey.of(instance.id()))) {
                    throw new ConflictException("it was created by someone else meanwhile: instance " + instance.id() + " exists");
                }
                ofRun.put(InstanceKey.of(instance.id()), asStored(next, next));
                stored.add(next);
            }
            return stored;
        });
    }

    @Override
    public List<InstanceRecord> instancesOf(RunId runId) {
        TreeMap<InstanceKey, InstanceRecord> ofRun = read().instances.get(runId.value());
        return ofRun == null ? List.of() : List.copyOf(ofRun.values());
    }

    @Override
    public Optional<InstanceRecord> getInstance(InstanceId id) {
        TreeMap<InstanceKey, InstanceRecord> ofRun = read().instances.get(id.runId().value());
        return ofRun == null ? Optional.empty() : Optional.ofNullable(ofRun.get(InstanceKey.of(id)));
    }

    @Override
    public List<InstanceRecord> instancesOfActiveRuns() {
        Tables t = read();
        List<InstanceRecord> found = new ArrayList<>();
        t.runs.values().stream().filter(r -> !r.state().isFinal()).forEach(run -> {
            TreeMap<InstanceKey, InstanceRecord> ofRun = t.instances.get(run.id().value());
            if (ofRun != null) {
                ofRun.values().stream().filter(i -> i.id().attempt() == run.attempt()).forEach(found::add);
            }
        });
        return List.copyOf(found);
    }

    @Override
    public List<InstanceRecord> activeInstances() {
        List<InstanceRecord> found = new ArrayList<>();
        read().instances.values().forEach(ofRun -> ofRun.values().stream().filter(i -> !i.state().isFinal()).forEach(found::add));
        return List.copyOf(found);
    }

    @Override
    public InstanceRecord updateInstance(InstanceRecord instance) {
        return write(t -> {
            InstanceRecord stored = t.instances.getOrDefault(instance.id().runId().value(), new TreeMap<>()).get(InstanceKey.of(instance.id()));
            if (stored == null || stored.version() != instance.version()) {
                throw new ConflictException("instance " + instance.id() + " is not at version " + instance.version());
            }
            InstanceRecord next = instance.withVersion(instance.version() + 1);
            t.instancesOf(instance.id().runId().value()).put(InstanceKey.of(instance.id()), asStored(stored, next));
            return next;
        });
    }

    /** {@code instance} as stored: its id, node group and rank as created; times to the microsecond; the reason shortened. */
    private static InstanceRecord asStored(InstanceRecord created, InstanceRecord instance) {
        return new InstanceRecord(created.id(), created.nodeGroup(), created.groupRank(), instance.node(), instance.gpus(), instance.state(),
                instance.exitCode(), truncate(instance.reason(), REASON_LENGTH), instance.handle(), micros(instance.startedAt()),
                micros(instance.finishedAt()), instance.endpoint(), micros(instance.readyAt()), micros(instance.stopRequestedAt()),
                truncate(instance.probeFailure(), REASON_LENGTH), instance.launchFailure(), instance.restarts(), instance.version());
    }

    // --- events ---

    @Override
    public RunEvent appendEvent(RunEvent event) {
        return write(t -> appendEvent(t, event));
    }

    private RunEvent appendEvent(Tables t, RunEvent event) {
        long seq = eventSeq.incrementAndGet();
        List<RunEvent> ofRun = new ArrayList<>(t.events.getOrDefault(event.runId().value(), List.of()));
        ofRun.add(new RunEvent(seq, event.runId(), micros(event.time()), event.type(), event.state(), truncate(event.reason(), REASON_LENGTH),
                truncate(event.message(), MESSAGE_LENGTH), event.instance()));
        t.events().put(event.runId().value(), List.copyOf(ofRun));
        return new RunEvent(seq, event.runId(), event.time(), event.type(), event.state(), event.reason(), event.message(), event.instance());
    }

    @Override
    public List<RunEvent> eventsOf(RunId runId, long afterSeq, int limit) {
        return read().events.getOrDefault(runId.value(), List.of()).stream().filter(e -> e.seq() > afterSeq).limit(limit).toList();
    }

    // --- helpers ---

    /** An instant as a {@code TIMESTAMP WITH TIME ZONE} column keeps it: to the microsecond, rounded half up. */
    static Instant micros(Instant instant) {
        return instant == null ? null : instant.plusNanos(500).truncatedTo(ChronoUnit.MICROS);
    }

    private static String truncate(String text, int max) {
        return text == null || text.length() <= max ? text : text.substring(0, max - 1) + "…";
    }
}
