package io.slipstream.store.memory;

import io.slipstream.store.ConflictException;
import java.util.Optional;

/** The ids of the server's keys in an {@link InMemoryStore}, by purpose (the JDBC store's {@code ServerKeyRows}). */
final class ServerKeyTable {
    private ServerKeyTable() {
    }

    static Optional<String> keyId(Tables t, String purpose) {
        return Optional.ofNullable(t.serverKeys.get(purpose));
    }

    static void register(Tables t, String purpose, String keyId) {
        if (t.serverKeys.containsKey(purpose)) {
            throw new ConflictException("a " + purpose + " key is registered already");
        }
        t.serverKeys().put(purpose, keyId);
    }

    static void replace(Tables t, String purpose, String expectedKeyId, String keyId) {
        if (!expectedKeyId.equals(t.serverKeys.get(purpose))) {
            throw new ConflictException("the " + purpose + " key is not " + expectedKeyId + " (it changed meanwhile)");
        }
        t.serverKeys().put(purpose, keyId);
    }
}
