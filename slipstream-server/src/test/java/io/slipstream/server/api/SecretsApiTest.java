package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.read.ListAppender;
import io.slipstream.api.codec.Json;
import io.slipstream.server.support.TestServer;
import io.slipstream.server.support.TestServer.Response;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;

/**
 * Secrets against the real server and local executor, tried as a member of another team and as a run would: a value
 * reaches the instances that refer to it (as a variable and as a file) and nothing else; not the API, the job, the run,
 * its events, the server's log, the store's files, nor what stays on disk after the instance.
 */
class SecretsApiTest {
    private static final String VALUE = "hf_" + java.util.UUID.randomUUID().toString().replace("-", "");
    private static final String NEW_VALUE = "hf_new-" + java.util.UUID.randomUUID();

    @TempDir
    static Path dataDir;

    private static TestServer server;
    private static String admin;
    private static String alice;
    private static String bob;
    private static final ListAppender<ILoggingEvent> serverLog = new ListAppender<>();
    private static Level slipstreamLevel;

    @BeforeAll
    static void start() {
        LoggerContext logs = (LoggerContext) LoggerFactory.getILoggerFactory();
        Logger slipstream = logs.getLogger("io.slipstream");
        slipstreamLevel = slipstream.getLevel();
        slipstream.setLevel(Level.DEBUG); // the most the server writes (SLIPSTREAM_LOG_LEVEL=DEBUG)
        serverLog.start();
        logs.getLogger(Logger.ROOT_LOGGER_NAME).addAppender(serverLog);
        server = TestServer.start(dataDir);
        admin = server.adminToken();
        Response setup = server.post("/api/v1/apply", admin, """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-a}
                spec: {members: [alice]}
                ---
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-b}
                spec: {members: [bob]}
                """);
        assertThat(setup.status()).as(setup.text()).isEqualTo(200);
        alice = server.tokenFor("alice");
        bob = server.tokenFor("bob");
        Response secret = server.post("/api/v1/apply", alice, secret("hf", VALUE));
        assertThat(secret.status()).as(secret.text()).isEqualTo(200);
        assertThat(secret.text()).doesNotContain(VALUE).contains("created");
    }

    @AfterAll
    static void stop() {
        server.close();
        LoggerContext logs = (LoggerContext) LoggerFactory.getILoggerFactory();
        logs.getLogger(Logger.ROOT_LOGGER_NAME).detachAppender(serverLog);
        logs.getLogger("io.slipstream").setLevel(slipstreamLevel);
    }

    private static String secret(String name, String value) {
        return """
                apiVersion: slipstream/v1
                kind: Secret
                metadata: {name: %s, workspace: team-a}
                spec:
                  data: {token: %s, config.json: '{"user": "bot"}'}
                """.formatted(name, value);
    }

    /** A job that prints checksums of what it got, never the value itself. */
    private static String job(String name, String workspace, String secret, int gpus) {
        String script = "printf %s \"$HF_TOKEN\" | sha256sum; sha256sum < \"$SLIPSTREAM_SECRETS_DIR/" + secret + "/token\"; "
                + "printf %s \"$EXTRA\" | sha256sum; ls \"$SLIPSTREAM_SECRETS_DIR/" + secret + "\"; echo \"LR=$LR\"";
        return """
                {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "%s", "workspace": "%s"},
                 "spec": {"nodeGroups": [{"name": "main", "resources": {"cpu": 1, "memory": "1Gi", "gpu": %d},
                   "env": {"LR": "0.1", "HF_TOKEN": {"secretRef": "%s/token"}},
                   "secrets": [{"name": "%s", "mountPath": "/var/run/secrets/hf"}],
                   "command": ["sh", "-c", %s]}]}}
                """.formatted(name, workspace, gpus, secret, secret, Json.mapper().writeValueAsString(script));
    }

    private static String submit(String token, String jobDocument, Map<String, String> overrides) {
        Response response = server.post("/api/v1/runs", token, Json.mapper().writeValueAsString(Map.of("jobDocument",
                Json.mapper().readTree(jobDocument), "overrides", overrides)));
        assertThat(response.status()).as(response.text()).isEqualTo(201);
        assertThat(response.text()).doesNotContain(VALUE);
        return response.json().get("id").asString();
    }

