package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.BugDetectors;
import com.code_intelligence.jazzer.api.SilentCloseable;
import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.slipstream.api.codec.Json;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.NodeInfo;
import io.slipstream.server.support.TestServer;
import io.slipstream.server.support.TestServer.Response;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import tools.jackson.databind.JsonNode;

/**
 * The API's body, query and path handling on a real in-process server (H2 store, local executor over one node that is
 * declared down before the first input and that no input brings up, so nothing is ever launched; it has capacity, so
 * that runs are accepted rather than refused as never fitting). The first byte of an input picks the request, the second the caller
 * ({@code a} the admin, anything else a member), the rest is the body, the query or the path:
 * <pre>
 * A apply      POST /api/v1/apply                      R runs     POST /api/v1/runs
 * O overrides  POST /api/v1/runs {workspace, job, overrides: lines of path=value}
 * N node down  POST /api/v1/nodes/node-1/down          T tokens   POST /api/v1/tokens
 * G progress   POST /api/v1/runs/RUN/instances/0/progress
 * Q query      GET  /api/v1/runs?...                   L logs     GET /api/v1/runs/RUN/logs?...
 * P path       GET  /api/v1/...                        D delete   DELETE /api/v1/...
 * </pre>
 * Oracle: every answer is below 500, within 1 s (a slow answer is tried once more before it counts), and a refused
 * request (4xx) leaves the store as it was: the same documents at the same versions, the same newest run, tokens and
 * node states. Seeds: {@code ApiFuzzTestInputs/handlesAnyRequest/}.
 */
class ApiFuzzTest {
    private static final long LIMIT_NANOS = 1_000_000_000L;

    private static Path dataDir;
    private static TestServer server;
    private static String admin;
    private static String member;
    private static String runId;

    /** Started at the first input, once Jazzer's agent is in place (it is not yet in {@code @BeforeAll}). */
    private static void start() throws Exception {
        dataDir = Files.createTempDirectory("api-fuzz");
        server = TestServer.start(dataDir, config -> config.withExecutor(config.executor(io.slipstream.executor.local.LocalExecutorSettings.class).withNodes(List.of(new NodeInfo("node-1", new Resources(64_000, 256L << 30, 8, "sim-gpu"), null, Map.of())))));
        admin = server.adminToken();
        Response down = server.post("/api/v1/nodes/node-1/down", admin, "{\"reason\": \"the fuzzer launches nothing\"}");
        assertThat(down.status()).as(down.text()).isEqualTo(200);
        Response setup = server.post("/api/v1/apply", admin, """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-a}
                spec: {members: [alice]}
                ---
                apiVersion: slipstream/v1
                kind: Shape
                metadata: {name: cpu.small}
                spec: {cpu: 1, memory: 1Gi}
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: ok, workspace: team-a}
                spec:
                  nodeGroups:
                    - {name: main, shape: cpu.small, command: ["true"], env: {X: "1"}}
                """);
        assertThat(setup.status()).as(setup.text()).isEqualTo(200);
        member = server.tokenFor("alice");
        Response run = server.post("/api/v1/runs", member, "{\"workspace\": \"team-a\", \"job\": \"ok\"}");
        assertThat(run.status()).as(run.text()).isEqualTo(201);
        runId = run.json().get("id").asString();
    }

