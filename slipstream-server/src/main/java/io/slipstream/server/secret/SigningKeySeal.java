package io.slipstream.server.secret;

import io.slipstream.api.spec.SecretValue;
import io.slipstream.store.IdentityKey;

/**
 * How the private halves of the keys that sign runs' identity tokens are sealed in the store: with the secrets key, as
 * Secrets are, bound to the key's id. No Secret has an empty workspace, so no sealed value of a Secret opens as a key
 * or the other way round. Kept beside {@link ServerKeys}, which seals them again when the secrets key is rotated.
 */
public final class SigningKeySeal {
    private static final String WORKSPACE = "";
    private static final String NAME = "identity-key";

    private SigningKeySeal() {
    }

    public static String seal(SecretCipher cipher, String kid, SecretValue privateKey) {
        return cipher.seal(WORKSPACE, NAME, kid, privateKey);
    }

    /** @throws SecretCipher.SecretUnreadableException if it was sealed with another key, for another id, or altered */
    public static SecretValue open(SecretCipher cipher, String kid, String sealed) {
        return cipher.open(WORKSPACE, NAME, kid, sealed);
    }

    /** The key sealed again with {@code to}; one that does not open with {@code from} is returned as it is. */
    static IdentityKey resealed(IdentityKey key, SecretCipher from, SecretCipher to) {
        try {
            SecretValue open = open(from, key.kid(), key.sealedPrivateKey());
            return new IdentityKey(key.kid(), key.createdAt(), seal(to, key.kid(), open), key.publicJwk());
        } catch (SecretCipher.SecretUnreadableException e) {
            return key;
        }
    }
}
