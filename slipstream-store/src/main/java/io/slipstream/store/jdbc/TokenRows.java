package io.slipstream.store.jdbc;

import static io.slipstream.store.jdbc.Columns.instant;
import static io.slipstream.store.jdbc.Columns.time;

import io.slipstream.store.TokenRecord;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.StatementContext;

/**
 * The SQL of {@code tokens}: one row per token, found by its hash (unique; the server computes it, the store never
 * sees a token). Each change is one conditional statement (revoked only once, a use recorded only when the last is
 * older, a hash replaced only if it is still the one read), so none needs a transaction of its own.
 */
final class TokenRows {
    private TokenRows() {
    }

    static void create(Handle h, TokenRecord token) {
        time(time(time(time(h.createUpdate("INSERT INTO tokens (id, hash, hash_scheme, user_name, admin, description, created_at, "
                                + "expires_at, revoked_at, last_used_at) VALUES (:id, :hash, :scheme, :user, :admin, :description, :created, :expires, "
                                + ":revoked, :lastUsed)")
                        .bind("id", token.id())
                        .bind("hash", token.hash())
                        .bind("scheme", token.hashScheme())
                        .bind("user", token.user())
                        .bind("admin", token.admin())
                        .bind("description", token.description()), "created", token.createdAt()), "expires", token.expiresAt()),
                "revoked", token.revokedAt()), "lastUsed", token.lastUsedAt())
                .execute();
    }

    static Optional<TokenRecord> findByHash(Handle h, String hash) {
        return h.createQuery("SELECT * FROM tokens WHERE hash = :hash").bind("hash", hash).map(TokenRows::token).findOne();
    }

    static List<TokenRecord> list(Handle h) {
        return h.createQuery("SELECT * FROM tokens ORDER BY created_at, id").map(TokenRows::token).list();
    }

    static boolean hasAdmin(Handle h, Instant now) {
        return list(h).stream().anyMatch(t -> t.admin() && t.isUsableAt(now));
    }

    static boolean revoke(Handle h, String id, Instant at) {
        return time(h.createUpdate("UPDATE tokens SET revoked_at = :at WHERE id = :id AND revoked_at IS NULL")
                .bind("id", id), "at", at)
                .execute() > 0;
    }

    static boolean recordUse(Handle h, String id, Instant at, Instant unlessUsedSince) {
        return time(time(h.createUpdate("UPDATE tokens SET last_used_at = :at WHERE id = :id "
                        + "AND (last_used_at IS NULL OR last_used_at < :since)")
                .bind("id", id), "at", at), "since", unlessUsedSince)
                .execute() > 0;
    }

    static boolean rehash(Handle h, String id, String expectedHash, String hash, String hashScheme) {
        return h.createUpdate("UPDATE tokens SET hash = :hash, hash_scheme = :scheme WHERE id = :id AND hash = :expected")
                .bind("id", id)
                .bind("expected", expectedHash)
                .bind("hash", hash)
                .bind("scheme", hashScheme)
                .execute() > 0;
    }

    private static TokenRecord token(ResultSet rs, StatementContext ctx) throws SQLException {
        return new TokenRecord(rs.getString("id"), rs.getString("hash"), rs.getString("hash_scheme"), rs.getString("user_name"),
                rs.getBoolean("admin"), rs.getString("description"), instant(rs, "created_at"), instant(rs, "expires_at"),
                instant(rs, "revoked_at"), instant(rs, "last_used_at"));
    }
}
