package io.slipstream.store;

import static java.util.Objects.requireNonNull;

import java.time.Instant;

/**
 * A key the server signs runs' identity tokens with: its id ({@code kid} in the tokens and the JWKS), when it was
 * made, its private half sealed by the server (the store never holds it in clear) and its public half as the JSON Web
 * Key the server publishes.
 */
public record IdentityKey(String kid, Instant createdAt, String sealedPrivateKey, String publicJwk) {
    public IdentityKey {
        requireNonNull(kid, "kid is null");
        requireNonNull(createdAt, "createdAt is null");
        requireNonNull(sealedPrivateKey, "sealedPrivateKey is null");
        requireNonNull(publicJwk, "publicJwk is null");
    }

    @Override
    public String toString() {
        return "IdentityKey[" + kid + ", " + createdAt + "]"; // the sealed key stays out of logs
    }
}
