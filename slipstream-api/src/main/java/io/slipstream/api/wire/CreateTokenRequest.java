package io.slipstream.api.wire;

/** Body of {@code POST /api/v1/tokens}. {@code expiresInDays} is optional (no expiry when absent). */
public record CreateTokenRequest(String user, Boolean admin, String description, Integer expiresInDays) {
}
