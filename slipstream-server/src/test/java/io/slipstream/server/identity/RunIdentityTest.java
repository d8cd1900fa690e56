package io.slipstream.server.identity;

import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.jwk.source.JWKSourceBuilder;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import io.slipstream.api.codec.Json;
import io.slipstream.server.support.ShiftedClock;
import io.slipstream.server.support.TestServer;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The user story end to end, with the real server and executor: a job asks for identity tokens; its instance reads
 * them from the files its environment names, an independent verifier (Nimbus) checks them against the server's
 * discovery document and key set, and half their lifetime later the instance reads new ones in the same files. Bad
 * identities are refused with the field named.
 */
class RunIdentityTest {
    private static final String ISSUER = "https://slipstream.example.com";
    private static final String MINIO = "https://minio.example.com/";

    @TempDir
    Path dir;

    private static String job(String identity) {
        // Prints both tokens and where they are, then waits until the first one's file holds a new token and prints it.
        String script = "f=\"$SLIPSTREAM_IDENTITY_TOKEN_FILE\"; first=$(cat \"$f\"); echo \"$first\"; cat \"$(dirname \"$f\")/token-1.jwt\"; echo; "
                + "printf '%s\\n' \"$SLIPSTREAM_IDENTITY_TOKENS\"; "
                + "for i in $(seq 600); do now=$(cat \"$f\"); [ \"$now\" != \"$first\" ] && break; sleep 0.1; done; echo \"$now\"";
        return """
                {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "reads-identity", "workspace": "team-a"},
                 "spec": {"identity": %s,
                   "nodeGroups": [{"name": "main", "resources": {"cpu": 1, "memory": "1Gi"}, "command": ["sh", "-c", %s]}]}}
                """.formatted(identity, Json.mapper().writeValueAsString(script));
    }

    private static DefaultJWTProcessor<SecurityContext> verifier(JWKSource<SecurityContext> keys, String audience, String subject, int skewSeconds) {
        DefaultJWTProcessor<SecurityContext> processor = IdentityTokensTest.verifier(keys, ISSUER, audience, subject);
        DefaultJWTClaimsVerifier<SecurityContext> claims = (DefaultJWTClaimsVerifier<SecurityContext>) processor.getJWTClaimsSetVerifier();
        claims.setMaxClockSkew(skewSeconds);
        return processor;
    }

    @Test
    void anInstanceReadsTokensThatAnIndependentVerifierTrustsAndNewOnesBeforeTheyExpire() throws Exception {
        ShiftedClock clock = new ShiftedClock(Duration.ZERO);
        try (TestServer server = TestServer.start(dir.resolve("data"), config -> config.withIdentityIssuer(ISSUER), clock)) {
            String admin = server.adminToken();
            TestServer.Response setup = server.post("/api/v1/apply", admin, """
                    apiVersion: slipstream/v1
                    kind: Workspace
                    metadata: {name: team-a}
                    spec: {members: [alice]}
                    """);
            assertThat(setup.status()).as(setup.text()).isEqualTo(200);
            String alice = server.tokenFor("alice");
            TestServer.Response submitted = server.post("/api/v1/runs", alice, Json.mapper().writeValueAsString(Map.of("jobDocument",
                    Json.mapper().readTree(job("{\"audiences\": [\"" + MINIO + "\", \"vault\"], \"ttl\": \"5m\"}")))));
            assertThat(submitted.status()).as(submitted.text()).isEqualTo(201);
            String run = submitted.json().get("id").asString();
            server.awaitRun(alice, run, r -> stdout(server, alice, run).lines().count() >= 3);
            List<String> lines = stdout(server, alice, run).lines().toList();

            // As a relying party configured with the discovery document: it names the key set, fetched where the server listens.
            JsonNode discovery = server.call("GET", IdentityTokens.DISCOVERY, null, null, null).json();
            assertThat(discovery.get("issuer").asString()).isEqualTo(ISSUER);
            JWKSource<SecurityContext> keys = JWKSourceBuilder.<SecurityContext>create(URI.create(server.server().url() + IdentityTokens.JWKS).toURL()).build();
            String subject = "workspace/team-a/job/reads-identity/run/" + run;
            JWTClaimsSet minio = verifier(keys, MINIO, subject, 60).process(lines.get(0), null);
            assertThat(minio.getClaims()).containsEntry("workspace", "team-a").containsEntry("job", "reads-identity").containsEntry("run", run)
                    .containsEntry("attempt", 1L).containsEntry("submitter", "alice");
            assertThat(Duration.between(minio.getIssueTime().toInstant(), minio.getExpirationTime().toInstant())).isEqualTo(Duration.ofMinutes(5));
            assertThat(verifier(keys, "vault", subject, 60).process(lines.get(1), null).getAudience()).containsExactly("vault");
            Map<String, String> files = Json.mapper().readValue(lines.get(2), new tools.jackson.core.type.TypeReference<Map<String, String>>() { });
            assertThat(files.keySet()).containsExactly(MINIO, "vault");

            // Half their lifetime later (the server's clock moved on), the loop signs new ones into the same files.
            clock.shift(Duration.ofSeconds(151));
            JsonNode done = server.awaitState(alice, run, "SUCCEEDED");
            assertThat(done.get("state").asString()).isEqualTo("SUCCEEDED");
            String refreshed = stdout(server, alice, run).lines().toList().get(3);
            assertThat(refreshed).isNotEqualTo(lines.get(0));
            // Signed on the server's clock, 151 s ahead of this one: the verifier allows for that much skew.
            JWTClaimsSet again = verifier(keys, MINIO, subject, 200).process(refreshed, null);
            assertThat(again.getIssueTime()).isAfter(minio.getIssueTime());
        }
    }

