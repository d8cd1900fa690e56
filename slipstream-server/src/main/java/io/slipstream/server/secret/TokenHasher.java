package io.slipstream.server.secret;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * How token secrets are stored: HMAC-SHA256, keyed with the server's pepper, of the secret's SHA-256. A stolen store
 * alone then gives nothing to test guesses against; and tokens stored before as the plain SHA-256 become the same
 * HMAC without their secret ({@link #upgrade}). Safe for concurrent use.
 */
public final class TokenHasher {
    public static final int PEPPER_BYTES = 32;

    private final byte[] pepper;
    private final String pepperId;

    public TokenHasher(byte[] pepper) {
        if (pepper.length < PEPPER_BYTES) {
            throw new IllegalArgumentException("a token pepper has at least " + PEPPER_BYTES + " bytes");
        }
        this.pepper = pepper.clone();
        this.pepperId = SecretCipher.keyId("tokens", pepper);
    }

    public String pepperId() {
        return pepperId;
    }

    /** The stored form of a token's secret (hex). */
    public String hash(String secret) {
        return hmac(sha256(secret.getBytes(StandardCharsets.UTF_8)));
    }

    /** The stored form of a token whose plain SHA-256 (hex) was stored. */
    public String upgrade(String sha256Hex) {
        return hmac(HexFormat.of().parseHex(sha256Hex));
    }

    /** Whether a stored hash is the one computed, compared in constant time. */
    public static boolean matches(String stored, String computed) {
        return MessageDigest.isEqual(stored.getBytes(StandardCharsets.US_ASCII), computed.getBytes(StandardCharsets.US_ASCII));
    }

    /** The plain SHA-256 (hex) of a secret: how tokens were stored before, and what {@link #upgrade} takes. */
    public static String sha256Hex(String secret) {
        return HexFormat.of().formatHex(sha256(secret.getBytes(StandardCharsets.UTF_8)));
    }

    private String hmac(byte[] digest) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(pepper, "HmacSHA256"));
            return HexFormat.of().formatHex(mac.doFinal(digest));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA256 is missing from this JVM", e);
        }
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    @Override
    public String toString() {
        return "TokenHasher[" + pepperId + "]";
    }
}
