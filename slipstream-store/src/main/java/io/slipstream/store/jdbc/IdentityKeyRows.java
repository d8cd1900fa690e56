package io.slipstream.store.jdbc;

import static io.slipstream.store.jdbc.Columns.time;

import io.slipstream.store.ConflictException;
import io.slipstream.store.IdentityKey;
import java.util.List;
import org.jdbi.v3.core.Handle;

/** The SQL of {@code identity_keys}: the keys that sign runs' identity tokens, added and removed, never changed. */
final class IdentityKeyRows {
    private IdentityKeyRows() {
    }

    static List<IdentityKey> list(Handle h) {
        return h.createQuery("SELECT kid, created_at, private_key, public_jwk FROM identity_keys ORDER BY created_at, kid")
                .map((rs, ctx) -> new IdentityKey(rs.getString("kid"), Columns.instant(rs, "created_at"), rs.getString("private_key"),
                        rs.getString("public_jwk")))
                .list();
    }

    static void add(Handle h, IdentityKey key) {
        if (h.createQuery("SELECT COUNT(*) FROM identity_keys WHERE kid = :kid").bind("kid", key.kid()).mapTo(Long.class).one() > 0) {
            throw new ConflictException("an identity key " + key.kid() + " exists already");
        }
        time(h.createUpdate("INSERT INTO identity_keys (kid, created_at, private_key, public_jwk) VALUES (:kid, :at, :privateKey, :jwk)")
                .bind("kid", key.kid()).bind("privateKey", key.sealedPrivateKey()).bind("jwk", key.publicJwk()), "at", key.createdAt()).execute();
    }

    static void remove(Handle h, String kid) {
        h.createUpdate("DELETE FROM identity_keys WHERE kid = :kid").bind("kid", kid).execute();
    }
}
