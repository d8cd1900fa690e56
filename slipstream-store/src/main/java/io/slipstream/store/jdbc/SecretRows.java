package io.slipstream.store.jdbc;

import static io.slipstream.store.jdbc.Columns.STRING_MAP;
import static io.slipstream.store.jdbc.Columns.instant;
import static io.slipstream.store.jdbc.Columns.time;

import io.slipstream.api.codec.Json;
import io.slipstream.store.ConflictException;
import io.slipstream.store.SecretRecord;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.StatementContext;

/**
 * The SQL of {@code secrets}: one row per workspace and name, its values sealed by the server ({@code data}, JSON of
 * key to sealed value, with the {@code key_id} they are sealed under), compare-and-set on {@code version}.
 */
final class SecretRows {
    private SecretRows() {
    }

    static Optional<SecretRecord> get(Handle h, String workspace, String name) {
        return h.createQuery("SELECT * FROM secrets WHERE workspace = :workspace AND name = :name")
                .bind("workspace", workspace)
                .bind("name", name)
                .map(SecretRows::secret)
                .findOne();
    }

    static List<SecretRecord> list(Handle h, Set<String> workspaces) {
        if (workspaces != null && workspaces.isEmpty()) {
            return List.of();
        }
        var query = h.createQuery("SELECT * FROM secrets" + (workspaces == null ? "" : " WHERE workspace IN (<workspaces>)")
                + " ORDER BY workspace, name");
        if (workspaces != null) {
            query.bindList("workspaces", new ArrayList<>(workspaces));
        }
        return query.map(SecretRows::secret).list();
    }

    /** {@link io.slipstream.store.StoreTx#createSecret}, inside the caller's transaction. */
    static SecretRecord create(Handle h, SecretRecord secret) {
        boolean exists = h.createQuery("SELECT COUNT(*) FROM secrets WHERE workspace = :workspace AND name = :name")
                .bind("workspace", secret.workspace())
                .bind("name", secret.name())
                .mapTo(Long.class).one() > 0;
        if (exists) {
            throw new ConflictException("Secret " + secret.workspace() + "/" + secret.name() + " already exists");
        }
        SecretRecord stored = new SecretRecord(secret.workspace(), secret.name(), secret.keyId(), secret.sealed(), 1, secret.createdAt(),
                secret.updatedAt());
        time(time(h.createUpdate("INSERT INTO secrets (workspace, name, key_id, data, version, created_at, updated_at) "
                        + "VALUES (:workspace, :name, :keyId, :data, 1, :created, :updated)")
                .bind("workspace", stored.workspace())
                .bind("name", stored.name())
                .bind("keyId", stored.keyId())
                .bind("data", Json.mapper().writeValueAsString(stored.sealed())), "created", stored.createdAt()), "updated", stored.updatedAt())
                .execute();
        return stored;
    }

    static SecretRecord update(Handle h, SecretRecord secret) {
        int updated = time(h.createUpdate("UPDATE secrets SET key_id = :keyId, data = :data, version = version + 1, "
                        + "updated_at = :updated WHERE workspace = :workspace AND name = :name AND version = :version")
                .bind("workspace", secret.workspace())
                .bind("name", secret.name())
                .bind("keyId", secret.keyId())
                .bind("data", Json.mapper().writeValueAsString(secret.sealed()))
                .bind("version", secret.version()), "updated", secret.updatedAt())
                .execute();
        if (updated == 0) {
            throw new ConflictException("Secret " + secret.workspace() + "/" + secret.name() + " is not at version " + secret.version()
                    + " (it was changed or deleted meanwhile)");
        }
        return new SecretRecord(secret.workspace(), secret.name(), secret.keyId(), secret.sealed(), secret.version() + 1, secret.createdAt(),
                secret.updatedAt());
    }

    static void delete(Handle h, String workspace, String name, long expectedVersion) {
        int deleted = h.createUpdate("DELETE FROM secrets WHERE workspace = :workspace AND name = :name AND version = :version")
                .bind("workspace", workspace)
                .bind("name", name)
                .bind("version", expectedVersion)
                .execute();
        if (deleted == 0) {
            throw new ConflictException("Secret " + workspace + "/" + name + " is not at version " + expectedVersion);
        }
    }

    private static SecretRecord secret(ResultSet rs, StatementContext ctx) throws SQLException {
        return new SecretRecord(rs.getString("workspace"), rs.getString("name"), rs.getString("key_id"),
                Json.mapper().readValue(rs.getString("data"), STRING_MAP), rs.getLong("version"), instant(rs, "created_at"),
                instant(rs, "updated_at"));
    }
}
