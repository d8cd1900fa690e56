package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.server.support.TestServer;
import io.slipstream.server.support.TestServer.Response;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/** Authentication, scoping and bad input, through HTTP against a real server. */
class ApiTest {
    @TempDir
    static Path dataDir;

    private static TestServer server;
    private static String admin;
    private static String alice;
    private static String bob;

    private static final String SETUP = """
            apiVersion: slipstream/v1
            kind: Workspace
            metadata: {name: team-a}
            spec: {members: [alice]}
            ---
            apiVersion: slipstream/v1
            kind: Workspace
            metadata: {name: team-b}
            spec: {members: [bob]}
            ---
            apiVersion: slipstream/v1
            kind: Shape
            metadata: {name: cpu.small}
            spec: {cpu: 1, memory: 1Gi}
            """;

    private static String job(String name, String workspace) {
        return """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: %s, workspace: %s}
                spec:
                  nodeGroups:
                    - {name: main, shape: cpu.small, command: ["true"]}
                """.formatted(name, workspace);
    }

    @BeforeAll
    static void start() {
        server = TestServer.startInMemory(dataDir);
        admin = server.adminToken();
        assertThat(server.post("/api/v1/apply", admin, SETUP).status()).isEqualTo(200);
        alice = server.tokenFor("alice");
        bob = server.tokenFor("bob");
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static String submit(String token, String jobYaml) {
        JsonNode document = Json.yaml().readTree(jobYaml);
        Response response = server.post("/api/v1/runs", token, Json.mapper().writeValueAsString(Map.of("jobDocument", document)));
        assertThat(response.status()).as(response.text()).isEqualTo(201);
        return response.json().get("id").asString();
    }

    @Test
    void healthNeedsNoTokenButEverythingElseDoes() {
        assertThat(server.get("/healthz", null).status()).isEqualTo(200);
        for (String path : List.of("/api/v1/runs", "/api/v1/whoami", "/api/v1/nodes", "/api/v1/jobs", "/api/v1/nope")) {
            Response response = server.get(path, null);
            assertThat(response.status()).as(path).isEqualTo(401);
            assertThat(response.json().get("code").asString()).isEqualTo("UNAUTHORIZED");
        }
        assertThat(server.get("/api/v1/runs", "ss_not-a-real-token").status()).isEqualTo(401);
        assertThat(server.call("GET", "/api/v1/runs", null, null, null).status()).isEqualTo(401);
    }

    /** What keeps the executor from its work is said by /readyz, without a 503: the API still serves. */
    @Test
    void readinessSaysWhatKeepsTheExecutorFromItsWork() {
        assertThat(server.get("/readyz", null).json().has("executor")).isFalse();
        server.fakeExecutor().setProblem("cannot read Slurm's queue since 2026-12-07T08:00:00Z: Slurm did not answer");
        try {
            Response ready = server.get("/readyz", null);
            assertThat(ready.status()).isEqualTo(200);
            assertThat(ready.json().get("executor").asString()).isEqualTo("cannot read Slurm's queue since 2026-12-07T08:00:00Z: Slurm did not answer");
        } finally {
            server.fakeExecutor().setProblem(null);
        }
    }

    @Test
    void theAdminTokenFileIsPrivateAndOnlyTheHashIsStored() throws Exception {
        Path file = server.server().adminTokenFile();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        String secret = Files.readString(file, StandardCharsets.UTF_8).trim();
        assertThat(secret).startsWith("ss_");
        JsonNode tokens = server.get("/api/v1/tokens", admin).json();
        assertThat(tokens.toString()).doesNotContain(secret).doesNotContain(io.slipstream.server.secret.TokenHasher.sha256Hex(secret));
        // The database files hold the hash, never the secret.
        List<Path> storeFiles = new ArrayList<>();
        try (var files = Files.walk(dataDir.resolve("store"))) {
            files.filter(Files::isRegularFile).forEach(storeFiles::add);
        }
        for (Path storeFile : storeFiles) {
            String content = new String(Files.readAllBytes(storeFile), StandardCharsets.ISO_8859_1);
            assertThat(content).doesNotContain(secret).doesNotContain(alice).doesNotContain(bob);
        }
    }

    @Test
    void membersSeeOnlyTheirWorkspacesAndOthersIdsAnswerNotFound() {
        String aliceRun = submit(alice, job("scoped", "team-a"));
        String bobRun = submit(bob, job("scoped", "team-b"));

        assertThat(server.get("/api/v1/runs/" + bobRun, alice).status()).isEqualTo(404);
        assertThat(server.get("/api/v1/runs/" + bobRun + "/events", alice).status()).isEqualTo(404);
        assertThat(server.get("/api/v1/runs/" + bobRun + "/logs", alice).status()).isEqualTo(404);
        assertThat(server.post("/api/v1/runs/" + bobRun + "/cancel", alice, "{}").status()).isEqualTo(404);
        assertThat(server.get("/api/v1/workspaces/team-b/jobs/scoped", alice).status()).isEqualTo(404);
        assertThat(server.get("/api/v1/workspaces/team-b", alice).status()).isEqualTo(404);
        assertThat(server.get("/api/v1/runs/" + aliceRun, alice).status()).isEqualTo(200);

        List<String> visible = new ArrayList<>();
        server.get("/api/v1/runs", alice).json().get("items").forEach(r -> visible.add(r.get("workspace").asString()));
        assertThat(visible).isNotEmpty().containsOnly("team-a");
        assertThat(server.get("/api/v1/runs?workspace=team-b", alice).json().get("items")).isEmpty();
        assertThat(server.get("/api/v1/workspaces", alice).json().get("items")).extracting(w -> w.get("metadata").get("name").asString())
                .containsExactly("team-a");
        assertThat(server.get("/api/v1/runs/" + bobRun, admin).status()).isEqualTo(200);
        assertThat(server.get("/api/v1/whoami", alice).json().get("workspaces").toString()).isEqualTo("[\"team-a\"]");
    }

    @Test
    void membersCannotWriteIntoOtherWorkspacesOrAdminObjects() {
        Response foreign = server.post("/api/v1/apply", alice, job("sneaky", "team-b"));
        assertThat(foreign.status()).isEqualTo(400);
        assertThat(foreign.json().get("problems").get(0).get("field").asString()).isEqualTo("metadata.workspace");
        assertThat(foreign.text()).contains("does not exist or you are not a member");
        assertThat(server.get("/api/v1/workspaces/team-b/jobs/sneaky", admin).status()).isEqualTo(404);

        Response shape = server.post("/api/v1/apply", alice, """
                apiVersion: slipstream/v1
                kind: Shape
                metadata: {name: gpu.huge}
                spec: {cpu: 64, memory: 512Gi, gpu: 8, gpuModel: h100}
                """);
        assertThat(shape.status()).isEqualTo(403);
        assertThat(server.post("/api/v1/tokens", alice, "{\"user\":\"mallory\",\"admin\":true}").status()).isEqualTo(403);
        assertThat(server.call("DELETE", "/api/v1/shapes/cpu.small", alice, null, null).status()).isEqualTo(403);
    }

    @Test
    void invalidDocumentsAreRejectedWithEveryProblemAndNothingIsCreated() {
        Response response = server.post("/api/v1/apply", admin, """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: created-by-a-bad-batch}
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: NotADnsLabel, workspace: team-a}
                spec:
                  nodeGroups:
                    - name: main
                      replicas: -2
                      resources: {cpu: lots, memory: 1Gi}
                      command: [run]
                      env: {"bad-name": x}
                      colour: blue
                """);
        assertThat(response.status()).isEqualTo(400);
        JsonNode body = response.json();
        assertThat(body.get("code").asString()).isEqualTo("INVALID_INPUT");
        List<String> fields = new ArrayList<>();
        body.get("problems").forEach(p -> fields.add(p.get("field").asString()));
        assertThat(fields).containsExactlyInAnyOrder("documents[1].metadata.name", "documents[1].spec.nodeGroups[0].replicas",
                "documents[1].spec.nodeGroups[0].resources.cpu", "documents[1].spec.nodeGroups[0].env.bad-name",
                "documents[1].spec.nodeGroups[0].colour");
        assertThat(server.get("/api/v1/workspaces/created-by-a-bad-batch", admin).status()).isEqualTo(404);
    }

    @Test
    void referencesToMissingObjectsRollTheWholeBatchBack() {
        Response response = server.post("/api/v1/apply", admin, """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: rolled-back}
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: j, workspace: rolled-back}
                spec:
                  nodeGroups:
                    - {name: main, shape: no-such-shape, command: ["true"]}
                """);
        assertThat(response.status()).isEqualTo(400);
        assertThat(response.json().get("problems").get(0).get("field").asString()).isEqualTo("documents[1].spec.nodeGroups[0].shape");
        assertThat(response.json().get("problems").get(0).get("message").asString()).contains("unknown shape 'no-such-shape'").contains("cpu.small");
        assertThat(server.get("/api/v1/workspaces/rolled-back", admin).status()).isEqualTo(404);
    }

    @Test
    void garbageAndHostileBodiesGetFourHundredsNeverFiveHundreds() {
        String bomb = "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n";
        String big = "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: big}\nspec: {members: [" + "a,".repeat(600_000) + "b]}\n";
        for (String body : List.of("", "{", "[1,2", "null", "42", "\"text\"", "{\"apiVersion\": 5}", bomb, big, "- - - [", "\u0000\u0001",
                "{\"a\":" + "[".repeat(5000) + "]".repeat(5000) + "}")) {
            Response response = server.post("/api/v1/apply", admin, body);
            assertThat(response.status()).as(body.length() > 80 ? body.substring(0, 80) : body).isEqualTo(400);
            assertThat(response.json().get("problems")).isNotEmpty();
            assertThat(response.text()).doesNotContain("Exception").doesNotContain("at io.");
        }
        Response runRequest = server.post("/api/v1/runs", admin, "{\"workspace\": 5, \"colour\": \"red\"}");
        assertThat(runRequest.status()).isEqualTo(400);
        assertThat(runRequest.text()).contains("colour").contains("workspace");
    }

    @Test
    void badQueryParametersAndUnknownRoutesAreClearErrors() {
        assertThat(server.get("/api/v1/runs?limit=abc", admin).json().get("problems").get(0).get("field").asString()).isEqualTo("limit");
        assertThat(server.get("/api/v1/runs?limit=0", admin).status()).isEqualTo(400);
        assertThat(server.get("/api/v1/runs?state=SLEEPING", admin).status()).isEqualTo(400);
        assertThat(server.get("/api/v1/runs?before=garbage", admin).status()).isEqualTo(400);
        assertThat(server.get("/api/v1/runs/..%2F..%2Fetc", admin).status()).isEqualTo(404);
        assertThat(server.get("/api/v1/runs/NOT_AN_ID", admin).status()).isEqualTo(404);
        Response unknown = server.get("/api/v1/no-such-thing", admin);
        assertThat(unknown.status()).isEqualTo(404);
        assertThat(unknown.json().get("code").asString()).isEqualTo("NOT_FOUND");
    }

    @Test
    void versionedApplyIsCompareAndSet() {
        String workspace = """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: versioned%s}
                spec: {members: [%s]}
                """;
        assertThat(server.post("/api/v1/apply", admin, workspace.formatted("", "carol")).json().get("items").get(0).get("action").asString())
                .isEqualTo("created");
        assertThat(server.post("/api/v1/apply", admin, workspace.formatted("", "carol")).json().get("items").get(0).get("action").asString())
                .isEqualTo("unchanged");
        String stale = workspace.formatted("", "dave").replace("metadata: {name: versioned}", "metadata: {name: versioned, version: 7}");
        Response conflict = server.post("/api/v1/apply", admin, stale);
        assertThat(conflict.status()).isEqualTo(409);
        String current = stale.replace("version: 7", "version: 1");
        assertThat(server.post("/api/v1/apply", admin, current).json().get("items").get(0).get("version").asLong()).isEqualTo(2);
    }

    @Test
    void runsListPagesWithACursor() {
        for (int i = 0; i < 3; i++) {
            submit(admin, job("paged", "team-a"));
        }
        JsonNode first = server.get("/api/v1/runs?job=paged&limit=2", admin).json();
        assertThat(first.get("items")).hasSize(2);
        String next = first.get("next").asString();
        JsonNode second = server.get("/api/v1/runs?job=paged&limit=2&before=" + next, admin).json();
        assertThat(second.get("items")).hasSize(1);
        assertThat(second.has("next")).isFalse();
    }
}