    @AfterAll
    static void stop() throws Exception {
        if (server == null) {
            return;
        }
        server.close();
        try (var files = Files.walk(dataDir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
        }
    }

    @FuzzTest(maxDuration = "15s")
    @DictionaryEntries({"apiVersion: slipstream/v1", "kind: Job", "metadata: {name: j, workspace: team-a}", "spec",
            "nodeGroups", "command", "env", "startupProbe", "shape: cpu.small", "jobDocument", "overrides", "workspace", "job",
            "\"team-a\"", "\"ok\"", "nodeGroups.main.", "env.X", "replicas", "reason", "user", "step", "metrics", "limit=",
            "state=", "since=", "until=", "before=", "after=", "attempt=", "stream=", "format=", "instance=", "follow=", "&", "%00", "%ZZ",
            "%C3%28", "%FF", "..", "/", "!custom ", "&a ", "*a", "\\ud800", "1e400", "workspaces/", "jobs/", "quotas/", "runs/"})
    void handlesAnyRequest(byte[] input) throws Exception {
        try (SilentCloseable localOnly = BugDetectors.allowNetworkConnections((host, port) -> host.equals("127.0.0.1") || host.equals("localhost"))) {
            if (server == null) {
                start();
            }
            if (input.length >= 2) {
                check(input);
            }
        }
    }

    private static void check(byte[] input) {
        String token = input[1] == 'a' ? admin : member;
        byte[] rest = Arrays.copyOfRange(input, 2, input.length);
        String before = fingerprint();
        int status = timed(() -> send((char) input[0], token, rest), (char) input[0]);
        assertThat(status).as("no 5xx").isLessThan(500);
        if (status >= 400) {
            assertThat(fingerprint()).as("a refused request changes nothing").isEqualTo(before);
        }
    }

    /** Sends one request and returns its status; a 4xx from a route has the API's error body. */
    private static int send(char operation, String token, byte[] rest) {
        String text = new String(rest, StandardCharsets.UTF_8);
        return switch (operation) {
            case 'A' -> checked(server.callBytes("POST", "/api/v1/apply", token, rest, "application/yaml"));
            case 'R' -> checked(server.callBytes("POST", "/api/v1/runs", token, rest, "application/json"));
            case 'O' -> checked(server.post("/api/v1/runs", token, Json.mapper().writeValueAsString(
                    Map.of("workspace", "team-a", "job", "ok", "overrides", overrides(text)))));
            case 'N' -> checked(server.callBytes("POST", "/api/v1/nodes/node-1/down", token, rest, "application/json"));
            case 'T' -> checked(server.callBytes("POST", "/api/v1/tokens", token, rest, "application/json"));
            case 'G' -> checked(server.callBytes("POST", "/api/v1/runs/" + runId + "/instances/0/progress", token, rest, "application/json"));
            case 'Q' -> server.rawGet("/api/v1/runs?" + target(rest), token);
            case 'L' -> server.rawGet("/api/v1/runs/" + runId + "/logs?" + target(rest), token);
            case 'P' -> server.rawGet("/api/v1/" + target(rest), token);
            case 'D' -> checked(deleteRaw(target(rest), token));
            default -> 200;
        };
    }

    /** A DELETE of a path that a URI can hold; others are sent as a GET on the socket (for their status). */
    private static Response deleteRaw(String path, String token) {
        try {
            java.net.URI.create(server.server().url() + "/api/v1/" + path);
        } catch (IllegalArgumentException notAUri) {
            int status = server.rawGet("/api/v1/" + path, token);
            return new Response(status, "{\"status\":" + status + "}", "application/json", null);
        }
        return server.call("DELETE", "/api/v1/" + path, token, null, null);
    }

    private static int checked(Response response) {
        if (response.status() >= 400 && response.status() < 500 && response.contentType().startsWith("application/json")) {
            assertThat(response.json().get("status").asInt()).as(response.text()).isEqualTo(response.status());
        }
        return response.status();
    }

    /** Bytes as a request target: what would end the request line (controls, spaces, a fragment) is escaped. */
    private static String target(byte[] bytes) {
        StringBuilder target = new StringBuilder();
        for (byte b : bytes) {
            int c = b & 0xff;
            target.append(c <= 0x20 || c == 0x7f || c == '#' ? String.format(java.util.Locale.ROOT, "%%%02X", c) : String.valueOf((char) c));
        }
        return target.toString();
    }

    private static Map<String, String> overrides(String text) {
        Map<String, String> overrides = new LinkedHashMap<>();
        for (String line : text.split("\n", -1)) {
            int eq = line.indexOf('=');
            if (eq >= 0) {
                overrides.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        return overrides;
    }

    private interface Call {
        int status();
    }

    /** The call's status; a call over the limit is made once more, and only a second slow answer is a finding. */
    private static int timed(Call call, char operation) {
        long start = System.nanoTime();
        int status = call.status();
        if (System.nanoTime() - start <= LIMIT_NANOS) {
            return status;
        }
        start = System.nanoTime();
        status = call.status();
        long nanos = System.nanoTime() - start;
        assertThat(nanos).as("request " + operation + " answered " + status + " in " + nanos / 1_000_000 + " ms, twice over 1 s").isLessThanOrEqualTo(LIMIT_NANOS);
        return status;
    }

    /** What a refused request must not change. */
    private static String fingerprint() {
        List<String> parts = new ArrayList<>();
        for (String list : List.of("workspaces", "shapes", "quotas", "jobs")) {
            items("/api/v1/" + list, "metadata").forEach(d -> parts.add(list + ":" + d.get("metadata").get("workspace")
                    + "/" + d.get("metadata").get("name") + "@" + d.get("metadata").get("version")));
        }
        items("/api/v1/runs?limit=1", "id").forEach(r -> parts.add("newest run:" + r.get("id").asString()));
        items("/api/v1/tokens", "id").forEach(t -> parts.add("token:" + t.get("id").asString()));
        items("/api/v1/nodes", "name").forEach(n -> parts.add("node:" + n.get("name").asString() + " " + n.get("state") + " " + n.get("reason")));
        return String.join("\n", parts);
    }

    /** A listing's items, each with {@code field}; any other answer fails with all of it, to show its cause. */
    private static List<JsonNode> items(String path, String field) {
        Response response = server.get(path, admin);
        JsonNode listed = response.status() == 200 && response.contentType().startsWith("application/json") ? response.json().get("items") : null;
        List<JsonNode> items = new ArrayList<>();
        if (listed != null && listed.isArray()) {
            listed.forEach(items::add);
        }
        if (listed == null || !listed.isArray() || items.stream().anyMatch(item -> item.get(field) == null)) {
            throw new AssertionError("GET " + path + " answered " + response.status() + " " + response.headers().map() + ": " + response.text());
        }
        return items;
    }
}
