package io.slipstream.store.memory;

import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.Kind;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.model.usage.UsageChange;
import io.slipstream.store.CredentialReads;
import io.slipstream.store.DocumentReads;
import io.slipstream.store.FencedException;
import io.slipstream.store.NodeCondition;
import io.slipstream.store.NodeDown;
import io.slipstream.store.RunReads;
import io.slipstream.store.SecretRecord;
import io.slipstream.store.StoreTx;
import io.slipstream.store.StoredDocument;
import io.slipstream.store.TokenRecord;
import io.slipstream.store.UsageReads;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/** An {@link InMemoryStore}'s transaction: its reads and writes on its {@link Working} copy of the tables, each write one call into its table's {@code *Table} class. */
final class InMemoryTx implements StoreTx {
    private final Working working;
    /** The events' sequence: numbers taken by a rolled-back transaction are not reused, as with a database sequence. */
    private final AtomicLong eventSeq;
    private final InMemoryReads reads;

    InMemoryTx(Working working, AtomicLong eventSeq) {
        this.working = working;
        this.eventSeq = eventSeq;
        this.reads = new InMemoryReads(working);
    }

    /** The working copy, for one call. */
    private Tables tables() {
        return working.get();
    }

    @Override
    public RunReads runs() {
        return reads.runs();
    }

    @Override
    public DocumentReads documents() {
        return reads.documents();
    }

    @Override
    public CredentialReads credentials() {
        return reads.credentials();
    }

    @Override
    public UsageReads usage() {
        return reads.usage();
    }

    @Override
    public void requireLeader(long epoch) {
        long current = tables().fenceEpoch; // the writer lock, held until the transaction ends, holds off every takeover
        if (current != epoch) {
            throw new FencedException(epoch, current);
        }
    }

    @Override
    public StoredDocument createDocument(Document<?> document, Instant now) {
        DocumentTable.requireNotSecret(document.kind());
        return DocumentTable.create(tables(), document, now);
    }

    @Override
    public StoredDocument updateDocument(Document<?> document, long expectedVersion, Instant now) {
        DocumentTable.requireNotSecret(document.kind());
        return DocumentTable.update(tables(), document, expectedVersion, now);
    }

    @Override
    public void deleteDocument(Kind kind, String workspace, String name, long expectedVersion) {
        DocumentTable.delete(tables(), kind, workspace, name, expectedVersion);
    }

    @Override
    public void createToken(TokenRecord token) {
        TokenTable.create(tables(), token);
    }

    @Override
    public boolean revokeToken(String id, Instant at) {
        return TokenTable.revoke(tables(), id, at);
    }

    @Override
    public boolean recordTokenUse(String id, Instant at, Instant unlessUsedSince) {
        return TokenTable.recordUse(tables(), id, at, unlessUsedSince);
    }

    @Override
    public boolean rehashToken(String id, String expectedHash, String hash, String hashScheme) {
        return TokenTable.rehash(tables(), id, expectedHash, hash, hashScheme);
    }

    @Override
    public SecretRecord createSecret(SecretRecord secret) {
        return SecretTable.create(tables(), secret);
    }

    @Override
    public SecretRecord updateSecret(SecretRecord secret) {
        return SecretTable.update(tables(), secret);
    }

    @Override
    public void deleteSecret(String workspace, String name, long expectedVersion) {
        SecretTable.delete(tables(), workspace, name, expectedVersion);
    }

    @Override
    public void registerServerKey(String purpose, String keyId, Instant at) {
        ServerKeyTable.register(tables(), purpose, keyId);
    }

    @Override
    public void addIdentityKey(io.slipstream.store.IdentityKey key) {
        if (tables().identityKeys.containsKey(key.kid())) {
            throw new io.slipstream.store.ConflictException("an identity key " + key.kid() + " exists already");
        }
        tables().identityKeys().put(key.kid(), key);
    }

    @Override
    public void removeIdentityKey(String kid) {
        if (tables().identityKeys.containsKey(kid)) {
            tables().identityKeys().remove(kid);
        }
    }

    @Override
    public void replaceServerKey(String purpose, String expectedKeyId, String keyId, Instant at) {
        ServerKeyTable.replace(tables(), purpose, expectedKeyId, keyId);
    }

    @Override
    public RunRecord createRun(RunRecord run, RunEvent created) {
        return RunTable.create(tables(), eventSeq, run, created);
    }

    @Override
    public RunRecord updateRun(RunRecord run) {
        return RunTable.update(tables(), run);
    }

    @Override
    public void releaseIdempotencyKey(RunId id) {
        RunTable.releaseIdempotencyKey(tables(), id);
    }

    @Override
    public void deleteRun(RunId id) {
        RunTable.delete(tables(), id);
    }

    @Override
    public List<InstanceRecord> createInstances(List<InstanceRecord> instances) {
        return InstanceTable.create(tables(), instances);
    }

    @Override
    public InstanceRecord updateInstance(InstanceRecord instance) {
        return InstanceTable.update(tables(), instance);
    }

    @Override
    public RunEvent appendEvent(RunEvent event) {
        return EventTable.append(tables(), eventSeq, event);
    }

    @Override
    public void recordScheduled(String workspace, String job, Instant expectedLastDue, Instant due) {
        ScheduleTable.record(tables(), workspace, job, expectedLastDue, due);
    }

    @Override
    public void markNodeDown(NodeDown down) {
        NodeDownTable.markDown(tables(), down);
    }

    @Override
    public boolean markNodeUp(String node) {
        return NodeDownTable.markUp(tables(), node);
    }

    @Override
    public NodeCondition cordonNode(NodeCondition cordon) {
        return NodeDownTable.cordon(tables(), cordon);
    }

    @Override
    public boolean uncordonNode(String node) {
        return NodeDownTable.uncordon(tables(), node);
    }

    @Override
    public void recordUsage(List<UsageChange> changes) {
        if (!changes.isEmpty()) {
            UsageSegments.apply(tables().usage(), changes);
        }
    }
}
