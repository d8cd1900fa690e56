package io.slipstream.server.identity;

import static org.assertj.core.api.Assertions.assertThat;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.source.ImmutableJWKSet;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.jwk.source.JWKSourceBuilder;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.DefaultJOSEObjectTypeVerifier;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import io.slipstream.api.codec.Json;
import io.slipstream.server.secret.SecretCipher;
import io.slipstream.server.support.ShiftedClock;
import io.slipstream.server.support.TestServer;
import io.slipstream.store.memory.InMemoryStore;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Runs' identity tokens checked by a verifier nobody here wrote (Nimbus JOSE + JWT), as an object store or a secret
 * store checks them: the discovery document, unauthenticated, names the issuer and the JWKS; the signature, issuer,
 * audience, subject and expiry are checked against them. A forged, an expired, another audience's and another run's
 * token are refused; a token signed before a key rotation verifies until its key is retired.
 */
class IdentityTokensTest {
    private static final IdentityTokens.Subject RUN = new IdentityTokens.Subject("team-a", "train", "train-abcd1234", 2, "alice");
    private static final IdentityTokens.Subject OTHER_RUN = new IdentityTokens.Subject("team-b", "train", "train-zzzz9999", 1, "bob");
    private static final String AUDIENCE = "https://minio.example.com";
    private static final String ISSUER = "https://slipstream.example.com";

    @TempDir
    Path dir;

    /** A verifier configured as a relying party would be: one audience, the issuer and the run it trusts. */
    static DefaultJWTProcessor<SecurityContext> verifier(JWKSource<SecurityContext> keys, String issuer, String audience, String subject) {
        DefaultJWTProcessor<SecurityContext> processor = new DefaultJWTProcessor<>();
        processor.setJWSTypeVerifier(new DefaultJOSEObjectTypeVerifier<>(JOSEObjectType.JWT));
        processor.setJWSKeySelector(new JWSVerificationKeySelector<>(JWSAlgorithm.ES256, keys));
        processor.setJWTClaimsSetVerifier(new DefaultJWTClaimsVerifier<>(audience,
                new JWTClaimsSet.Builder().issuer(issuer).subject(subject).build(), Set.of("exp", "iat", "nbf", "jti", "run", "attempt")));
        return processor;
    }

    @Test
    void aTokenVerifiesAgainstTheDiscoveryDocumentAndForgedExpiredMisaddressedOrOtherRunsTokensAreRefused() throws Exception {
        try (TestServer server = TestServer.start(dir.resolve("data"), config -> config.withIdentityIssuer(ISSUER + "/"))) {
            TestServer.Response discovery = server.call("GET", IdentityTokens.DISCOVERY, null, null, null);
            assertThat(discovery.status()).as("no token needed").isEqualTo(200);
            JsonNode document = discovery.json();
            String issuer = document.get("issuer").asString();
            assertThat(issuer).as("as configured, without the trailing slash").isEqualTo(ISSUER);
            assertThat(document.get("jwks_uri").asString()).isEqualTo(ISSUER + "/.well-known/jwks.json");
            assertThat(document.get("id_token_signing_alg_values_supported").get(0).asString()).isEqualTo("ES256");

            IdentityTokens tokens = server.server().identityTokens();
            Instant now = Instant.now();
            String token = tokens.mint(RUN, AUDIENCE, Duration.ofMinutes(10), now);
            // The issuer's public name is not this test's address: the key set is fetched where the server listens, as a
            // relying party told its jwks_url would (Vault's jwks_url).
            JWKSource<SecurityContext> keys = JWKSourceBuilder.<SecurityContext>create(URI.create(server.server().url() + IdentityTokens.JWKS).toURL())
                    .build(); // as a relying party would use it: cached, refreshed on an unknown key
            String sub = "workspace/team-a/job/train/run/train-abcd1234";

            JWTClaimsSet claims = verifier(keys, issuer, AUDIENCE, sub).process(token, null);
            assertThat(claims.getAudience()).containsExactly(AUDIENCE);
            assertThat(claims.getClaims()).containsEntry("workspace", "team-a").containsEntry("job", "train").containsEntry("run", "train-abcd1234")
                    .containsEntry("attempt", 2L).containsEntry("submitter", "alice");
            assertThat(claims.getExpirationTime().toInstant()).isEqualTo(now.plusSeconds(600).truncatedTo(java.time.temporal.ChronoUnit.SECONDS));

            // Forged: the claims changed (another run), the signature kept.
            String[] parts = token.split("\\.");
            String changed = new String(Base64.getUrlDecoder().decode(parts[1]), UTF_8).replace("train-abcd1234", "train-abcd1235");
            String forged = parts[0] + "." + base64url(changed) + "." + parts[2];
            assertThatThrownBy(() -> verifier(keys, issuer, AUDIENCE, "workspace/team-a/job/train/run/train-abcd1235").process(forged, null))
                    .isInstanceOf(BadJOSEException.class).hasMessageContaining("signature");
            // Unsigned ("alg": "none"): refused whatever it claims.
            String unsigned = base64url("{\"alg\":\"none\",\"typ\":\"JWT\"}") + "." + parts[1] + ".";
            assertThatThrownBy(() -> verifier(keys, issuer, AUDIENCE, sub).process(unsigned, null)).isInstanceOf(BadJOSEException.class);
            // Expired: an hour ago.
            String expired = tokens.mint(RUN, AUDIENCE, Duration.ofMinutes(10), now.minus(Duration.ofHours(1)));
            assertThatThrownBy(() -> verifier(keys, issuer, AUDIENCE, sub).process(expired, null))
                    .isInstanceOf(BadJOSEException.class).hasMessageContaining("Expired");
            // For another audience (Vault's, say), shown to the object store.
            String forVault = tokens.mint(RUN, "vault", Duration.ofMinutes(10), now);
            assertThatThrownBy(() -> verifier(keys, issuer, AUDIENCE, sub).process(forVault, null))
                    .isInstanceOf(BadJOSEException.class).hasMessageContaining("aud claim");
            // Another run's token, where this run is trusted.
            String otherRun = tokens.mint(OTHER_RUN, AUDIENCE, Duration.ofMinutes(10), now);
            assertThatThrownBy(() -> verifier(keys, issuer, AUDIENCE, sub).process(otherRun, null))
                    .isInstanceOf(BadJOSEException.class).hasMessageContaining("sub");
            // Another issuer (a token of another Slipstream server, or the relying party configured for one).
            assertThatThrownBy(() -> verifier(keys, "https://other.example.com", AUDIENCE, sub).process(token, null))
                    .isInstanceOf(BadJOSEException.class).hasMessageContaining("iss");

            TestServer.Response jwks = server.call("GET", IdentityTokens.JWKS, null, null, null);
            assertThat(jwks.contentType()).startsWith("application/jwk-set+json");
            assertThat(jwks.text()).as("no private key in the JWKS").doesNotContain("\"d\"");
        }
        try (TestServer server = TestServer.start(dir.resolve("off"))) {
            assertThat(server.call("GET", IdentityTokens.DISCOVERY, null, null, null).status()).as("no identity.issuer: nothing to trust").isEqualTo(404);
            assertThat(server.call("GET", IdentityTokens.JWKS, null, null, null).status()).isEqualTo(404);
        }
    }