    private static String sha256(String text) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    }

    private static String stdout(String run) {
        return server.get("/api/v1/runs/" + run + "/logs?stream=stdout&prefix=false", alice).text();
    }

    private static List<Path> filesUnder(Path dir) throws Exception {
        List<Path> files = new ArrayList<>();
        try (var walk = Files.walk(dir)) {
            walk.filter(Files::isRegularFile).forEach(files::add);
        }
        return files;
    }

    private static void assertNowhere(String value) throws Exception {
        String base64 = Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8));
        for (Path file : filesUnder(dataDir)) {
            String content = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
            assertThat(content).as("%s holds the value", file).doesNotContain(value).doesNotContain(base64);
        }
        for (ILoggingEvent event : List.copyOf(serverLog.list)) {
            String line = event.getFormattedMessage() + (event.getThrowableProxy() == null ? "" : ThrowableProxyUtil.asString(event.getThrowableProxy()));
            assertThat(line).as("the server's log").doesNotContain(value);
        }
    }

    @Test
    void theValueReachesTheInstanceAndNothingElse() throws Exception {
        String run = submit(alice, job("uses-secrets", "team-a", "hf", 0), Map.of("nodeGroups.main.env.EXTRA.secretRef", "hf/token"));
        JsonNode finished = server.awaitRun(alice, run, r -> r.get("state").asString().matches("SUCCEEDED|FAILED"));
        assertThat(finished.get("state").asString()).as(finished.toString()).isEqualTo("SUCCEEDED");
        String sum = sha256(VALUE) + "  -";
        assertThat(stdout(run).lines().toList()).containsExactly(sum, sum, sum, "config.json", "token", "LR=0.1");

        Response shown = server.get("/api/v1/workspaces/team-a/secrets/hf", alice);
        assertThat(shown.status()).isEqualTo(200);
        assertThat(shown.json().get("spec").get("data").toString()).isEqualTo("{\"config.json\":\"***\",\"token\":\"***\"}");
        assertThat(shown.json().get("metadata").get("version").asLong()).isEqualTo(1);
        assertThat(shown.json().get("metadata").has("createdAt")).isTrue();
        List<String> texts = new ArrayList<>(List.of(shown.text(),
                server.get("/api/v1/secrets", alice).text(),
                server.get("/api/v1/secrets", admin).text(),
                server.get("/api/v1/workspaces/team-a/jobs/uses-secrets", alice).text(),
                server.get("/api/v1/jobs", alice).text(),
                server.get("/api/v1/runs/" + run, alice).text(),
                server.get("/api/v1/runs", alice).text(),
                server.get("/api/v1/runs/" + run + "/events", alice).text(),
                server.get("/api/v1/runs/" + run + "/logs?format=jsonl", alice).text()));
        for (String text : texts) {
            assertThat(text).doesNotContain(VALUE);
        }
        JsonNode spec = server.get("/api/v1/runs/" + run, alice).json().get("spec").get("spec").get("nodeGroups").get(0);
        assertThat(spec.get("env").get("HF_TOKEN").toString()).isEqualTo("{\"secretRef\":\"hf/token\"}");
        assertThat(spec.get("env").get("EXTRA").toString()).isEqualTo("{\"secretRef\":\"hf/token\"}");
        assertThat(spec.get("env").get("LR").asString()).as("plain values stay plain").isEqualTo("0.1");
        assertThat(server.get("/api/v1/secrets", alice).json().get("items")).extracting(i -> i.get("metadata").get("name").asString())
                .contains("hf");
        // Nothing the run left on disk, nothing in the store's files, nothing in the server's log holds it.
        assertNowhere(VALUE);
    }

    @Test
    void anotherTeamCannotReferToReadListOverwriteOrDeleteIt() {
        // Refer: a job of team-b names a secret of its own workspace only; team-a's is not there.
        Response refer = server.post("/api/v1/apply", bob, job("steal", "team-b", "hf", 0));
        assertThat(refer.status()).isEqualTo(400);
        assertThat(refer.json().get("problems")).extracting(p -> p.get("field").asString())
                .containsExactlyInAnyOrder("spec.nodeGroups[0].env.HF_TOKEN.secretRef", "spec.nodeGroups[0].secrets[0].name");
        assertThat(refer.text()).contains("workspace 'team-b' has no secret 'hf'");
        // Read and list.
        assertThat(server.get("/api/v1/workspaces/team-a/secrets/hf", bob).status()).isEqualTo(404);
        assertThat(server.get("/api/v1/workspaces/team-a/secrets/hf", bob).text())
                .isEqualTo(server.get("/api/v1/workspaces/team-a/secrets/nothing-here", bob).text().replace("nothing-here", "hf"));
        assertThat(server.get("/api/v1/secrets?workspace=team-a", bob).json().get("items")).isEmpty();
        assertThat(server.get("/api/v1/secrets", bob).json().get("items")).isEmpty();
        // Overwrite, also with a version that would conflict: refused before anything is looked up.
        for (String version : List.of("", ", version: 99")) {
            Response overwrite = server.post("/api/v1/apply", bob, secret("hf", "mine").replace("workspace: team-a", "workspace: team-a" + version));
            assertThat(overwrite.status()).as(overwrite.text()).isEqualTo(400);
            assertThat(overwrite.text()).contains("you are not a member");
        }
        assertThat(server.get("/api/v1/workspaces/team-a/secrets/hf", alice).json().get("metadata").get("version").asLong())
                .as("unchanged").isEqualTo(1);
        // Delete.
        assertThat(server.call("DELETE", "/api/v1/workspaces/team-a/secrets/hf", bob, null, null).status()).isEqualTo(404);
        assertThat(server.get("/api/v1/workspaces/team-a/secrets/hf", alice).status()).isEqualTo(200);
    }

    @Test
    void aRunsTokenReachesNoSecret() {
        String script = "echo \"token=$SLIPSTREAM_RUN_TOKEN\"; exec sleep 600";
        String run = submit(alice, """
                {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "token-holder", "workspace": "team-a"},
                 "spec": {"nodeGroups": [{"name": "main", "resources": {"cpu": 1, "memory": "1Gi"},
                   "env": {"HF_TOKEN": {"secretRef": "hf/token"}}, "command": ["sh", "-c", %s]}]}}
                """.formatted(Json.mapper().writeValueAsString(script)), Map.of());
        server.awaitRun(alice, run, r -> stdout(run).contains("token="));
        String token = stdout(run).lines().filter(l -> l.startsWith("token=")).findFirst().orElseThrow().substring("token=".length());
        assertThat(server.get("/api/v1/runs/" + run, token).status()).isEqualTo(200);
        assertThat(server.get("/api/v1/secrets", token).status()).isEqualTo(403);
        assertThat(server.get("/api/v1/workspaces/team-a/secrets/hf", token).status()).isEqualTo(403);
        assertThat(server.call("DELETE", "/api/v1/workspaces/team-a/secrets/hf", token, null, null).status()).isEqualTo(403);
        assertThat(server.post("/api/v1/apply", token, secret("hf", "from-the-run")).status()).isEqualTo(403);
        assertThat(server.post("/api/v1/runs/" + run + "/cancel", alice, "{}").status()).isEqualTo(200);
        server.awaitState(alice, run, "CANCELLED");
    }

    @Test
    void badReferencesAreRefusedWhenAppliedOrSubmitted() {
        Response missing = server.post("/api/v1/apply", alice, job("no-such", "team-a", "absent", 0));
        assertThat(missing.status()).isEqualTo(400);
        assertThat(missing.json().get("problems")).extracting(p -> p.get("field").asString())
                .containsExactlyInAnyOrder("spec.nodeGroups[0].env.HF_TOKEN.secretRef", "spec.nodeGroups[0].secrets[0].name");
        Response noKey = server.post("/api/v1/apply", alice, job("no-key", "team-a", "hf", 0).replace("hf/token", "hf/password"));
        assertThat(noKey.status()).isEqualTo(400);
        assertThat(noKey.text()).contains("spec.nodeGroups[0].env.HF_TOKEN.secretRef", "has no key 'password' (it has: config.json, token)");
        Response override = server.post("/api/v1/runs", alice, Json.mapper().writeValueAsString(Map.of("jobDocument",
                Json.mapper().readTree(job("bad-override", "team-a", "hf", 0)), "overrides", Map.of("nodeGroups.main.env.X.secretRef", "hf/nope"))));
        assertThat(override.status()).isEqualTo(400);
        assertThat(override.json().get("problems")).extracting(p -> p.get("field").asString()).containsExactly("overrides.nodeGroups.main.env.X.secretRef");
        Response malformed = server.post("/api/v1/apply", alice, job("malformed", "team-a", "hf", 0)
                .replace("{\"secretRef\": \"hf/token\"}", "{\"secretRef\": \"hf/token\", \"optional\": true}")
                .replace("\"LR\": \"0.1\"", "\"LR\": [0.1]"));
        assertThat(malformed.status()).isEqualTo(400);
        assertThat(malformed.json().get("problems")).extracting(p -> p.get("field").asString())
                .containsExactlyInAnyOrder("spec.nodeGroups[0].env.HF_TOKEN.optional", "spec.nodeGroups[0].env.LR");
        Response masked = server.post("/api/v1/apply", alice, secret("hf", "\"***\""));
        assertThat(masked.status()).as("applying what get shows would wipe the values").isEqualTo(400);
    }

    @Test
    void valuesAreReadAtLaunchAndASecretGoneByThenFailsTheRunOnceWithTheReason() throws Exception {
        assertThat(server.post("/api/v1/apply", alice, secret("rotating", "old-value") + "---\n" + secret("doomed", "x")).status()).isEqualTo(200);
        // Every GPU of the cluster is taken, so the two runs below wait in the queue.
        String blocker = submit(alice, """
                {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "blocker", "workspace": "team-a"},
                 "spec": {"nodeGroups": [{"name": "main", "replicas": 4, "resources": {"cpu": 1, "memory": "1Gi", "gpu": 8},
                   "command": ["sleep", "600"]}]}}
                """, Map.of());
        server.awaitState(alice, blocker, "RUNNING");
        String changed = submit(alice, job("uses-rotating", "team-a", "rotating", 1), Map.of("nodeGroups.main.env.EXTRA", "plain"));
        String doomed = submit(alice, job("uses-doomed", "team-a", "doomed", 1), Map.of());
        assertThat(server.get("/api/v1/runs/" + changed, alice).json().get("state").asString()).isEqualTo("QUEUED");

        Response update = server.post("/api/v1/apply", alice, secret("rotating", NEW_VALUE));
        assertThat(update.json().get("items").get(0).get("action").asString()).isEqualTo("updated");
        assertThat(server.post("/api/v1/apply", alice, secret("rotating", NEW_VALUE)).json().get("items").get(0).get("action").asString())
                .isEqualTo("unchanged");
        assertThat(server.call("DELETE", "/api/v1/workspaces/team-a/secrets/doomed", alice, null, null).status()).isEqualTo(204);
        assertThat(server.post("/api/v1/runs/" + blocker + "/cancel", alice, "{}").status()).isEqualTo(200);

        JsonNode got = server.awaitRun(alice, changed, r -> r.get("state").asString().matches("SUCCEEDED|FAILED"));
        assertThat(got.get("state").asString()).isEqualTo("SUCCEEDED");
        assertThat(stdout(changed).lines().limit(2).toList()).containsOnly(sha256(NEW_VALUE) + "  -");
        JsonNode failed = server.awaitRun(alice, doomed, r -> r.get("state").asString().matches("SUCCEEDED|FAILED"));
        assertThat(failed.get("state").asString()).isEqualTo("FAILED");
        assertThat(failed.get("reason").asString()).startsWith("SecretUnavailable: secret team-a/doomed does not exist any more")
                .contains("a restart would fail the same way");
        assertThat(failed.get("attempt").asInt()).as("not restarted").isEqualTo(1);
        assertThat(failed.get("restarts").get("failures").asInt()).isZero();
        assertNowhere(NEW_VALUE);
        // Its instances outlive a server that stops: the class's server stops once every one of them is gone (CI once
        // found a rank cancelled a moment after its start still there, its SIGKILL due after the grace period).
        server.awaitState(alice, blocker, "CANCELLED");
    }
}