    @Test
    void badIdentitiesAreRefusedWithTheFieldNamed() {
        try (TestServer server = TestServer.start(dir.resolve("data"), config -> config.withIdentityIssuer(ISSUER))) {
            String admin = server.adminToken();
            assertThat(server.post("/api/v1/apply", admin, "{\"apiVersion\": \"slipstream/v1\", \"kind\": \"Workspace\", \"metadata\": {\"name\": \"team-a\"}, \"spec\": {}}")
                    .status()).isEqualTo(200);
            assertProblem(server.post("/api/v1/apply", admin, job("{\"audiences\": [\"vault\", 42]}")), "spec.identity.audiences[1]", "string");
            assertProblem(server.post("/api/v1/apply", admin, job("{\"audiences\": [\"vault\"], \"ttl\": \"2d\"}")), "spec.identity.ttl", "between 5m and 1d");
            assertThat(server.post("/api/v1/apply", admin, job("{\"audiences\": [\"vault\"]}")).status()).isEqualTo(200);
            TestServer.Response overridden = server.post("/api/v1/runs", admin, """
                    {"workspace": "team-a", "job": "reads-identity", "overrides": {"identity.ttl": "2d"}}""");
            assertProblem(overridden, "overrides.identity.ttl", "between 5m and 1d");
        }
        try (TestServer server = TestServer.start(dir.resolve("off"))) {
            String admin = server.adminToken();
            assertThat(server.post("/api/v1/apply", admin, "{\"apiVersion\": \"slipstream/v1\", \"kind\": \"Workspace\", \"metadata\": {\"name\": \"team-a\"}, \"spec\": {}}")
                    .status()).isEqualTo(200);
            assertProblem(server.post("/api/v1/apply", admin, job("{\"audiences\": [\"vault\"]}")), "spec.identity", "identity.issuer");
        }
    }

    private static void assertProblem(TestServer.Response response, String field, String message) {
        assertThat(response.status()).as(response.text()).isEqualTo(400);
        assertThat(response.json().get("problems")).as(response.text()).anySatisfy(problem -> {
            assertThat(problem.get("field").asString()).isEqualTo(field);
            assertThat(problem.get("message").asString()).contains(message);
        });
    }

    private static String stdout(TestServer server, String token, String run) {
        return server.get("/api/v1/runs/" + run + "/logs?stream=stdout&prefix=false", token).text();
    }
}
