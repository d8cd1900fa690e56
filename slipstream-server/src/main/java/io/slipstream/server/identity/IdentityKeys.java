package io.slipstream.server.identity;

import io.slipstream.api.codec.Json;
import io.slipstream.api.spec.SecretValue;
import io.slipstream.server.secret.SecretCipher;
import io.slipstream.store.IdentityKey;
import io.slipstream.store.Store;
import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keys that sign runs' identity tokens: ECDSA P-256 (ES256), one signing at a time. The newest key signs until it
 * is {@code rotation} old; then a new one is made and stored (by whichever replica needs it first: two made at once
 * both stay valid). A key stays published until no token it signed can still be valid ({@code rotation} + the longest
 * token lifetime after it was made), then it is removed. The private half is stored sealed with the secrets key, as
 * Secrets are; one that no longer opens (the secrets key was replaced) is not used again, and a new key is made.
 */
public final class IdentityKeys {
    private static final Logger LOG = LoggerFactory.getLogger(IdentityKeys.class);
    /** The sealed private keys' associated data: no Secret can have an empty workspace, so none can be swapped in. */
    private static final String SEAL_WORKSPACE = "";
    private static final String SEAL_NAME = "identity-key";
    private static final Base64.Encoder URL = Base64.getUrlEncoder().withoutPadding();

    private final Store store;
    private final SecretCipher cipher;
    private final Clock clock;
    private final Duration rotation;
    private final Duration longestToken;
    private final Map<String, PrivateKey> opened = new ConcurrentHashMap<>();
    /** How long the published keys are served from memory. */
    static final Duration PUBLISHED_FOR = Duration.ofSeconds(10);
    private volatile Published published;

    private record Published(Instant at, List<Map<String, Object>> keys) {
    }

    /** A key to sign with, and its id. */
    public record Signing(String kid, PrivateKey key) {
        @Override
        public String toString() {
            return "Signing[" + kid + "]";
        }
    }

    public IdentityKeys(Store store, SecretCipher cipher, Clock clock, Duration rotation, Duration longestToken) {
        if (rotation.isNegative() || rotation.isZero()) {
            throw new IllegalArgumentException("the rotation period must be positive, not " + rotation);
        }
        this.store = store;
        this.cipher = cipher;
        this.clock = clock;
        this.rotation = rotation;
        this.longestToken = longestToken;
    }

    /** The longest a token signed with these keys may live: a key stays published that long after it stopped signing. */
    public Duration longestToken() {
        return longestToken;
    }

    /** The key to sign with now: the newest younger than the rotation period that opens, else a new one (stored first). */
    public synchronized Signing current() {
        Instant now = clock.instant();
        List<IdentityKey> keys = store.credentials().identityKeys();
        for (int i = keys.size() - 1; i >= 0; i--) {
            IdentityKey key = keys.get(i);
            if (!key.createdAt().plus(rotation).isAfter(now)) {
                break; // older ones are older still
            }
            PrivateKey open = open(key);
            if (open != null) {
                return new Signing(key.kid(), open);
            }
        }
        KeyPair pair = generate();
        String kid = kid((ECPublicKey) pair.getPublic());
        IdentityKey made = new IdentityKey(kid, now, cipher.seal(SEAL_WORKSPACE, SEAL_NAME, kid,
                SecretValue.of(Base64.getEncoder().encodeToString(pair.getPrivate().getEncoded()))), Json.mapper().writeValueAsString(jwk(kid, (ECPublicKey) pair.getPublic())));
        store.commit(tx -> {
            tx.addIdentityKey(made);
            keys.stream().filter(key -> !published(key, now)).forEach(key -> tx.removeIdentityKey(key.kid()));
        });
        opened.put(kid, pair.getPrivate());
        published = null; // the new key is published before its first token leaves
        LOG.info("identity tokens are signed with a new key, {}", kid);
        return new Signing(kid, pair.getPrivate());
    }

    /**
     * The public keys a token valid now may be signed with, as JSON Web Keys (the JWKS's {@code keys}). Read from the
     * store at most every {@link #PUBLISHED_FOR} (anyone may ask, without a token), and at once after this server made a key.
     */
    public List<Map<String, Object>> published() {
        Instant now = clock.instant();
        Published last = published;
        if (last != null && now.isBefore(last.at().plus(PUBLISHED_FOR)) && !now.isBefore(last.at())) {
            return last.keys();
        }
        List<Map<String, Object>> keys = read(now);
        published = new Published(now, keys);
        return keys;
    }

    private List<Map<String, Object>> read(Instant now) {
        List<Map<String, Object>> keys = new ArrayList<>();
        for (IdentityKey key : store.credentials().identityKeys()) {
            if (published(key, now)) {
                @SuppressWarnings("unchecked")
                Map<String, Object> jwk = Json.mapper().readValue(key.publicJwk(), Map.class);
                keys.add(Map.copyOf(jwk));
            }
        }
        return List.copyOf(keys);
    }

    /** Whether a token this key signed may still be valid: it signed until {@code rotation} after it was made. */
    private boolean published(IdentityKey key, Instant now) {
        return key.createdAt().plus(rotation).plus(longestToken).isAfter(now);
    }

    private PrivateKey open(IdentityKey key) {
        PrivateKey known = opened.get(key.kid());
        if (known != null) {
            return known;
        }
        try {
            SecretValue value = cipher.open(SEAL_WORKSPACE, SEAL_NAME, key.kid(), key.sealedPrivateKey());
            PrivateKey open = KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(value.reveal())));
            opened.put(key.kid(), open);
            return open;
        } catch (SecretCipher.SecretUnreadableException | GeneralSecurityException | IllegalArgumentException e) {
            LOG.warn("identity key {} cannot be used to sign ({}); a new one is made", key.kid(), e.getMessage());
            return null;
        }
    }

    private static KeyPair generate() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"));
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JVM cannot make P-256 keys", e);
        }
    }

    /** A key's id: a digest of its public half (RFC 7638's thumbprint), so replicas that make keys at once never collide. */
    static String kid(ECPublicKey key) {
        Map<String, Object> jwk = jwk(null, key);
        String canonical = "{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"" + jwk.get("x") + "\",\"y\":\"" + jwk.get("y") + "\"}";
        try {
            return URL.encodeToString(MessageDigest.getInstance("SHA-256").digest(canonical.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /** The public key as a JSON Web Key (RFC 7517/7518): P-256 coordinates of 32 bytes each, base64url. */
    static Map<String, Object> jwk(String kid, ECPublicKey key) {
        Map<String, Object> jwk = new LinkedHashMap<>();
        jwk.put("kty", "EC");
        jwk.put("crv", "P-256");
        jwk.put("x", URL.encodeToString(coordinate(key.getW().getAffineX())));
        jwk.put("y", URL.encodeToString(coordinate(key.getW().getAffineY())));
        if (kid != null) {
            jwk.put("kid", kid);
            jwk.put("use", "sig");
            jwk.put("alg", "ES256");
        }
        return jwk;
    }

    private static byte[] coordinate(BigInteger value) {
        byte[] bytes = value.toByteArray();
        byte[] fixed = new byte[32];
        int length = Math.min(bytes.length, 32);
        System.arraycopy(bytes, bytes.length - length, fixed, 32 - length, length);
        return fixed;
    }
}
