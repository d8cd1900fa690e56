package io.slipstream.store;

import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.Kind;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.model.usage.UsageChange;
import java.time.Instant;
import java.util.List;

/**
 * One open transaction of {@link Store#write}: every write, and the reads ({@link StoreReads}) of what the transaction
 * sees, its own writes included. It is the work's alone (one thread) and only until the work returns.
 */
public interface StoreTx extends StoreReads {

    /**
     * Holds the fence, the leader's epoch, until the transaction ends (a new epoch waits for it; a renewal of the lease
     * does not) and fails with {@link FencedException} unless it is {@code epoch}.
     */
    void requireLeader(long epoch);

    // --- applied documents ---

    /** Stores a new document at version 1; {@link ConflictException} if it exists. */
    StoredDocument createDocument(Document<?> document, Instant now);

    /** Replaces a document if its stored version is {@code expectedVersion}; returns it at the next version. */
    StoredDocument updateDocument(Document<?> document, long expectedVersion, Instant now);

    /** Deletes a document if its stored version is {@code expectedVersion}; a deleted job's schedule state goes with it. */
    void deleteDocument(Kind kind, String workspace, String name, long expectedVersion);

    // --- tokens, secrets, server keys ---

    void createToken(TokenRecord token);

    /** Marks a token revoked; returns whether it existed and was not revoked already. */
    boolean revokeToken(String id, Instant at);

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

    /** Stores a new secret at version 1; {@link ConflictException} if it exists. */
    SecretRecord createSecret(SecretRecord secret);

    /** Replaces a secret's values if its stored version is {@code secret.version()}; returns it at the next version. */
    SecretRecord updateSecret(SecretRecord secret);

    /** Deletes a secret if its stored version is {@code expectedVersion}. */
    void deleteSecret(String workspace, String name, long expectedVersion);

    /** Registers the key of {@code purpose}; {@link ConflictException} if one is registered already. */
    void registerServerKey(String purpose, String keyId, Instant at);

    /** Moves {@code purpose} from key {@code expectedKeyId} to {@code keyId} (a rotation); {@link ConflictException} if it moved. */
    void replaceServerKey(String purpose, String expectedKeyId, String keyId, Instant at);

    // --- runs, instances, events, schedules, nodes ---

    /** Adds a signing key of identity tokens. @throws ConflictException if one with its id exists */
    void addIdentityKey(IdentityKey key);

    /** Removes a signing key of identity tokens (none with that id: nothing happens). */
    void removeIdentityKey(String kid);

    /** Stores a new run at version 1, with its first event; {@link ConflictException} if the id is taken. */
    RunRecord createRun(RunRecord run, RunEvent created);

    /** Replaces a run if its stored version is {@code run.version()}; returns it at the next version. */
    RunRecord updateRun(RunRecord run);

    /** Frees a run's idempotency key (it expired), so that a new run may take it. */
    void releaseIdempotencyKey(RunId id);

    /** Deletes a finished run with its instances and events; {@link ConflictException} if it is not finished. */
    void deleteRun(RunId id);

    /** Stores new instances at version 1. */
    List<InstanceRecord> createInstances(List<InstanceRecord> instances);

    /** Replaces an instance if its stored version is {@code instance.version()}; returns it at the next version. */
    InstanceRecord updateInstance(InstanceRecord instance);

    /** Appends to a run's history and returns the event with its sequence number. */
    RunEvent appendEvent(RunEvent event);

    /**
     * Moves the job's schedule from {@code expectedLastDue} ({@code null}: it never fired) to a later {@code due};
     * {@link ConflictException} if it moved meanwhile (or {@code due} is not later).
     */
    void recordScheduled(String workspace, String job, Instant expectedLastDue, Instant due);

    /**
     * Declares a node down; if it already is, keeps the first declaration. Down wins: a cordoned or draining node
     * becomes down ({@link NodeCondition#afterDown}).
     */
    void markNodeDown(NodeDown down);

    /** Declares a node up again; returns whether it was down. A cordon or drain is not lifted ({@link #uncordonNode}). */
    boolean markNodeUp(String node);

    /**
     * Cordons or drains a node ({@code cordon.mode()} {@code Cordoned} or {@code Draining}) as {@link NodeCondition#afterCordon}
     * says: a ready node takes it, a cordoned node that is drained is draining, anything else stays (a down node is
     * down, a drain goes on, a second cordon keeps the first). Returns the node's condition after.
     */
    NodeCondition cordonNode(NodeCondition cordon);

    /** Lifts a cordon or drain; returns whether there was one. A node down stays down ({@link #markNodeUp} lifts it). */
    boolean uncordonNode(String node);

    // --- usage ---

    /**
     * Applies usage changes in order, so that they commit with the change they account for: a {@code Closed} ends the
     * run's open segment, if it has one; an {@code Opened} starts one; a {@code Lent} ends the quota's open lent
     * segment and starts one with the new amount unless it is zero; a {@code Measured} adds an ended instance's CPU time
     * to the hour and the day it ended in (no open segment changes).
     */
    void recordUsage(List<UsageChange> changes);
}
