package io.slipstream.store.memory;

import static io.slipstream.store.memory.Stored.micros;

import io.slipstream.store.ConflictException;
import io.slipstream.store.SecretRecord;
import io.slipstream.store.memory.Tables.NameKey;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** Sealed secrets in an {@link InMemoryStore}, by workspace and name (the JDBC store's {@code SecretRows}). */
final class SecretTable {
    private SecretTable() {
    }

    static Optional<SecretRecord> get(Tables t, String workspace, String name) {
        return Optional.ofNullable(t.secrets.get(new NameKey(workspace, name)));
    }

    static List<SecretRecord> list(Tables t, Set<String> workspaces) {
        if (workspaces != null && workspaces.isEmpty()) {
            return List.of();
        }
        return t.secrets.values().stream().filter(s -> workspaces == null || workspaces.contains(s.workspace())).toList();
    }

    static SecretRecord create(Tables t, SecretRecord secret) {
        NameKey key = new NameKey(secret.workspace(), secret.name());
        if (t.secrets.containsKey(key)) {
            throw new ConflictException("Secret " + secret.workspace() + "/" + secret.name() + " already exists");
        }
        t.secrets().put(key, new SecretRecord(secret.workspace(), secret.name(), secret.keyId(), secret.sealed(), 1,
                micros(secret.createdAt()), micros(secret.updatedAt())));
        return new SecretRecord(secret.workspace(), secret.name(), secret.keyId(), secret.sealed(), 1, secret.createdAt(),
                secret.updatedAt());
    }

    static SecretRecord update(Tables t, SecretRecord secret) {
        NameKey key = new NameKey(secret.workspace(), secret.name());
        SecretRecord stored = t.secrets.get(key);
        if (stored == null || stored.version() != secret.version()) {
            throw new ConflictException("Secret " + secret.workspace() + "/" + secret.name() + " is not at version " + secret.version()
                    + " (it was changed or deleted meanwhile)");
        }
        t.secrets().put(key, new SecretRecord(secret.workspace(), secret.name(), secret.keyId(), secret.sealed(), secret.version() + 1,
                stored.createdAt(), micros(secret.updatedAt())));
        return new SecretRecord(secret.workspace(), secret.name(), secret.keyId(), secret.sealed(), secret.version() + 1,
                secret.createdAt(), secret.updatedAt());
    }

    static void delete(Tables t, String workspace, String name, long expectedVersion) {
        NameKey key = new NameKey(workspace, name);
        SecretRecord stored = t.secrets.get(key);
        if (stored == null || stored.version() != expectedVersion) {
            throw new ConflictException("Secret " + workspace + "/" + name + " is not at version " + expectedVersion);
        }
        t.secrets().remove(key);
    }
}
