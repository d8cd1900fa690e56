package io.slipstream.server.identity;

import io.slipstream.api.codec.Json;
import io.slipstream.api.spec.SecretValue;
import io.slipstream.server.secret.SecretCipher;
import io.slipstream.server.secret.SigningKeySeal;
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
 * token lifetime after it was made), then it is removed. The private half is stored sealed with the secrets key
 * ({@link SigningKeySeal}; sealed again when that key is rotated); one that does not open is not used, and a new key is made.
 */
public final class IdentityKeys {
    private static final Logger LOG = LoggerFactory.getLogger(IdentityKeys.class);
    private static final Base64.Encoder URL = Base64.getUrlEncoder().withoutPadding();

    private final Store store;
    private final SecretCipher cipher;
    private final Clock clock;
    private final Duration rotation;
    private final Duration longestToken;
    private final Map<String, PrivateKey> opened = new ConcurrentHashMap<>();
    private final java.util.Set<String> unreadable = ConcurrentHashMap.newKeySet();
    /** How long the published keys are served from memory. */
    static final Duration PUBLISHED_FOR = Duration.ofSeconds(10);
    /** How long a new key is published before it signs: longer than verifiers and replicas cache the key set. */
    public static final Duration AHEAD = Duration.ofMinutes(5);
    /** How long a key stays published after the last token it signed has expired: for verifiers' clocks and leeway. */
    static final Duration LEEWAY = Duration.ofMinutes(5);
    private final java.util.concurrent.atomic.AtomicLong generation = new java.util.concurrent.atomic.AtomicLong();
    private volatile Published published;

    private record Published(Instant at, long generation, List<Map<String, Object>> keys) {
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

    /**
     * The key to sign with now. A new key is made (and stored) once the newest is {@code rotation} old; it signs only
     * once it has been published for {@link #AHEAD} (verifiers and replicas cache the key set), the previous key signing
     * meanwhile. With no key that opens, one is made and signs at once.
     */
    public synchronized Signing current() {
        Instant now = clock.instant();
        List<IdentityKey> keys = store.credentials().identityKeys();
        List<IdentityKey> usable = new ArrayList<>();
        for (IdentityKey key : keys) {
            if (key.createdAt().plus(rotation).plus(AHEAD).isAfter(now) && open(key) != null) {
                usable.add(key);
            }
        }
        if (usable.isEmpty() || !usable.get(usable.size() - 1).createdAt().plus(rotation).isAfter(now)) {
            usable.add(make(keys, now));
        }
        IdentityKey signing = usable.get(usable.size() - 1);
        for (int i = usable.size() - 1; i >= 0; i--) {
            if (!usable.get(i).createdAt().plus(AHEAD).isAfter(now)) {
                signing = usable.get(i); // the newest published long enough
                break;
            }
        }
        return new Signing(signing.kid(), opened.get(signing.kid()));
    }

    /** Makes and stores a key; removes the keys no valid token can have been signed with. */
    private IdentityKey make(List<IdentityKey> keys, Instant now) {
        KeyPair pair = generate();
        String kid = kid((ECPublicKey) pair.getPublic());
        IdentityKey made = new IdentityKey(kid, now, SigningKeySeal.seal(cipher, kid,
                SecretValue.of(Base64.getEncoder().encodeToString(pair.getPrivate().getEncoded()))), Json.mapper().writeValueAsString(jwk(kid, (ECPublicKey) pair.getPublic())));
        List<IdentityKey> retired = keys.stream().filter(key -> !published(key, now)).toList();
        store.commit(tx -> {
            tx.addIdentityKey(made);
            retired.forEach(key -> tx.removeIdentityKey(key.kid()));
        });
        store.awaitDurable(); // made within a control cycle, whose writes are not waited for: it signs tokens executors get
        retired.forEach(key -> {
            opened.remove(key.kid());
            unreadable.remove(key.kid());
        });
        opened.put(kid, pair.getPrivate());
        generation.incrementAndGet(); // the key set served changes now, a while before the new key signs
        LOG.info("identity tokens: made key {}; it signs from {}", kid, now.plus(AHEAD));
        return made;
    }

    /**
     * The public keys a token valid now may be signed with, as JSON Web Keys (the JWKS's {@code keys}). Read from the
     * store at most every {@link #PUBLISHED_FOR} (anyone may ask, without a token), and at once after this server made a key.
     */
    public List<Map<String, Object>> published() {
        Instant now = clock.instant();
        Published last = published;
        long seen = generation.get();
        if (last != null && last.generation() == seen && now.isBefore(last.at().plus(PUBLISHED_FOR)) && !now.isBefore(last.at())) {
            return last.keys();
        }
        List<Map<String, Object>> keys = read(now);
        published = new Published(now, seen, keys); // a key made meanwhile moved the generation on: this one is read again
        return keys;
    }

