package io.slipstream.store;

import io.slipstream.model.RunEvent;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.run.QuotaId;
import io.slipstream.model.usage.UsageChange;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Everything Slipstream persists. Every change of a versioned record is compare-and-set: it names the version it
 * read and fails with {@link ConflictException} if the stored one differs. Implementations MUST be safe for
 * concurrent use; a method called inside {@link #inTransaction} joins that transaction.
 *
 * <p>Stored records are data, read by plain binding (see {@code StoredFormat}). One that cannot be read never stops
 * the others: a lookup of it throws {@link UnreadableRecordException} naming it, and a list leaves it out (logging it
 * once at ERROR), except {@link #listRunRows}, which returns it as a {@link RunRow.Unreadable}.
 */
public interface Store extends AutoCloseable {

    /**
     * Checks that the store answers now; {@link StoreUnavailableException} if it does not (within a moment: callers
     * use it for readiness). Every other method throws the same when the store cannot be reached.
     */
    void ping();

    /** Runs {@code work} in one transaction: all its writes happen, or none do. */
    <T> T inTransaction(Function<Store, T> work);

    // --- applied documents (workspaces, shapes, quotas, jobs) ---

    /** {@code workspace} is {@code null} for cluster-wide kinds; {@link UnreadableRecordException} if it cannot be read. */
    Optional<StoredDocument> getDocument(Kind kind, String workspace, String name);

    /**
     * Documents of one kind, ordered by workspace then name, limited to {@code workspaces} ({@code null}: all).
     * For the Workspace kind the limit applies to the workspaces' own names.
     */
    List<StoredDocument> listDocuments(Kind kind, Set<String> workspaces);

    /** Stores a new document at version 1; {@link ConflictException} if it exists. */
    StoredDocument createDocument(Document<?> document, Instant now);

    /** Replaces a document if its stored version is {@code expectedVersion}; returns it at the next version. */
    StoredDocument updateDocument(Document<?> document, long expectedVersion, Instant now);

    /** Deletes a document if its stored version is {@code expectedVersion}; a deleted job's schedule state goes with it. */
    void deleteDocument(Kind kind, String workspace, String name, long expectedVersion);

    /** Names of the workspaces that list {@code user} as a member. */
    Set<String> workspacesOf(String user);

    // --- tokens ---

    void createToken(TokenRecord token);

    /** The token with this hash, whatever its hash scheme (the caller checks the scheme). */
    Optional<TokenRecord> findTokenByHash(String hash);

    List<TokenRecord> listTokens();

    /** Marks a token revoked; returns whether it existed and was not revoked already. */
    boolean revokeToken(String id, Instant at);

    boolean hasAdminToken(Instant now);

    /**
     * Records that a token authenticated a request at {@code at}, unless its recorded last use is at or after
     * {@code unlessUsedSince} (so that not every request writes); returns whether it wrote.
     */
    boolean recordTokenUse(String id, Instant at, Instant unlessUsedSince);

    /**
     * Replaces a token's hash and scheme if its hash is still {@code expectedHash} (upgrading an old scheme); returns
     * whether it did.
     */
    boolean rehashToken(String id, String expectedHash, String hash, String hashScheme);

    // --- secrets (sealed by the server: the store never sees a value in clear) ---

    Optional<SecretRecord> getSecret(String workspace, String name);

    /** Secrets ordered by workspace then name, of {@code workspaces} ({@code null}: all). */
    List<SecretRecord> listSecrets(Set<String> workspaces);

    /** Stores a new secret at version 1; {@link ConflictException} if it exists. */
    SecretRecord createSecret(SecretRecord secret);

    /** Replaces a secret's values if its stored version is {@code secret.version()}; returns it at the next version. */
    SecretRecord updateSecret(SecretRecord secret);

    /** Deletes a secret if its stored version is {@code expectedVersion}. */
    void deleteSecret(String workspace, String name, long expectedVersion);

    // --- ids registered once per store: its keys (to refuse a wrong key file) and its own identity (a wrong store) ---

    /** The id of the key the store's data of {@code purpose} is protected with, if one was registered. */
    Optional<String> serverKeyId(String purpose);

    /** Registers the key of {@code purpose}; {@link ConflictException} if one is registered already. */
    void registerServerKey(String purpose, String keyId, Instant at);

    /** Moves {@code purpose} from key {@code expectedKeyId} to {@code keyId} (a rotation); {@link ConflictException} if it moved. */
    void replaceServerKey(String purpose, String expectedKeyId, String keyId, Instant at);

    // --- leadership: one control loop at a time over a store that replicas share ---

    /**
     * Claims the leadership for {@code holder} (unique per process start) and returns who leads afterwards: renewed
     * ({@code expiresAt = now + ttl}, same epoch) if {@code holder} leads and its lease has not expired; taken at the
     * next epoch if no one leads, the lease expired or was released (also by {@code holder} itself: whatever it did
     * under the old epoch is fenced), or (a store only one process can open, such as the embedded H2 file) whoever
     * held it cannot be alive; otherwise unchanged. A renewal never waits for open transactions that hold the fence
     * ({@link #requireLeader}); a new epoch waits until none of the old epoch is open, or fails, changing nothing.
     */
    default Leadership claimLeadership(String holder, Instant now, java.time.Duration ttl) {
        return claimLeadership(holder, null, now, ttl);
    }

    /**
     * {@link #claimLeadership(String, Instant, java.time.Duration)}, also taking the lease at once, at the next epoch,
     * while {@code goneHolder} holds it: the caller knows that process is gone (a previous start of its own, on its
     * machine), so no one needs to wait for its lease. {@code null}: none known.
     */
    Leadership claimLeadership(String holder, String goneHolder, Instant now, java.time.Duration ttl);

    /** Who leads now, if anyone ever did. */
    Optional<Leadership> leadership();

    /**
     * Inside a transaction: holds the fence, the leader's epoch, until the transaction ends (a new epoch waits for it;
     * a renewal of the lease does not) and fails with {@link FencedException} unless it is {@code epoch}. Outside one:
     * checks only.
     */
    void requireLeader(long epoch);

    /**
     * Moves the epoch of {@code holder}'s lease from {@code epoch} to {@code past + 1}, if it still leads at
     * {@code epoch} (an executor was fenced at {@code past} already: the store's epoch went back, say with a
     * database restored from a dump); returns who leads afterwards.
     */
    Leadership advanceEpoch(String holder, long epoch, long past);

    /** Ends {@code holder}'s lease at {@code now} if it still leads at {@code epoch} (a clean stop: no one waits for it). */
    void releaseLeadership(String holder, long epoch, Instant now);

    // --- runs, instances, events ---

    /** Stores a new run at version 1, with its first event; {@link ConflictException} if the id is taken. */
    RunRecord createRun(RunRecord run, RunEvent created);

    /** The run; {@link UnreadableRecordException} if its row cannot be read. */
    Optional<RunRecord> getRun(RunId id);

    /** The runs of a query that can be read. */
    List<RunRecord> listRuns(RunQuery query);

    /** The runs of a query, in its order, each read or saying why it cannot be (records held as objects always can). */
    default List<RunRow> listRunRows(RunQuery query) {
        return listRuns(query).stream().<RunRow>map(RunRow.Readable::new).toList();
    }

    /** Runs not in a final state, oldest first. */
    List<RunRecord> activeRuns();

    /** Replaces a run if its stored version is {@code run.version()}; returns it at the next version. */
    RunRecord updateRun(RunRecord run);

    /** The run created with this idempotency key in this workspace, if any. */
    Optional<RunRecord> findRunByIdempotencyKey(String workspace, String key);

    /** Frees a run's idempotency key (it expired), so that a new run may take it. */
    void releaseIdempotencyKey(RunId id);

    /** Finished runs that ended before {@code cutoff}, oldest first, at most {@code limit}. */
    List<RunRecord> finishedBefore(Instant cutoff, int limit);

    /** Deletes a finished run with its instances and events; {@link ConflictException} if it is not finished. */
    void deleteRun(RunId id);

    /** The last due time the job's schedule fired for. */
    Optional<Instant> lastScheduled(String workspace, String job);

    /**
     * Moves the job's schedule from {@code expectedLastDue} ({@code null}: it never fired) to a later {@code due};
     * {@link ConflictException} if it moved meanwhile (or {@code due} is not later).
     */
    void recordScheduled(String workspace, String job, Instant expectedLastDue, Instant due);

    /** Declares a node down; if it already is, keeps the first declaration. */
    void markNodeDown(NodeDown down);

    /** Declares a node up again; returns whether it was down. */
    boolean markNodeUp(String node);

    /** The nodes declared down, by name. */
    java.util.Map<String, NodeDown> downNodes();

    /** Stores new instances at version 1. */
    List<InstanceRecord> createInstances(List<InstanceRecord> instances);

    /** The instances of every attempt of a run, by attempt then rank. */
    List<InstanceRecord> instancesOf(RunId runId);

    Optional<InstanceRecord> getInstance(InstanceId id);

    /** The instances of the current attempt of every run that is not in a final state, by run, then rank. */
    List<InstanceRecord> instancesOfActiveRuns();

    /** Instances not in a final state, of any run. */
    List<InstanceRecord> activeInstances();

    /** Replaces an instance if its stored version is {@code instance.version()}; returns it at the next version. */
    InstanceRecord updateInstance(InstanceRecord instance);

    /** Appends to a run's history and returns the event with its sequence number. */
    RunEvent appendEvent(RunEvent event);

    /** A run's events with {@code seq > afterSeq}, oldest first, at most {@code limit}. */
    List<RunEvent> eventsOf(RunId runId, long afterSeq, int limit);

    // --- usage accounting (GPU- and CPU-time by workspace, quota, user and job) ---

    /**
     * Applies usage changes in order (joining the caller's transaction, so that they commit with the change they
     * account for): a {@code Closed} ends the run's open segment, if it has one; an {@code Opened} starts one; a
     * {@code Lent} ends the quota's open lent segment and starts one with the new amount unless it is zero.
     */
    void recordUsage(List<UsageChange> changes);

    /** The totals of the query's window, one per group and kind that has any, by key. */
    List<UsageTotal> usage(UsageQuery query);

    /** What each quota lends now (its open lent segment), by quota. */
    java.util.Map<QuotaId, Resources> lending();

    @Override
    void close();
}
