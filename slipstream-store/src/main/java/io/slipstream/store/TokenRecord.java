package io.slipstream.store;

import static java.util.Objects.requireNonNull;

import java.time.Instant;

/**
 * An API token as stored: only the SHA-256 of the secret is kept ({@code hash}, hex), never the secret.
 * Tokens carry 256 random bits, so an unsalted fast hash is enough: there is nothing to guess.
 */
public record TokenRecord(String id, String hash, String user, boolean admin, String description, Instant createdAt,
                          Instant expiresAt, Instant revokedAt) {
    public TokenRecord {
        requireNonNull(id, "id is null");
        requireNonNull(hash, "hash is null");
        requireNonNull(user, "user is null");
        requireNonNull(createdAt, "createdAt is null");
    }

    public boolean isUsableAt(Instant now) {
        return revokedAt == null && (expiresAt == null || now.isBefore(expiresAt));
    }
}
