package io.slipstream.store;

import static java.util.Objects.requireNonNull;

import java.time.Instant;

/**
 * An API token as stored: never the secret, only {@code hash} (hex) made by {@code hashScheme}: {@link #HMAC_SHA256}
 * (HMAC-SHA256, keyed with the server's token pepper, of the secret's SHA-256), or {@link #SHA256} for tokens stored
 * by versions that kept the plain SHA-256 (the server upgrades those at start). {@code lastUsedAt}: when it last
 * authenticated a request, to about a minute ({@code null}: never).
 */
public record TokenRecord(String id, String hash, String hashScheme, String user, boolean admin, String description, Instant createdAt,
                          Instant expiresAt, Instant revokedAt, Instant lastUsedAt) {
    public static final String HMAC_SHA256 = "hmac-sha256";
    public static final String SHA256 = "sha256";

    public TokenRecord {
        requireNonNull(id, "id is null");
        requireNonNull(hash, "hash is null");
        requireNonNull(hashScheme, "hashScheme is null");
        requireNonNull(user, "user is null");
        requireNonNull(createdAt, "createdAt is null");
        if (!hashScheme.equals(HMAC_SHA256) && !hashScheme.equals(SHA256)) {
            throw new IllegalArgumentException("unknown hash scheme " + hashScheme);
        }
    }

    /** A new token, hashed with {@link #HMAC_SHA256}, never used. */
    public TokenRecord(String id, String hash, String user, boolean admin, String description, Instant createdAt, Instant expiresAt,
                       Instant revokedAt) {
        this(id, hash, HMAC_SHA256, user, admin, description, createdAt, expiresAt, revokedAt, null);
    }

    public boolean isUsableAt(Instant now) {
        return revokedAt == null && (expiresAt == null || now.isBefore(expiresAt));
    }

    @Override
    public String toString() {
        return "TokenRecord[id=" + id + ", user=" + user + ", admin=" + admin + "]"; // the hash stays out of logs
    }
}