    @Test
    void aTokenSignedBeforeARotationVerifiesUntilItsKeyIsRetired() throws Exception {
        InMemoryStore store = new InMemoryStore();
        ShiftedClock clock = new ShiftedClock(Duration.ZERO);
        IdentityKeys keys = new IdentityKeys(store, new SecretCipher(new byte[SecretCipher.KEY_BYTES]), clock, Duration.ofHours(1), Duration.ofHours(2));
        IdentityTokens tokens = new IdentityTokens(keys, () -> "https://slipstream.example.com");
        String before = tokens.mint(RUN, AUDIENCE, Duration.ofHours(2), Instant.now());
        String first = SignedJWT.parse(before).getHeader().getKeyID();
        assertThat(tokens.mint(RUN, AUDIENCE, Duration.ofHours(2), Instant.now())).as("one key signs until the rotation")
                .satisfies(t -> assertThat(SignedJWT.parse(t).getHeader().getKeyID()).isEqualTo(first));

        clock.shift(Duration.ofMinutes(61));
        String sub = "workspace/team-a/job/train/run/train-abcd1234";
        String rotated = tokens.mint(RUN, AUDIENCE, Duration.ofHours(2), Instant.now());
        assertThat(SignedJWT.parse(rotated).getHeader().getKeyID()).as("the next key is made, and published before it signs").isEqualTo(first);
        assertThat(keys.published()).hasSize(2);
        clock.shift(Duration.ofMinutes(61).plus(IdentityKeys.AHEAD));
        String after = tokens.mint(RUN, AUDIENCE, Duration.ofHours(2), Instant.now());
        assertThat(SignedJWT.parse(after).getHeader().getKeyID()).as("then it signs").isNotEqualTo(first);
        assertThat(verifier(jwks(tokens), "https://slipstream.example.com", AUDIENCE, sub).process(before, null).getSubject()).isEqualTo(sub);
        assertThat(verifier(jwks(tokens), "https://slipstream.example.com", AUDIENCE, sub).process(after, null).getSubject()).isEqualTo(sub);

        // The first key signed until 1 h 5 min; its last token lived 2 h more, and 5 min for clocks: published until then.
        clock.shift(Duration.ofMinutes(189));
        assertThat(verifier(jwks(tokens), "https://slipstream.example.com", AUDIENCE, sub).process(before, null).getSubject()).isEqualTo(sub);
        clock.shift(Duration.ofMinutes(191));
        assertThatThrownBy(() -> verifier(jwks(tokens), "https://slipstream.example.com", AUDIENCE, sub).process(before, null))
                .isInstanceOf(BadJOSEException.class);
        tokens.mint(RUN, AUDIENCE, Duration.ofHours(2), Instant.now()); // a third key; the first is removed from the store
        assertThat(store.credentials().identityKeys()).extracting(io.slipstream.store.IdentityKey::kid).doesNotContain(first);
    }

