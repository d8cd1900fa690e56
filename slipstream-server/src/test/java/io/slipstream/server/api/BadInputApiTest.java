package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.server.support.TestServer;
import io.slipstream.server.support.TestServer.Response;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;

/**
 * Bad input through HTTP against a real server: every type confusion, duplicate key, byte that is not UTF-8, YAML tag,
 * override path and query or path parameter answers 4xx (400 with the field's path where there is one), never 500,
 * and a refused request leaves nothing behind.
 */
class BadInputApiTest {
    @TempDir
    static Path dataDir;

    private static TestServer server;
    private static String admin;
    private static String alice;
    private static String runId;

    @BeforeAll
    static void start() {
        server = TestServer.startInMemory(dataDir);
        admin = server.adminToken();
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
                """ + "---\n" + job("ok", "\"true\""));
        assertThat(setup.status()).as(setup.text()).isEqualTo(200);
        alice = server.tokenFor("alice");
        Response run = server.post("/api/v1/runs", alice, "{\"workspace\": \"team-a\", \"job\": \"ok\"}");
        assertThat(run.status()).as(run.text()).isEqualTo(201);
        runId = run.json().get("id").asString();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** A job whose first node group's command ends with {@code lastArg} (YAML). */
    private static String job(String name, String lastArg) {
        return """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: %s, workspace: team-a}
                spec:
                  nodeGroups:
                    - {name: main, shape: cpu.small, command: ["sh", %s]}
                """.formatted(name, lastArg);
    }

    /** What the store holds: every document with its version, and every run's id. */
    private static String snapshot() {
        List<String> lines = new ArrayList<>();
        for (String list : List.of("workspaces", "shapes", "quotas", "jobs")) {
            server.get("/api/v1/" + list, admin).json().get("items")
                    .forEach(d -> lines.add(list + " " + d.get("metadata").get("workspace") + "/" + d.get("metadata").get("name").asString()
                            + " v" + d.get("metadata").get("version")));
        }
        server.get("/api/v1/runs?limit=1000", admin).json().get("items").forEach(r -> lines.add("run " + r.get("id").asString()));
        return String.join("\n", new TreeSet<>(lines));
    }

    private static void assertRefused(Response response, String field, String messagePart) {
        assertThat(response.status()).as(response.text()).isEqualTo(400);
        JsonNode body = response.json();
        assertThat(body.get("code").asString()).isEqualTo("INVALID_INPUT");
        assertThat(body.get("problems")).as(response.text())
                .anySatisfy(p -> {
                    if (messagePart == null) {
                        assertThat(p.get("field").asString()).startsWith(field + "."); // a problem under the field
                    } else {
                        assertThat(p.get("field").asString()).isEqualTo(field);
                        assertThat(p.get("message").asString()).contains(messagePart);
                    }
                });
        assertThat(response.text()).doesNotContain("Exception");
    }

    /** The issue's cases: an object or a list where a command item, an env value or a probe's command item goes. */
    static Stream<Arguments> typeConfusions() {
        List<Arguments> cases = new ArrayList<>();
        Map<String, String> places = Map.of(
                "command: [{BAD}]", "spec.nodeGroups[0].command[0]",
                "command: [sh, {BAD}]", "spec.nodeGroups[0].command[1]",
                "command: [sh], env: {X: {BAD}}", "spec.nodeGroups[0].env.X",
                "command: [sh], startupProbe: {command: [{BAD}]}", "spec.nodeGroups[0].startupProbe.command[0]",
                "command: [sh], startupProbe: {command: [test, {BAD}]}", "spec.nodeGroups[0].startupProbe.command[1]");
        Map<String, String> values = Map.of("{a: 1}", "an object", "{}", "an object", "[1]", "a list", "[]", "a list", "[{}]", "a list");
        places.forEach((place, field) -> values.forEach((value, kind) -> cases.add(Arguments.of(place.replace("{BAD}", value), field, kind))));
        return cases.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("typeConfusions")
    void typeConfusionsAreFourHundredsOnApplyAndInAJobDocument(String group, String field, String kind) {
        String before = snapshot();
        String document = """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: confused, workspace: team-a}
                spec:
                  nodeGroups:
                    - {name: main, shape: cpu.small, %s}
                """.formatted(group);
        // An env value may also be an object, {secretRef: secret/key}: a wrong one is refused field by field under it.
        boolean envObject = field.contains(".env.") && kind.equals("an object");
        String expected = field.contains(".env.") ? "not " + kind : "must be a string, not " + kind;
        assertRefused(server.post("/api/v1/apply", alice, document), field, envObject ? null : expected);
        String json = Json.mapper().writeValueAsString(Json.yaml().readTree(document));
        assertRefused(server.post("/api/v1/apply", alice, json), field, envObject ? null : expected);
        assertRefused(server.post("/api/v1/runs", alice, "{\"jobDocument\": " + json + "}"), "jobDocument." + field, envObject ? null : expected);
        assertThat(snapshot()).isEqualTo(before);
    }

    /**
     * Security review of the schema rewrite: a member's 400 KB job with a hundred thousand bad exit codes (or twenty
     * thousand bad node groups) used to list every problem, and handling the list was quadratic: 190 s (140 s) of one
     * core for one request. The answer lists a bounded number of problems, the first ones, and says how many more.
     */
    @Test
    void aDocumentWithVeryManyProblemsIsRefusedWithABoundedList() {
        String before = snapshot();
        StringBuilder codes = new StringBuilder();
        for (int i = 0; i < 5000; i++) {
            codes.append(i == 0 ? "" : ",").append("\"a\"");
        }
        String json = "{\"apiVersion\":\"slipstream/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"many\",\"workspace\":\"team-a\"},"
                + "\"spec\":{\"faultTolerance\":{\"retryOn\":{\"exitCodes\":[" + codes + "]}},"
                + "\"nodeGroups\":[{\"name\":\"main\",\"shape\":\"cpu.small\",\"command\":[\"sh\"]}]}}";
        for (Response response : List.of(server.post("/api/v1/apply", alice, json), server.post("/api/v1/runs", alice, "{\"jobDocument\": " + json + "}"))) {
            assertThat(response.status()).as(response.text()).isEqualTo(400);
            assertThat(response.json().get("problems").size()).as(response.text().substring(0, 500)).isLessThanOrEqualTo(101);
        }
        assertThat(snapshot()).isEqualTo(before);
    }

    /** Security review: a mountPath with a NUL was given to Path.of by the schema's format, and answered 500. */
    @Test
    void aMountPathWithANulIsAFourHundred() {
        String before = snapshot();
        String json = "{\"apiVersion\":\"slipstream/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"nul\",\"workspace\":\"team-a\"},"
                + "\"spec\":{\"storage\":[{\"name\":\"d\",\"scope\":\"run\",\"mountPath\":\"/a\\u0000b\"}],"
                + "\"nodeGroups\":[{\"name\":\"main\",\"shape\":\"cpu.small\",\"command\":[\"sh\"]}]}}";
        assertRefused(server.post("/api/v1/apply", alice, json), "spec.storage[0].mountPath", "NUL");
        assertRefused(server.post("/api/v1/runs", alice, "{\"jobDocument\": " + json + "}"), "jobDocument.spec.storage[0].mountPath", "NUL");
        assertThat(snapshot()).isEqualTo(before);
    }

    /** Security review: 600 KB of nested YAML ran the server out of memory (OutOfMemoryError); now a 400 at once. */
    @Test
    void yamlNestedHundredsOfThousandsDeepIsAFourHundred() {
        String before = snapshot();
        String deep = "[".repeat(300_000) + "]".repeat(300_000);
        assertRefused(server.call("POST", "/api/v1/apply", alice, "a: " + deep, "application/yaml"), "", "nested more than 64 levels");
        assertRefused(server.post("/api/v1/runs", alice, "{\"workspace\": \"team-a\", \"job\": \"ok\", \"overrides\": {\"priority\": \"" + deep + "\"}}"),
                "overrides.priority", "nested more than 64 levels");
        assertThat(snapshot()).isEqualTo(before);
    }

    /**
     * Security review: problems found by the server (here 30,080 references to a Secret that does not exist, in a job the
     * schema accepts) were all listed: a 4.7 MB answer to a 1 MB request. The answer lists a bounded number of them.
     */
    @Test
    void theServersOwnProblemsAreListedUpToABound() {
        String before = snapshot();
        StringBuilder groups = new StringBuilder();
        for (int g = 0; g < 64; g++) {
            StringBuilder env = new StringBuilder();
            for (int e = 0; e < 470; e++) {
                env.append(e == 0 ? "" : ",").append("\"E").append(e).append("\":{\"secretRef\":\"missing/k\"}");
            }
            groups.append(g == 0 ? "" : ",").append("{\"name\":\"g").append(g).append("\",\"shape\":\"cpu.small\",\"command\":[\"sh\"],\"env\":{")
                    .append(env).append("}}");
        }
        String json = "{\"apiVersion\":\"slipstream/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"refs\",\"workspace\":\"team-a\"},\"spec\":{\"nodeGroups\":["
                + groups + "]}}";
        Response response = server.post("/api/v1/apply", alice, json);
        assertThat(response.status()).isEqualTo(400);
        assertThat(response.text().length()).isLessThan(64 * 1024);
        assertThat(response.json().get("problems").size()).isLessThanOrEqualTo(101);
        assertThat(snapshot()).isEqualTo(before);
    }

    @Test
    void duplicateKeysAreRefusedInJsonAsInYaml() {
        String before = snapshot();
        assertRefused(server.post("/api/v1/apply", alice, job("dup", "x").replace("command:", "command: [a], command:")),
                "spec.nodeGroups[0].command", "given twice");
        String json = Json.mapper().writeValueAsString(Json.yaml().readTree(job("dup", "x")))
                .replace("\"name\":\"main\"", "\"name\":\"main\",\"env\":{\"X\":\"1\",\"X\":\"2\"}");
        assertRefused(server.post("/api/v1/apply", alice, json), "spec.nodeGroups[0].env.X", "given twice");
        assertRefused(server.post("/api/v1/runs", alice, "{\"jobDocument\": " + json + "}"), "jobDocument.spec.nodeGroups[0].env.X", "given twice");
        assertRefused(server.post("/api/v1/runs", alice, "{\"workspace\": \"team-a\", \"job\": \"ok\", \"job\": \"other\"}"), "job", "given twice");
        assertRefused(server.post("/api/v1/tokens", admin, "{\"user\": \"bob\", \"admin\": false, \"admin\": true}"), "admin", "given twice");
        assertThat(snapshot()).isEqualTo(before);
    }

    /** The documents applied with a run's job: only with a jobDocument, no second Job, each checked, and nothing kept of a refusal. */
    @Test
    void documentsAppliedWithARunAreCheckedAndKeptOnlyWithIt() {
        String before = snapshot();
        String job = Json.mapper().writeValueAsString(Json.yaml().readTree(job("with-docs", "x")));
        String workspace = "{\"apiVersion\": \"slipstream/v1\", \"kind\": \"Workspace\", \"metadata\": {\"name\": \"team-z\"}}";
        assertRefused(server.post("/api/v1/runs", alice, "{\"workspace\": \"team-a\", \"job\": \"ok\", \"documents\": []}"), "documents",
                "go with a jobDocument");
        assertRefused(server.post("/api/v1/runs", alice, "{\"jobDocument\": " + job + ", \"documents\": [" + job + "]}"), "documents[0].kind",
                "the run's Job goes in jobDocument");
        assertRefused(server.post("/api/v1/runs", alice, "{\"jobDocument\": " + job + ", \"documents\": [{\"kind\": \"Quota\"}]}"),
                "documents[0]", null);
        String huge = "{\"apiVersion\": \"slipstream/v1\", \"kind\": \"Job\", \"metadata\": {\"name\": \"huge\", \"workspace\": \"team-z\"},"
                + " \"spec\": {\"nodeGroups\": [{\"name\": \"main\", \"resources\": {\"cpu\": 1000, \"memory\": \"1Gi\"}, \"command\": [\"true\"]}]}}";
        assertRefused(server.post("/api/v1/runs", admin, "{\"jobDocument\": " + huge + ", \"documents\": [" + workspace + "]}"), "spec.nodeGroups",
                "this run could never start");
        assertThat(snapshot()).as("nothing of a refused run is kept, not even the workspace applied with it").isEqualTo(before);
    }

    private static byte[] bytes(Object... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Object part : parts) {
            out.writeBytes(part instanceof String text ? text.getBytes(StandardCharsets.UTF_8) : (byte[]) part);
        }
        return out.toByteArray();
    }

    @Test
    void bytesThatAreNotUtf8AreRefusedNotReplaced() {
        String before = snapshot();
        String text = job("latin1", "\"caf@\"");
        byte[] yaml = bytes(text.substring(0, text.indexOf('@')), new byte[] {(byte) 0xE9}, text.substring(text.indexOf('@') + 1));
        Response apply = server.callBytes("POST", "/api/v1/apply", alice, yaml, "application/yaml");
        assertRefused(apply, "", "not valid UTF-8");
        int offset = text.indexOf('@');
        assertThat(apply.text()).contains("byte 0xE9 at offset " + offset + " (line 6, column " + (offset - text.lastIndexOf('\n', offset)) + ")");
        String json = Json.mapper().writeValueAsString(Json.yaml().readTree(job("latin1", "x")))
                .replace("\"name\":\"main\"", "\"name\":\"main\",\"env\":{\"X\":\"@\"}");
        byte[] run = bytes("{\"jobDocument\": " + json.substring(0, json.indexOf('@')), new byte[] {(byte) 0xC3, (byte) 0x28},
                json.substring(json.indexOf('@') + 1) + "}");
        assertRefused(server.callBytes("POST", "/api/v1/runs", alice, run, "application/json"), "", "not valid UTF-8");
        Response escaped = server.post("/api/v1/runs", alice, "{\"jobDocument\": " + json.replace("\"x\"", "\"\\ud800\"").replace("@", "y") + "}");
        assertRefused(escaped, "jobDocument.spec.nodeGroups[0].command[1]", "lone surrogate");
        assertThat(snapshot()).isEqualTo(before);
    }

    @Test
    void yamlTagsAreRefusedWithTheirPath() {
        String before = snapshot();
        assertRefused(server.post("/api/v1/apply", alice, job("tagged", "!custom x")), "spec.nodeGroups[0].command[1]", "tag !custom");
        assertRefused(server.post("/api/v1/apply", alice, job("tagged", "!!binary aGk=")), "spec.nodeGroups[0].command[1]", "tag !!binary");
        assertRefused(server.post("/api/v1/apply", alice, job("tagged", "x").replace("kind: Job", "kind: !!python/name:Job Job")), "kind", "tag");
        assertThat(server.post("/api/v1/apply", alice, job("tagged", "!!str 5")).status()).as("!!str makes a string").isEqualTo(200);
        assertThat(server.call("DELETE", "/api/v1/workspaces/team-a/jobs/tagged", alice, null, null).status()).isEqualTo(204);
        assertThat(snapshot()).isEqualTo(before);
    }

    @Test
    void overridePathsAreReportedAsGivenAndNothingIsStored() {
        String before = snapshot();
        assertRefused(server.post("/api/v1/runs", alice, "{\"workspace\": \"team-a\", \"job\": \"ok\", \"overrides\": {\"../../x\": 1}}"),
                "overrides.../../x", "is not a path");
        assertRefused(server.post("/api/v1/runs", alice,
                "{\"workspace\": \"team-a\", \"job\": \"ok\", \"overrides\": {\"nodeGroups.main.env.X\": {\"secretRef\": \"s/k\"}}}"),
                "overrides.nodeGroups.main.env.X", "must be a string, not an object");
        assertRefused(server.post("/api/v1/runs", alice, "{\"workspace\": \"team-a\", \"job\": \"ok\", \"overrides\": {\"priority\": \"!custom 5\"}}"),
                "overrides.priority", "tag !custom");
        assertRefused(server.post("/api/v1/runs", alice, "{\"workspace\": \"team-a\", \"job\": \"ok\", \"overrides\": {\"nodeGroups.main.env.X.Y\": \"1\"}}"),
                "overrides.nodeGroups.main.env.X.Y", "env values are strings");
        String json = Json.mapper().writeValueAsString(Json.yaml().readTree(job("submitted", "x")));
        assertRefused(server.post("/api/v1/runs", alice, "{\"jobDocument\": " + json + ", \"overrides\": {\"a..b\": 1}}"), "overrides.a..b", "is not a path");
        assertRefused(server.post("/api/v1/runs", alice, "{\"jobDocument\": " + json + ", \"overrides\": {\"nodeGroups.main.replicas\": \"many\"}}"),
                "overrides.nodeGroups.main.replicas", "whole number");
        assertThat(server.get("/api/v1/workspaces/team-a/jobs/submitted", alice).status()).as("the job was not applied either").isEqualTo(404);
        assertThat(snapshot()).isEqualTo(before);
        Response good = server.post("/api/v1/runs", alice, "{\"workspace\": \"team-a\", \"job\": \"ok\", \"overrides\": {\"nodeGroups.main.env.X\": 5}}");
        assertThat(good.status()).as(good.text()).isEqualTo(201);
    }

    @Test
    void otherBodiesOfTheWrongShapeAreFourHundreds() {
        String before = snapshot();
        assertRefused(server.post("/api/v1/nodes/node-1/down", admin, "{\"reason\": {\"a\": 1}}"), "reason", "must be a string, not an object");
        assertRefused(server.post("/api/v1/nodes/node-1/cordon", admin, "{\"reason\": [1]}"), "reason", "must be a string, not a list");
        assertRefused(server.post("/api/v1/nodes/node-1/drain", admin, "{\"reason\": \"" + "r".repeat(300) + "\"}"), "reason", "256");
        assertRefused(server.post("/api/v1/nodes/node-1/drain", admin, "{\"reasons\": \"typo\"}"), "reasons", "did you mean 'reason'");
        assertThat(server.get("/api/v1/nodes/node-1", admin).json().get("state").asString()).as("refused: nothing cordoned").isEqualTo("Ready");
        assertRefused(server.post("/api/v1/tokens", admin, "{\"user\": [\"bob\"]}"), "user", "must be a string, not a list");
        assertRefused(server.post("/api/v1/tokens", admin, "{\"user\": \"bob\", \"expiresInDays\": 1e400}"), "expiresInDays", "whole number");
        assertRefused(server.post("/api/v1/runs", alice, "{\"workspace\": \"team-a\", \"job\": \"ok\", \"overrides\": [1]}"), "overrides", "not a list");
        assertRefused(server.post("/api/v1/runs", alice, "{\"jobDocument\": [1]}"), "jobDocument", "not a list");
        assertRefused(server.post("/api/v1/runs/" + runId + "/instances/0/progress", admin, "{\"step\": {}}"), "step", "whole number");
        assertRefused(server.post("/api/v1/runs/" + runId + "/instances/0/progress", admin, "{\"step\": 1, \"metrics\": {\"loss\": []}}"),
                "metrics.loss", "finite number");
        assertThat(snapshot()).isEqualTo(before);
    }

    static Stream<String> badParameters() {
        String huge = "x".repeat(8000);
        return Stream.of(
                "/api/v1/runs?limit=99999999999999999999", "/api/v1/runs?limit=-1", "/api/v1/runs?limit=1e3", "/api/v1/runs?limit=%00",
                "/api/v1/runs?limit=", "/api/v1/runs?since=9999999999d", "/api/v1/runs?since=-2h", "/api/v1/runs?since=%2B1000000000-01-01T00:00:00Z",
                "/api/v1/runs?until=P1D", "/api/v1/runs?since=%00", "/api/v1/runs?before=1_", "/api/v1/runs?before=_x",
                "/api/v1/runs?before=99999999999999999999_x", "/api/v1/runs?before=1_%00", "/api/v1/runs?before=9223372036854775807_ok-aaaaaaaa",
                "/api/v1/runs?before=-5_ok-aaaaaaaa", "/api/v1/runs?until=-999999999-01-01T00:00:00Z", "/api/v1/runs?=x", "/api/v1/runs?before=" + huge,
                "/api/v1/runs?state=%00", "/api/v1/runs?state=,,", "/api/v1/runs?state=running%E2%80%8B", "/api/v1/runs?workspace=%00",
                "/api/v1/runs?workspace=" + huge, "/api/v1/runs?job=%C3%28", "/api/v1/runs?job=%ED%A0%80", "/api/v1/runs?workspace=a&workspace=b",
                "/api/v1/jobs?workspace=%00", "/api/v1/quotas?workspace=" + huge,
                "/api/v1/runs/RUN/events?after=-1", "/api/v1/runs/RUN/events?after=abc", "/api/v1/runs/RUN/events?limit=0",
                "/api/v1/runs/RUN/events?limit=99999", "/api/v1/runs/RUN/events?after=99999999999999999999",
                "/api/v1/runs/RUN/logs?attempt=0", "/api/v1/runs/RUN/logs?attempt=abc", "/api/v1/runs/RUN/logs?attempt=99999999999",
                "/api/v1/runs/RUN/logs?format=xml", "/api/v1/runs/RUN/logs?stream=bogus", "/api/v1/runs/RUN/logs?stream=%00",
                "/api/v1/runs/RUN/logs?follow=maybe", "/api/v1/runs/RUN/logs?instance=%00", "/api/v1/runs/RUN/logs?instance=..%2F..%2Fetc",
                "/api/v1/runs/RUN/logs?instance=main-99999999999", "/api/v1/runs/RUN/logs?instance=" + huge,
                "/api/v1/runs/%00", "/api/v1/runs/" + huge, "/api/v1/runs/%E2%98%83", "/api/v1/runs/..%2F..%2Fetc%2Fpasswd",
                "/api/v1/runs/%00/events", "/api/v1/runs/%00/logs", "/api/v1/workspaces/%00", "/api/v1/workspaces/" + huge,
                "/api/v1/workspaces/team-a/jobs/%00", "/api/v1/workspaces/%00/quotas/q", "/api/v1/workspaces/team-a/quotas/%C3%28",
                "/api/v1/shapes/%00", "/api/v1/shapes/" + huge, "/api/v1/nodes/%00", "/api/v1/nodes/" + huge);
    }

    @ParameterizedTest
    @MethodSource("badParameters")
    void queryAndPathParametersNeverGiveFiveHundreds(String target) {
        String path = target.replace("RUN", runId);
        Response response = server.get(path, admin);
        String shown = (path.length() > 100 ? path.substring(0, 100) + "..." : path) + " -> " + response.status() + " " + response.text();
        assertThat(response.status()).as(shown).isBetween(400, 499);
        assertThat(response.contentType()).as(shown).startsWith("application/json");
        assertThat(response.json().get("status").asInt()).as(shown).isEqualTo(response.status());
    }

    @Test
    void writesWithBadPathParametersAreFourHundredsAndChangeNothing() {
        String before = snapshot();
        for (String path : List.of("/api/v1/runs/%00/cancel", "/api/v1/nodes/%00/down", "/api/v1/nodes/%00/up", "/api/v1/nodes/%00/cordon",
                "/api/v1/nodes/%00/drain", "/api/v1/nodes/%00/uncordon",
                "/api/v1/runs/" + runId + "/instances/abc/progress", "/api/v1/runs/" + runId + "/instances/99999999999999999999/progress",
                "/api/v1/runs/" + runId + "/instances/-1/progress", "/api/v1/runs/" + runId + "/instances/%00/progress")) {
            Response response;
            try {
                response = server.post(path, admin, "{\"reason\": \"test\", \"step\": 1}");
            } catch (AssertionError e) {
                throw new AssertionError("POST " + path, e);
            }
            assertThat(response.status()).as(path + " -> " + response.text()).isBetween(400, 499);
        }
        for (String path : List.of("/api/v1/tokens/%00", "/api/v1/workspaces/%00", "/api/v1/shapes/%00", "/api/v1/workspaces/team-a/jobs/%00",
                "/api/v1/workspaces/%00/quotas/%00")) {
            Response response = server.call("DELETE", path, admin, null, null);
            assertThat(response.status()).as(path + " -> " + response.text()).isBetween(400, 499);
        }
        assertThat(snapshot()).isEqualTo(before);
    }

    @Test
    void garbageAuthorizationHeadersAreFourHundredsNotFiveHundreds() throws Exception {
        for (String header : List.of("Bearer", "Bearer ", "Basic YWxpY2U6c2VjcmV0", "Bearer ss_" + "x".repeat(4000), "Bearer ss_\u00e9\u00ff",
                "Bearer " + admin + " " + admin, "bearer " + admin.toUpperCase(java.util.Locale.ROOT), "Bearer ss_%00")) {
            try (java.net.Socket socket = new java.net.Socket("127.0.0.1", server.server().port())) {
                socket.setSoTimeout(60_000);
                socket.getOutputStream().write(("GET /api/v1/whoami HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: " + header
                        + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
                String status = new java.io.BufferedReader(new java.io.InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1)).readLine();
                assertThat(status).as(header.length() > 40 ? header.substring(0, 40) : header).matches("HTTP/1\\.1 4\\d\\d .*");
            }
        }
    }

    @Test
    void requestTargetsThatNoUriHoldsAreFourHundreds() {
        for (String target : List.of("/api/v1/runs?limit=%ZZ", "/api/v1/runs/%ZZ", "/api/v1/runs?workspace=%FF", "/api/v1/runs/%FF%FE",
                "/api/v1/workspaces/%C0%80", "/api/v1/runs?state=%", "/api/v1/runs/\u00e9", "/api/v1/runs?job=\u00ff",
                "/api/v1/runs/;%commandts", "/api/v1/runs/x;%zz/events", "/api/v1/runs/x;a=%")) { // a found by fuzzing: a 500 before
            assertThat(server.rawGet(target, admin)).as(target).isBetween(400, 499);
        }
    }

    @Test
    void aDryRunApplyChecksAndReportsButWritesNothing() {
        String before = snapshot();
        String input = job("ok", "\"false\"") + "---\n" + job("fresh", "\"true\"");
        Response dry = server.post("/api/v1/apply?dryRun=true", admin, input);
        assertThat(dry.status()).as(dry.text()).isEqualTo(200);
        assertThat(dry.json().get("items")).extracting(i -> i.get("name").asString() + " " + i.get("action").asString() + " v" + i.get("version"))
                .containsExactly("ok updated v2", "fresh created v1");
        assertThat(snapshot()).isEqualTo(before);
        assertThat(server.post("/api/v1/apply?dryRun=true", admin, job("ok", "\"true\"")).json().get("items").get(0).get("action").asString())
                .isEqualTo("unchanged");

        Response refused = server.post("/api/v1/apply?dryRun=true", admin, job("bad", "\"true\"").replace("shape: cpu.small", "shape: none-such"));
        assertRefused(refused, "spec.nodeGroups[0].shape", "unknown shape 'none-such'");
        assertRefused(server.post("/api/v1/apply?dryRun=maybe", admin, input), "dryRun", "must be true or false");
        assertThat(snapshot()).isEqualTo(before);
    }
}
