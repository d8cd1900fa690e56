package io.slipstream.server.auth;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;

/**
 * API token secrets: {@code ss_} and 43 characters of 256 random bits. Only their HMAC is stored (see
 * {@link io.slipstream.server.secret.TokenHasher}); a secret is shown once, when it is created.
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
}