    @Test
    void theStoredPrivateKeyIsSealedAndAKeyThatNoLongerOpensIsReplaced() throws Exception {
        InMemoryStore store = new InMemoryStore();
        ShiftedClock clock = new ShiftedClock(Duration.ZERO);
        IdentityKeys keys = new IdentityKeys(store, new SecretCipher(new byte[SecretCipher.KEY_BYTES]), clock, Duration.ofHours(1), Duration.ofHours(2));
        String first = keys.current().kid();
        io.slipstream.store.IdentityKey stored = store.credentials().identityKeys().get(0);
        assertThat(stored.sealedPrivateKey()).doesNotContain("MIG"); // not the PKCS#8 key in base64
        assertThat(Json.mapper().readValue(stored.publicJwk(), Map.class)).containsKeys("kty", "crv", "x", "y", "kid").doesNotContainKey("d");

        byte[] otherKey = new byte[SecretCipher.KEY_BYTES];
        otherKey[0] = 1; // the secrets key was replaced without the identity keys being sealed again
        IdentityKeys afterKeyChange = new IdentityKeys(store, new SecretCipher(otherKey), clock, Duration.ofHours(1), Duration.ofHours(2));
        assertThat(afterKeyChange.current().kid()).isNotEqualTo(first);
        assertThat(afterKeyChange.published()).hasSize(2).as("tokens of the first key still verify");
        IdentityTokens tokens = new IdentityTokens(afterKeyChange, () -> "https://slipstream.example.com");
        assertThatThrownBy(() -> tokens.mint(RUN, AUDIENCE, Duration.ofHours(2).plusSeconds(1), Instant.now()))
                .as("a token longer than its key stays published").isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void everyKeyIsPublishedWithCoordinatesOf32BytesAndItsThumbprintAsItsIdAndATamperedRowIsLeftOut() throws Exception {
        java.security.KeyPairGenerator generator = java.security.KeyPairGenerator.getInstance("EC");
        generator.initialize(new java.security.spec.ECGenParameterSpec("secp256r1"));
        for (int i = 0; i < 300; i++) { // about one in 128 has a coordinate with a leading zero byte
            java.security.interfaces.ECPublicKey key = (java.security.interfaces.ECPublicKey) generator.generateKeyPair().getPublic();
            String kid = IdentityKeys.kid(key);
            com.nimbusds.jose.jwk.ECKey parsed = com.nimbusds.jose.jwk.ECKey.parse(Json.mapper().writeValueAsString(IdentityKeys.jwk(kid, key)));
            assertThat(parsed.getX().decode()).hasSize(32);
            assertThat(parsed.getY().decode()).hasSize(32);
            assertThat(parsed.computeThumbprint().toString()).as("RFC 7638").isEqualTo(kid);
            assertThat(parsed.toECPublicKey()).isEqualTo(key);
        }

        InMemoryStore store = new InMemoryStore();
        ShiftedClock clock = new ShiftedClock(Duration.ZERO);
        IdentityKeys keys = new IdentityKeys(store, new SecretCipher(new byte[SecretCipher.KEY_BYTES]), clock, Duration.ofHours(1), Duration.ofHours(2));
        String kid = keys.current().kid();
        String jwk = store.credentials().identityKeys().get(0).publicJwk();
        // A row written into the store by someone else: its id is not its key's thumbprint.
        store.commit(tx -> tx.addIdentityKey(new io.slipstream.store.IdentityKey("planted", clock.instant(), "not sealed", jwk.replace(kid, "planted"))));
        store.commit(tx -> tx.addIdentityKey(new io.slipstream.store.IdentityKey("garbage", clock.instant(), "not sealed", "{not json")));
        IdentityKeys served = new IdentityKeys(store, new SecretCipher(new byte[SecretCipher.KEY_BYTES]), clock, Duration.ofHours(1), Duration.ofHours(2));
        assertThat(served.published()).extracting(key -> key.get("kid")).containsExactly(kid);
    }

    private static String base64url(String text) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(text.getBytes(UTF_8));
    }

    private static JWKSource<SecurityContext> jwks(IdentityTokens tokens) throws Exception {
        return new ImmutableJWKSet<>(JWKSet.parse(Json.mapper().writeValueAsString(tokens.jwks())));
    }
}
