package io.slipstream.server.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;

/**
 * API token secrets: {@code ss_} and 43 characters of 256 random bits. Only their SHA-256 is stored; a secret is
 * shown once, when it is created.
 */
public final class Tokens {
    public static final String PREFIX = "ss_";
    private static final SecureRandom RANDOM = new SecureRandom();

    private Tokens() {
    }

    public static String newSecret() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    public static String newId() {
        byte[] bytes = new byte[6];
        RANDOM.nextBytes(bytes);
        return "tok-" + HexFormat.of().formatHex(bytes);
    }

    public static String hash(String secret) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
