package io.slipstream.store.jdbc;

import static io.slipstream.store.jdbc.Columns.time;

import io.slipstream.store.ConflictException;
import java.time.Instant;
import java.util.Optional;
import org.jdbi.v3.core.Handle;

/**
 * The SQL of {@code server_keys}: per purpose, the id of the key the store's data of that purpose is protected with
 * (never the key), so that a server given another key file refuses to start. Registered once, moved by rotation only.
 */
final class ServerKeyRows {
    private ServerKeyRows() {
    }

    static Optional<String> keyId(Handle h, String purpose) {
        return h.createQuery("SELECT key_id FROM server_keys WHERE purpose = :purpose").bind("purpose", purpose)
                .mapTo(String.class).findOne();
    }

    /** {@link io.slipstream.store.StoreTx#registerServerKey}, inside the caller's transaction. */
    static void register(Handle h, String purpose, String keyId, Instant at) {
        if (h.createQuery("SELECT COUNT(*) FROM server_keys WHERE purpose = :purpose").bind("purpose", purpose).mapTo(Long.class).one() > 0) {
            throw new ConflictException("a " + purpose + " key is registered already");
        }
        time(h.createUpdate("INSERT INTO server_keys (purpose, key_id, created_at) VALUES (:purpose, :keyId, :at)")
                .bind("purpose", purpose).bind("keyId", keyId), "at", at).execute();
    }

    static void replace(Handle h, String purpose, String expectedKeyId, String keyId, Instant at) {
        int changed = time(h.createUpdate("UPDATE server_keys SET key_id = :keyId, created_at = :at "
                        + "WHERE purpose = :purpose AND key_id = :expected")
                .bind("purpose", purpose).bind("keyId", keyId).bind("expected", expectedKeyId), "at", at).execute();
        if (changed == 0) {
            throw new ConflictException("the " + purpose + " key is not " + expectedKeyId + " (it changed meanwhile)");
        }
    }
}
