package io.slipstream.store;

import java.time.Instant;

/**
 * Who leads the control loop over a store, as the store records it: the holder (one process, one start), the epoch
 * it leads at (one more at every change of holder), and until when its lease holds unless renewed.
 */
public record Leadership(String holder, long epoch, Instant renewedAt, Instant expiresAt) {
    public boolean heldBy(String candidate) {
        return holder.equals(candidate); // null: no one
    }

    public boolean expiredAt(Instant now) {
        return !now.isBefore(expiresAt);
    }
}
