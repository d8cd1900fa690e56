package io.slipstream.api.wire;

import java.time.Instant;

/**
 * An API token. {@code token} (the secret) is present once, in the response that created it. {@code lastUsedAt}: when
 * it last authenticated a request, to the minute ({@code null}: never).
 */
public record TokenView(String id, String user, boolean admin, String description, Instant createdAt, Instant expiresAt,
                        Instant revokedAt, Instant lastUsedAt, String token) {
}
