package io.slipstream.store;

/**
 * What can be read, by concern. On a {@link Store} each call reads what was committed when it ran; on a
 * {@link StoreTx} it reads the transaction's state, its own writes included.
 */
public interface StoreReads {
    /** Runs, their instances and events, schedules and the nodes declared down: what the control loop reads. */
    RunReads runs();

    /** Applied documents (workspaces, shapes, quotas, jobs). */
    DocumentReads documents();

    /** Tokens, secrets (sealed) and the ids of the server's keys. */
    CredentialReads credentials();

    /** Usage accounting (GPU- and CPU-time by workspace, quota, user and job). */
    UsageReads usage();
}
