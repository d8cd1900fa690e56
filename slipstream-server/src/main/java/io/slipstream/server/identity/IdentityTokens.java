package io.slipstream.server.identity;

import io.slipstream.api.codec.Json;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.security.Signature;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Signs runs' identity tokens: OIDC-style JWTs (RFC 7519) signed ES256 with the current {@link IdentityKeys} key,
 * issued by the server's public URL, naming the run as their subject ({@code workspace/<ws>/job/<job>/run/<id>}) with
 * one audience each, and claims for the workspace, job, run, attempt and submitter. The discovery document and JWKS
 * that verify them are served at {@link #DISCOVERY} and {@link #JWKS}.
 */
public final class IdentityTokens {
    public static final String DISCOVERY = "/.well-known/openid-configuration";
    public static final String JWKS = "/.well-known/jwks.json";
    /** Claims every token carries (the discovery document lists them). */
    public static final List<String> CLAIMS = List.of("iss", "sub", "aud", "iat", "nbf", "exp", "jti", "workspace", "job", "run", "attempt",
            "submitter");
    private static final Base64.Encoder URL = Base64.getUrlEncoder().withoutPadding();
    private static final Duration NOT_BEFORE_SKEW = Duration.ofSeconds(30);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final IdentityKeys keys;
    private final Supplier<String> issuer;

    /** @param issuer the issuer's public URL ({@code identity.issuer}; {@code null}: none is configured, no token is issued) */
    public IdentityTokens(IdentityKeys keys, Supplier<String> issuer) {
        this.keys = keys;
        this.issuer = issuer;
    }

    /** Whom a token names: a run's attempt, and who submitted it ({@code null}: a schedule's run). */
    public record Subject(String workspace, String job, String run, int attempt, String submitter) {
        String sub() {
            return "workspace/" + workspace + "/job/" + job + "/run/" + run;
        }
    }

    /** A token for {@code audience}, valid from {@code now} for {@code ttl} (at most {@link IdentityKeys#longestToken}). */
    public String mint(Subject subject, String audience, Duration ttl, Instant now) {
        if (ttl.isNegative() || ttl.isZero() || ttl.compareTo(keys.longestToken()) > 0) {
            // A longer token would outlive its key's place in the key set, and stop verifying before it expires.
            throw new IllegalArgumentException("a token lives more than 0 s and at most " + keys.longestToken() + ", not " + ttl);
        }
        IdentityKeys.Signing signing = keys.current();
        Map<String, Object> header = new LinkedHashMap<>();
        header.put("alg", "ES256");
        header.put("typ", "JWT");
        header.put("kid", signing.kid());
        Map<String, Object> claims = new LinkedHashMap<>();
        claims.put("iss", issuer());
        claims.put("sub", subject.sub());
        claims.put("aud", audience);
        claims.put("iat", now.getEpochSecond());
        claims.put("nbf", now.minus(NOT_BEFORE_SKEW).getEpochSecond()); // a verifier whose clock is a little behind still takes it
        claims.put("exp", now.plus(ttl).getEpochSecond());
        byte[] jti = new byte[16];
        RANDOM.nextBytes(jti);
        claims.put("jti", URL.encodeToString(jti));
        claims.put("workspace", subject.workspace());
        claims.put("job", subject.job());
        claims.put("run", subject.run());
        claims.put("attempt", subject.attempt());
        if (subject.submitter() != null) {
            claims.put("submitter", subject.submitter());
        }
        String signed = URL.encodeToString(Json.mapper().writeValueAsBytes(header)) + "." + URL.encodeToString(Json.mapper().writeValueAsBytes(claims));
        try {
            // JOSE's ES256 signature is R || S of 32 bytes each, which this algorithm writes as is (no DER).
            Signature signature = Signature.getInstance("SHA256withECDSAinP1363Format");
            signature.initSign(signing.key());
            signature.update(signed.getBytes(StandardCharsets.US_ASCII));
            return signed + "." + URL.encodeToString(signature.sign());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("ES256 signing failed", e);
        }
    }

    /** Whether an issuer is configured: without one, no token is issued and nothing is served to verify them. */
    public boolean enabled() {
        return issuer.get() != null;
    }

    /** The tokens' issuer: the configured public URL. */
    /** Whether tokens are issued: {@code identity.issuer} is set. */
    public boolean issuing() {
        return issuer.get() != null;
    }

    public String issuer() {
        String url = issuer.get();
        if (url == null) {
            throw new IllegalStateException("no identity.issuer is configured: runs' identity tokens are off (docs/identity.md)");
        }
        return url;
    }

    /** The OpenID Connect discovery document ({@code /.well-known/openid-configuration}) of these tokens. */
    public Map<String, Object> discovery() {
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("issuer", issuer());
        document.put("jwks_uri", issuer() + JWKS);
        document.put("response_types_supported", List.of("id_token"));
        document.put("subject_types_supported", List.of("public"));
        document.put("id_token_signing_alg_values_supported", List.of("ES256"));
        document.put("claims_supported", CLAIMS);
        return document;
    }

    /** The JSON Web Key Set ({@code keys}) that verifies every token that may still be valid. */
    public Map<String, Object> jwks() {
        return Map.of("keys", keys.published());
    }
}
