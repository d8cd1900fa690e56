package io.slipstream.store;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.run.QuotaId;
import io.slipstream.model.usage.UsageChange;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The store as a control loop that leads at {@code epoch} sees it: every write happens in a transaction that first
 * holds the fence and checks the epoch ({@link Store#requireLeader}), so a leader that lost its lease
 * (paused past it, cut off, slow) writes nothing once another replica took over: {@link FencedException}. Reads are
 * the store's own. Works over any {@link Store}; it does not own the store ({@link #close} leaves it open). It has to
 * name every method of {@link Store}, the reads to pass them on; once writes go through one method of their own, the
 * epoch is checked there, once.
 */
public final class FencedStore implements Store {
    private final Store delegate;
    private final long epoch;

    public FencedStore(Store delegate, long epoch) {
        this.delegate = delegate;
        this.epoch = epoch;
    }

    public long epoch() {
        return epoch;
    }

    @Override
    public <T> T inTransaction(Function<Store, T> work) {
        return delegate.inTransaction(tx -> {
            tx.requireLeader(epoch);
            return work.apply(this); // its writes join this transaction (and check again, at no cost: the lock is held)
        });
    }

    private <T> T fenced(Function<Store, T> write) {
        return delegate.inTransaction(tx -> {
            tx.requireLeader(epoch);
            return write.apply(tx);
        });
    }

    private void fencedRun(Consumer<Store> write) {
        fenced(tx -> {
            write.accept(tx);
            return null;
        });
    }

    @Override
    public List<RunRow> listRunRows(RunQuery query) {
        return delegate.listRunRows(query);
    }

    @Override
    public Leadership advanceEpoch(String holder, long epoch, long past) {
        return delegate.advanceEpoch(holder, epoch, past);
    }

    @Override
    public void close() {
        // the store belongs to whoever opened it
    }

    @Override
    public void ping() {
        delegate.ping();
    }

    @Override
    public Optional<StoredDocument> getDocument(Kind kind, String workspace, String name) {
        return delegate.getDocument(kind, workspace, name);
    }

    @Override
    public List<StoredDocument> listDocuments(Kind kind, Set<String> workspaces) {
        return delegate.listDocuments(kind, workspaces);
    }

    @Override
    public StoredDocument createDocument(Document<?> document, Instant now) {
        return fenced(tx -> tx.createDocument(document, now));
    }

    @Override
    public StoredDocument updateDocument(Document<?> document, long expectedVersion, Instant now) {
        return fenced(tx -> tx.updateDocument(document, expectedVersion, now));
    }

    @Override
    public void deleteDocument(Kind kind, String workspace, String name, long expectedVersion) {
        fencedRun(tx -> tx.deleteDocument(kind, workspace, name, expectedVersion));
    }

    @Override
    public Set<String> workspacesOf(String user) {
        return delegate.workspacesOf(user);
    }

    @Override
    public void createToken(TokenRecord token) {
        fencedRun(tx -> tx.createToken(token));
    }

    @Override
    public Optional<TokenRecord> findTokenByHash(String hash) {
        return delegate.findTokenByHash(hash);
    }

    @Override
    public List<TokenRecord> listTokens() {
        return delegate.listTokens();
    }

    @Override
    public boolean revokeToken(String id, Instant at) {
        return fenced(tx -> tx.revokeToken(id, at));
    }

    @Override
    public boolean hasAdminToken(Instant now) {
        return delegate.hasAdminToken(now);
    }

    @Override
    public boolean recordTokenUse(String id, Instant at, Instant unlessUsedSince) {
        return fenced(tx -> tx.recordTokenUse(id, at, unlessUsedSince));
    }

    @Override
    public boolean rehashToken(String id, String expectedHash, String hash, String hashScheme) {
        return fenced(tx -> tx.rehashToken(id, expectedHash, hash, hashScheme));
    }

    @Override
    public Optional<SecretRecord> getSecret(String workspace, String name) {
        return delegate.getSecret(workspace, name);
    }

    @Override
    public List<SecretRecord> listSecrets(Set<String> workspaces) {
        return delegate.listSecrets(workspaces);
    }

    @Override
    public SecretRecord createSecret(SecretRecord secret) {
        return fenced(tx -> tx.createSecret(secret));
    }

    @Override
    public SecretRecord updateSecret(SecretRecord secret) {
        return fenced(tx -> tx.updateSecret(secret));
    }

    @Override
    public void deleteSecret(String workspace, String name, long expectedVersion) {
        fencedRun(tx -> tx.deleteSecret(workspace, name, expectedVersion));
    }

    @Override
    public Optional<String> serverKeyId(String purpose) {
        return delegate.serverKeyId(purpose);
    }

    @Override
    public void registerServerKey(String purpose, String keyId, Instant at) {
        fencedRun(tx -> tx.registerServerKey(purpose, keyId, at));
    }

    @Override
    public void replaceServerKey(String purpose, String expectedKeyId, String keyId, Instant at) {
        fencedRun(tx -> tx.replaceServerKey(purpose, expectedKeyId, keyId, at));
    }

    @Override
    public Leadership claimLeadership(String holder, String goneHolder, Instant now, java.time.Duration ttl) {
        return delegate.claimLeadership(holder, goneHolder, now, ttl);
    }

    @Override
    public Optional<Leadership> leadership() {
        return delegate.leadership();
    }

    @Override
    public void requireLeader(long epoch) {
        delegate.requireLeader(epoch);
    }

    @Override
    public void releaseLeadership(String holder, long epoch, Instant now) {
        delegate.releaseLeadership(holder, epoch, now);
    }

    @Override
    public RunRecord createRun(RunRecord run, RunEvent created) {
        return fenced(tx -> tx.createRun(run, created));
    }

    @Override
    public Optional<RunRecord> getRun(RunId id) {
        return delegate.getRun(id);
    }

    @Override
    public List<RunRecord> listRuns(RunQuery query) {
        return delegate.listRuns(query);
    }

    @Override
    public List<RunRecord> activeRuns() {
        return delegate.activeRuns();
    }

    @Override
    public RunRecord updateRun(RunRecord run) {
        return fenced(tx -> tx.updateRun(run));
    }

    @Override
    public Optional<RunRecord> findRunByIdempotencyKey(String workspace, String key) {
        return delegate.findRunByIdempotencyKey(workspace, key);
    }

    @Override
    public void releaseIdempotencyKey(RunId id) {
        fencedRun(tx -> tx.releaseIdempotencyKey(id));
    }

    @Override
    public List<RunRecord> finishedBefore(Instant cutoff, int limit) {
        return delegate.finishedBefore(cutoff, limit);
    }

    @Override
    public void deleteRun(RunId id) {
        fencedRun(tx -> tx.deleteRun(id));
    }

    @Override
    public Optional<Instant> lastScheduled(String workspace, String job) {
        return delegate.lastScheduled(workspace, job);
    }

    @Override
    public void recordScheduled(String workspace, String job, Instant expectedLastDue, Instant due) {
        fencedRun(tx -> tx.recordScheduled(workspace, job, expectedLastDue, due));
    }

    @Override
    public void markNodeDown(NodeDown down) {
        fencedRun(tx -> tx.markNodeDown(down));
    }

    @Override
    public boolean markNodeUp(String node) {
        return fenced(tx -> tx.markNodeUp(node));
    }

    @Override
    public Map<String, NodeDown> downNodes() {
        return delegate.downNodes();
    }

    @Override
    public List<InstanceRecord> createInstances(List<InstanceRecord> instances) {
        return fenced(tx -> tx.createInstances(instances));
    }

    @Override
    public List<InstanceRecord> instancesOf(RunId runId) {
        return delegate.instancesOf(runId);
    }

    @Override
    public Optional<InstanceRecord> getInstance(InstanceId id) {
        return delegate.getInstance(id);
    }

    @Override
    public List<InstanceRecord> instancesOfActiveRuns() {
        return delegate.instancesOfActiveRuns();
    }

    @Override
    public List<InstanceRecord> activeInstances() {
        return delegate.activeInstances();
    }

    @Override
    public InstanceRecord updateInstance(InstanceRecord instance) {
        return fenced(tx -> tx.updateInstance(instance));
    }

    @Override
    public void recordUsage(List<UsageChange> changes) {
        if (!changes.isEmpty()) {
            fencedRun(tx -> tx.recordUsage(changes));
        }
    }

    @Override
    public List<UsageTotal> usage(UsageQuery query) {
        return delegate.usage(query);
    }

    @Override
    public Map<QuotaId, Resources> lending() {
        return delegate.lending();
    }

    @Override
    public RunEvent appendEvent(RunEvent event) {
        return fenced(tx -> tx.appendEvent(event));
    }

    @Override
    public List<RunEvent> eventsOf(RunId runId, long afterSeq, int limit) {
        return delegate.eventsOf(runId, afterSeq, limit);
    }
}