    /**
     * The stored keys still published, each rebuilt from its coordinates and served only if its id is their thumbprint
     * (a row changed in the store is left out, and does not stop the others from being served).
     */
    private List<Map<String, Object>> read(Instant now) {
        List<Map<String, Object>> keys = new ArrayList<>();
        for (IdentityKey key : store.credentials().identityKeys()) {
            if (!published(key, now)) {
                continue;
            }
            try {
                @SuppressWarnings("unchecked")
                Map<String, Object> stored = Json.mapper().readValue(key.publicJwk(), Map.class);
                Map<String, Object> jwk = verifiedJwk(key.kid(), stored.get("x"), stored.get("y"));
                if (jwk == null) {
                    LOG.warn("identity key {} is not published: its stored public key does not match its id", key.kid());
                    continue;
                }
                keys.add(jwk);
            } catch (RuntimeException e) {
                LOG.warn("identity key {} is not published: its stored public key cannot be read ({})", key.kid(), e.getMessage());
            }
        }
        return List.copyOf(keys);
    }

    /** A published JWK of these coordinates, or {@code null} unless {@code kid} is their thumbprint. */
    private static Map<String, Object> verifiedJwk(String kid, Object x, Object y) {
        if (!(x instanceof String xs) || !(y instanceof String ys) || !kid.equals(thumbprint(xs, ys))) {
            return null;
        }
        return jwk(kid, xs, ys);
    }

    /** The JSON Web Key (RFC 7517/7518) of a P-256 signing key with these base64url coordinates. */
    private static Map<String, Object> jwk(String kid, String x, String y) {
        Map<String, Object> jwk = new LinkedHashMap<>();
        jwk.put("kty", "EC");
        jwk.put("crv", "P-256");
        jwk.put("x", x);
        jwk.put("y", y);
        jwk.put("kid", kid);
        jwk.put("use", "sig");
        jwk.put("alg", "ES256");
        return Map.copyOf(jwk);
    }

    /**
     * Whether a token this key signed may still be valid: it signed until its successor did ({@code rotation} and
     * {@link #AHEAD} after it was made), and its last token lived {@code longestToken}; {@link #LEEWAY} for the
     * verifiers' clocks.
     */
    private boolean published(IdentityKey key, Instant now) {
        return key.createdAt().plus(rotation).plus(AHEAD).plus(longestToken).plus(LEEWAY).isAfter(now);
    }

    private PrivateKey open(IdentityKey key) {
        PrivateKey known = opened.get(key.kid());
        if (known != null || unreadable.contains(key.kid())) {
            return known;
        }
        try {
            SecretValue value = SigningKeySeal.open(cipher, key.kid(), key.sealedPrivateKey());
            PrivateKey open = KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(value.reveal())));
            opened.put(key.kid(), open);
            return open;
        } catch (SecretCipher.SecretUnreadableException | GeneralSecurityException | IllegalArgumentException e) {
            LOG.warn("identity key {} cannot be used to sign ({}); a new one is made", key.kid(), e.getMessage());
            unreadable.add(key.kid()); // said once, not at every token
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
        return thumbprint(coordinate(key.getW().getAffineX()), coordinate(key.getW().getAffineY()));
    }

    /** RFC 7638's thumbprint of a P-256 key: SHA-256 of its required members in lexicographic order, base64url. */
    static String thumbprint(String x, String y) {
        String canonical = "{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"" + x + "\",\"y\":\"" + y + "\"}";
        try {
            return URL.encodeToString(MessageDigest.getInstance("SHA-256").digest(canonical.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /** The public key as a JSON Web Key: P-256 coordinates of 32 bytes each, base64url. */
    static Map<String, Object> jwk(String kid, ECPublicKey key) {
        return jwk(kid, coordinate(key.getW().getAffineX()), coordinate(key.getW().getAffineY()));
    }

    /** A coordinate as JOSE writes it: 32 bytes, big-endian, leading zeros kept, base64url. */
    private static String coordinate(BigInteger value) {
        byte[] bytes = value.toByteArray();
        byte[] fixed = new byte[32];
        int length = Math.min(bytes.length, 32);
        System.arraycopy(bytes, bytes.length - length, fixed, 32 - length, length);
        return URL.encodeToString(fixed);
    }
}
