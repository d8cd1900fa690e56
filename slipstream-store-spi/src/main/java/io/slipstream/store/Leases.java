package io.slipstream.store;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Leadership: one control loop at a time over a store that replicas share. Each call is a transaction of its own (none
 * is made inside {@link Store#write}); the leader's writes are fenced by its epoch ({@link StoreTx#requireLeader},
 * {@link FencedStore}).
 */
public interface Leases {

    /**
     * Claims the leadership for {@code holder} (unique per process start) and returns who leads afterwards: renewed
     * ({@code expiresAt = now + ttl}, same epoch) if {@code holder} leads and its lease has not expired; taken at the
     * next epoch if no one leads, the lease expired or was released (also by {@code holder} itself: whatever it did
     * under the old epoch is fenced), or (a store only one process can open, such as the embedded H2 file) whoever
     * held it cannot be alive; otherwise unchanged. A renewal never waits for open transactions that hold the fence
     * ({@link StoreTx#requireLeader}); a new epoch waits until none of the old epoch is open, or fails, changing nothing.
     */
    default Leadership claim(String holder, Instant now, Duration ttl) {
        return claim(holder, null, now, ttl);
    }

    /**
     * {@link #claim(String, Instant, Duration)}, also taking the lease at once, at the next epoch, while
     * {@code goneHolder} holds it: the caller knows that process is gone (a previous start of its own, on its
     * machine), so no one needs to wait for its lease. {@code null}: none known.
     */
    Leadership claim(String holder, String goneHolder, Instant now, Duration ttl);

    /** Who leads now, if anyone ever did. */
    Optional<Leadership> current();

    /**
     * Moves the epoch of {@code holder}'s lease from {@code epoch} to {@code past + 1}, if it still leads at
     * {@code epoch} (an executor was fenced at {@code past} already: the store's epoch went back, say with a
     * database restored from a dump); returns who leads afterwards.
     */
    Leadership advanceEpoch(String holder, long epoch, long past);

    /** Ends {@code holder}'s lease at {@code now} if it still leads at {@code epoch} (a clean stop: no one waits for it). */
    void release(String holder, long epoch, Instant now);
}
