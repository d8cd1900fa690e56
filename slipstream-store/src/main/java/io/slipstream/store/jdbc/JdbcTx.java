package io.slipstream.store.jdbc;

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
import io.slipstream.store.jdbc.Transactions.TransactionHandle;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.Optional;
import java.util.function.Consumer;
import org.jdbi.v3.core.Handle;

/** A {@link JdbcStore}'s transaction: each write one call into its table's {@code *Rows} class, on the transaction's handle. */
final class JdbcTx implements StoreTx {
    private final TransactionHandle handle;
    private final UnreadableRows unreadable;
    private final JdbcReads reads;
    /**
     * The epoch this transaction found, with the fence's row locked ({@link #requireLeader}): no other transaction can
     * change the row before this one ends, so a check at the same epoch need not read it again.
     */
    private Long fencedAt;
    /** Where this transaction records the runs whose rows and instances it writes ({@link Written}), or null. */
    private final Written written;

    /** The runs whose rows, and whose instances, a transaction wrote: for the reads that keep rows ({@link ActiveRunRows}, {@link HeldInstances}). */
    record Written(Set<RunId> runs, Set<RunId> instances) {
        Written() {
            this(new HashSet<>(), new HashSet<>());
        }
    }

    JdbcTx(TransactionHandle handle, UnreadableRows unreadable, Written written) {
        this.handle = handle;
        this.unreadable = unreadable;
        this.reads = new JdbcReads(handle, unreadable);
        this.written = written;
    }

    private void runWritten(RunId run) {
        if (written != null) {
            written.runs().add(run);
        }
    }

    private void instancesWritten(RunId run) {
        if (written != null) {
            written.instances().add(run);
        }
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
        if (Long.valueOf(epoch).equals(fencedAt)) {
            return;
        }
        Optional<Long> fence = handle.with(LeadershipRows::lockedFence);
        long current = fence.orElse(0L);
        if (current != epoch) {
            throw new FencedException(epoch, current);
        }
        if (fence.isPresent()) {
            fencedAt = epoch; // only a row that exists is locked
        }
    }

    @Override
    public StoredDocument createDocument(Document<?> document, Instant now) {
        return handle.with(h -> DocumentRows.create(h, document, now));
    }

    @Override
    public StoredDocument updateDocument(Document<?> document, long expectedVersion, Instant now) {
        return handle.with(h -> unreadable.orThrow(DocumentRows.update(h, document, expectedVersion, now)));
    }

    @Override
    public void deleteDocument(Kind kind, String workspace, String name, long expectedVersion) {
        run(h -> DocumentRows.delete(h, kind, workspace, name, expectedVersion));
    }

    @Override
    public void createToken(TokenRecord token) {
        run(h -> TokenRows.create(h, token));
    }

    @Override
    public boolean revokeToken(String id, Instant at) {
        return handle.with(h -> TokenRows.revoke(h, id, at));
    }

    @Override
    public boolean recordTokenUse(String id, Instant at, Instant unlessUsedSince) {
        return handle.with(h -> TokenRows.recordUse(h, id, at, unlessUsedSince));
    }

    @Override
    public boolean rehashToken(String id, String expectedHash, String hash, String hashScheme) {
        return handle.with(h -> TokenRows.rehash(h, id, expectedHash, hash, hashScheme));
    }

    @Override
    public SecretRecord createSecret(SecretRecord secret) {
        return handle.with(h -> SecretRows.create(h, secret));
    }

    @Override
    public SecretRecord updateSecret(SecretRecord secret) {
        return handle.with(h -> SecretRows.update(h, secret));
    }

    @Override
    public void deleteSecret(String workspace, String name, long expectedVersion) {
        run(h -> SecretRows.delete(h, workspace, name, expectedVersion));
    }

    @Override
    public void registerServerKey(String purpose, String keyId, Instant at) {
        run(h -> ServerKeyRows.register(h, purpose, keyId, at));
    }

    @Override
    public void addIdentityKey(io.slipstream.store.IdentityKey key) {
        run(h -> IdentityKeyRows.add(h, key));
    }

    @Override
    public void removeIdentityKey(String kid) {
        run(h -> IdentityKeyRows.remove(h, kid));
    }

    @Override
    public void replaceServerKey(String purpose, String expectedKeyId, String keyId, Instant at) {
        run(h -> ServerKeyRows.replace(h, purpose, expectedKeyId, keyId, at));
    }

    @Override
    public RunRecord createRun(RunRecord run, RunEvent created) {
        runWritten(run.id());
        return handle.with(h -> RunRows.create(h, run, created));
    }

    @Override
    public RunRecord updateRun(RunRecord run) {
        runWritten(run.id());
        return handle.with(h -> RunRows.update(h, run));
    }

    @Override
    public void releaseIdempotencyKey(RunId id) {
        runWritten(id);
        run(h -> RunRows.releaseIdempotencyKey(h, id));
    }

    @Override
    public void deleteRun(RunId id) {
        runWritten(id);
        instancesWritten(id);
        run(h -> RunRows.delete(h, id));
    }

    @Override
    public List<InstanceRecord> createInstances(List<InstanceRecord> instances) {
        instances.forEach(instance -> instancesWritten(instance.id().runId()));
        return handle.with(h -> InstanceRows.create(h, instances));
    }

    @Override
    public InstanceRecord updateInstance(InstanceRecord instance) {
        instancesWritten(instance.id().runId());
        return handle.with(h -> InstanceRows.update(h, instance));
    }

    @Override
    public RunEvent appendEvent(RunEvent event) {
        return handle.with(h -> EventRows.append(h, event));
    }

    @Override
    public void recordScheduled(String workspace, String job, Instant expectedLastDue, Instant due) {
        run(h -> ScheduleRows.record(h, workspace, job, expectedLastDue, due));
    }

    @Override
    public void markNodeDown(NodeDown down) {
        run(h -> NodeDownRows.markDown(h, down));
    }

    @Override
    public boolean markNodeUp(String node) {
        return handle.with(h -> NodeDownRows.markUp(h, node));
    }

    @Override
    public NodeCondition cordonNode(NodeCondition cordon) {
        return handle.with(h -> NodeDownRows.cordon(h, cordon));
    }

    @Override
    public boolean uncordonNode(String node) {
        return handle.with(h -> NodeDownRows.uncordon(h, node));
    }

    @Override
    public void recordUsage(List<UsageChange> changes) {
        if (!changes.isEmpty()) {
            run(h -> UsageRows.record(h, changes));
        }
    }

    /** A write that answers nothing. */
    private void run(Consumer<Handle> write) {
        handle.with(h -> {
            write.accept(h);
            return null;
        });
    }
}
