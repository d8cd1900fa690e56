package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.networknt.schema.Error;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import io.slipstream.api.codec.Json;
import io.slipstream.server.support.TestServer;
import io.slipstream.server.support.TestServer.Response;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Holds the server to docs/api/openapi.yaml: the same routes on both sides, and every response of a session that
 * touches every route has a documented status and a body that validates against the documented schema.
 */
class OpenApiConformanceTest {
    private static final Path OPENAPI = Path.of("..", "docs", "api", "openapi.yaml");

    @TempDir
    static Path dataDir;

    private static TestServer server;
    private static JsonNode openApi;
    private static final Set<String> exercised = new TreeSet<>();

    @BeforeAll
    static void start() throws Exception {
        openApi = Json.yaml().readTree(Files.readString(OPENAPI));
        server = TestServer.start(dataDir, config -> config.withIdentityIssuer("https://slipstream.example.com"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** Generated clients name their methods after operationIds: every operation has one, unique and camelCase. */
    @Test
    void everyOperationHasItsOwnOperationId() {
        java.util.Map<String, String> ids = new java.util.TreeMap<>();
        openApi.get("paths").properties().forEach(path -> path.getValue().properties().forEach(operation -> {
            if (Set.of("get", "post", "put", "delete", "patch").contains(operation.getKey())) {
                String where = operation.getKey().toUpperCase(Locale.ROOT) + " " + path.getKey();
                String id = operation.getValue().path("operationId").asString("");
                assertThat(id).as("operationId of %s", where).matches("[a-z][A-Za-z]+");
                assertThat(ids.put(id, where)).as("operationId %s of %s is also %s's", id, where, ids.get(id)).isNull();
            }
        }));
        assertThat(ids).hasSizeGreaterThan(30);
    }

    @Test
    void theServerHasExactlyTheDocumentedRoutes() {
        Set<String> documented = new TreeSet<>();
        openApi.get("paths").properties().forEach(path -> path.getValue().propertyNames().forEach(method -> {
            if (Set.of("get", "post", "put", "delete", "patch").contains(method)) {
                documented.add(method.toUpperCase(Locale.ROOT) + " " + path.getKey());
            }
        }));
        Set<String> served = new TreeSet<>();
        server.server().routes().forEach(route -> served.add(route.method() + " " + route.path()));
        assertThat(served).isEqualTo(documented);
    }

    @Test
    void everyResponseMatchesTheDocument() {
        String admin = server.adminToken();
        check("GET", "/healthz", Map.of(), null, null);
        check("GET", "/readyz", Map.of(), null, null);
        check("GET", "/.well-known/openid-configuration", Map.of(), null, null);
        server.server().identityTokens().mint(new io.slipstream.server.identity.IdentityTokens.Subject("a", "j", "j-12345678", 1, null), "aud",
                java.time.Duration.ofMinutes(5), java.time.Instant.now()); // a key in the set
        check("GET", "/.well-known/jwks.json", Map.of(), null, null);
        check("GET", "/api/v1/whoami", Map.of(), admin, null);
        check("GET", "/api/v1/leader", Map.of(), admin, null);
        check("GET", "/api/v1/whoami", Map.of(), "ss_wrong", null);
        check("POST", "/api/v1/apply", Map.of(), admin, """
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
                kind: Quota
                metadata: {name: team-a-gpu, workspace: team-a}
                spec: {min: {gpu: 8}, max: {gpu: 16}}
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: hello, workspace: team-a}
                spec:
                  nodeGroups:
                    - {name: main, replicas: 2, shape: cpu.small, command: [sh, -c, "echo hi; echo oops >&2"]}
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: yearly, workspace: team-a}
                spec:
                  schedule: {cron: "0 2 1 1 *", timeZone: Europe/Berlin}
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: [sh, -c, "echo hi"]}
                """);
        check("POST", "/api/v1/apply", Map.of(), admin, "kind: Job\n");
        String alice = server.tokenFor("alice");
        check("POST", "/api/v1/apply", Map.of(), alice, "apiVersion: slipstream/v1\nkind: Shape\nmetadata: {name: x}\nspec: {cpu: 1, memory: 1Gi}\n");
        check("POST", "/api/v1/apply", Map.of(), admin,
                "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: team-a, version: 99}\nspec: {members: []}\n");

        check("GET", "/api/v1/workspaces", Map.of(), admin, null);
        check("GET", "/api/v1/workspaces/{workspace}", Map.of("workspace", "team-a"), alice, null);
        check("GET", "/api/v1/workspaces/{workspace}", Map.of("workspace", "nope"), alice, null);
        check("GET", "/api/v1/shapes", Map.of(), alice, null);
        check("GET", "/api/v1/shapes/{shape}", Map.of("shape", "cpu.small"), alice, null);
        check("POST", "/api/v1/apply", Map.of(), admin,
                "apiVersion: slipstream/v1\nkind: Topology\nmetadata: {name: default}\nspec: {levels: [{name: rack, nodeLabel: topology.slipstream.io/rack}]}\n");
        check("GET", "/api/v1/topologies", Map.of(), alice, null);
        check("GET", "/api/v1/topologies/{topology}", Map.of("topology", "default"), alice, null);
        check("GET", "/api/v1/topologies/{topology}", Map.of("topology", "nope"), alice, null);
        check("GET", "/api/v1/quotas", Map.of(), alice, null);
        check("GET", "/api/v1/workspaces/{workspace}/quotas/{quota}", Map.of("workspace", "team-a", "quota", "team-a-gpu"), alice, null);
        check("GET", "/api/v1/workspaces/{workspace}/quotas/{quota}/pending", Map.of("workspace", "team-a", "quota", "team-a-gpu"), alice, null);
        check("GET", "/api/v1/workspaces/{workspace}/quotas/{quota}/pending", Map.of("workspace", "team-a", "quota", "nope"), alice, null);
        check("GET", "/api/v1/pools", Map.of(), alice, null);
        check("GET", "/api/v1/usage", Map.of(), alice, null);
        check("GET", "/api/v1/usage", Map.of("?", "by=quota&since=30d"), alice, null);
        check("GET", "/api/v1/usage", Map.of("?", "by=nope"), alice, null);
        check("GET", "/api/v1/usage", Map.of("?", "since=1h&until=2h"), alice, null);
        check("GET", "/api/v1/usage/series", Map.of(), alice, null);
        check("GET", "/api/v1/usage/series", Map.of("?", "window=day&by=pool"), alice, null);
        check("GET", "/api/v1/usage/series", Map.of("?", "window=month&by=cluster"), admin, null);
        check("GET", "/api/v1/usage/series", Map.of("?", "by=cluster"), alice, null);
        check("GET", "/api/v1/usage/series", Map.of("?", "window=year"), alice, null);
        check("GET", "/metrics", Map.of(), admin, null);
        check("GET", "/metrics", Map.of(), alice, null);
        check("GET", "/api/v1/jobs", Map.of(), alice, null);
        check("GET", "/api/v1/jobs", Map.of("?", "workspace=Not_A_Name"), alice, null);
        check("GET", "/api/v1/quotas", Map.of("?", "workspace=team-a&workspace=team-b"), alice, null);
        check("GET", "/api/v1/workspaces/{workspace}/jobs/{job}", Map.of("workspace", "team-a", "job", "hello"), alice, null);
        assertThat(check("GET", "/api/v1/workspaces/{workspace}/jobs/{job}", Map.of("workspace", "team-a", "job", "yearly"), alice, null)
                .path("status").has("nextRunAt")).isTrue();
        check("POST", "/api/v1/apply", Map.of(), alice, """
                apiVersion: slipstream/v1
                kind: Secret
                metadata: {name: hf, workspace: team-a}
                spec: {data: {token: hf_abc, user: bot}}
                """);
        check("POST", "/api/v1/apply", Map.of(), alice, "apiVersion: slipstream/v1\nkind: Secret\nmetadata: {name: x, workspace: team-a}\n"
                + "spec: {data: {token: \"***\"}}\n");
        check("GET", "/api/v1/secrets", Map.of(), alice, null);
        check("GET", "/api/v1/secrets", Map.of("?", "workspace=team-a"), admin, null);
        check("GET", "/api/v1/workspaces/{workspace}/secrets/{secret}", Map.of("workspace", "team-a", "secret", "hf"), alice, null);
        check("GET", "/api/v1/workspaces/{workspace}/secrets/{secret}", Map.of("workspace", "team-a", "secret", "none"), alice, null);
        check("GET", "/api/v1/nodes", Map.of(), alice, null);
        check("GET", "/api/v1/nodes/{node}", Map.of("node", "node-1"), alice, null);
        check("GET", "/api/v1/nodes/{node}", Map.of("node", "node-99"), alice, null);
        check("POST", "/api/v1/nodes/{node}/down", Map.of("node", "node-1"), alice, "{\"reason\":\"maintenance\"}");
        check("POST", "/api/v1/nodes/{node}/down", Map.of("node", "node-1"), admin, "{}");
        check("POST", "/api/v1/nodes/{node}/down", Map.of("node", "node-99"), admin, "{\"reason\":\"maintenance\"}");
        check("POST", "/api/v1/nodes/{node}/down", Map.of("node", "node-1"), admin, "{\"reason\":\"maintenance\"}");
        check("GET", "/api/v1/nodes/{node}", Map.of("node", "node-1"), alice, null);
        check("POST", "/api/v1/nodes/{node}/up", Map.of("node", "node-1"), admin, null);
        check("POST", "/api/v1/nodes/{node}/up", Map.of("node", "node-1"), alice, null);
        check("POST", "/api/v1/nodes/{node}/cordon", Map.of("node", "node-1"), alice, "{\"reason\":\"kernel upgrade\"}");
        check("POST", "/api/v1/nodes/{node}/cordon", Map.of("node", "node-1"), admin, "{\"why\":\"kernel upgrade\"}");
        check("POST", "/api/v1/nodes/{node}/cordon", Map.of("node", "node-99"), admin, null);
        check("POST", "/api/v1/nodes/{node}/cordon", Map.of("node", "node-1"), admin, "{\"reason\":\"kernel upgrade\"}");
        check("POST", "/api/v1/nodes/{node}/drain", Map.of("node", "node-1"), admin, null);
        check("POST", "/api/v1/nodes/{node}/drain", Map.of("node", "node-1"), alice, null);
        check("POST", "/api/v1/nodes/{node}/drain", Map.of("node", "node-99"), admin, null);
        check("POST", "/api/v1/nodes/{node}/drain", Map.of("node", "node-1"), admin, "{\"reason\":" + "\"" + "x".repeat(300) + "\"}");
        check("GET", "/api/v1/nodes/{node}", Map.of("node", "node-1"), alice, null);
        check("POST", "/api/v1/nodes/{node}/uncordon", Map.of("node", "node-1"), alice, null);
        check("POST", "/api/v1/nodes/{node}/uncordon", Map.of("node", "node-99"), admin, null);
        check("POST", "/api/v1/nodes/{node}/uncordon", Map.of("node", "node-1"), admin, null);

        JsonNode run = check("POST", "/api/v1/runs", Map.of(), alice, "{\"workspace\":\"team-a\",\"job\":\"hello\"}");
        String id = run.get("id").asString();
        check("POST", "/api/v1/runs", Map.of(), alice, "{\"workspace\":\"team-a\"}");
        check("POST", "/api/v1/runs", Map.of(), alice, "{\"workspace\":\"team-a\",\"job\":\"missing\"}");
        server.awaitState(alice, id, "SUCCEEDED");
        check("GET", "/api/v1/runs", Map.of(), alice, null);
        check("GET", "/api/v1/runs", Map.of("?", "limit=0"), alice, null);
        check("GET", "/api/v1/watch", Map.of("?", "workspace=team-a&timeoutSeconds=1"), alice, null);
        check("GET", "/api/v1/watch", Map.of("?", "state=SLEEPING"), alice, null);
        check("GET", "/api/v1/runs/{run}", Map.of("run", id), alice, null);
        check("GET", "/api/v1/runs/{run}", Map.of("run", "missing-12345678"), alice, null);
        check("GET", "/api/v1/runs/{run}/events", Map.of("run", id), alice, null);
        check("GET", "/api/v1/runs/{run}/events", Map.of("run", "%00"), alice, null); // refused before routing, same body
        check("GET", "/api/v1/runs/{run}/logs", Map.of("run", id), alice, null);
        check("GET", "/api/v1/runs/{run}/logs", Map.of("run", id, "?", "format=jsonl"), alice, null);
        check("GET", "/api/v1/runs/{run}/logs", Map.of("run", id, "?", "stream=sideways"), alice, null);
        check("POST", "/api/v1/runs/{run}/cancel", Map.of("run", id), alice, "{}");
        // The run has ended: a report now is refused (409); alice is no admin and not the run's token (403); bad input (400).
        check("POST", "/api/v1/runs/{run}/instances/{rank}/progress", Map.of("run", id, "rank", "0"), admin, "{\"step\": 3}");
        check("POST", "/api/v1/runs/{run}/instances/{rank}/progress", Map.of("run", id, "rank", "0"), alice, "{\"step\": 3}");
        check("POST", "/api/v1/runs/{run}/instances/{rank}/progress", Map.of("run", id, "rank", "0"), admin, "{\"step\": \"many\"}");
        check("POST", "/api/v1/runs/{run}/instances/{rank}/progress", Map.of("run", id, "rank", "9"), admin, "{\"step\": 3}");

        JsonNode token = check("POST", "/api/v1/tokens", Map.of(), admin, "{\"user\":\"bob\",\"description\":\"ci\",\"expiresInDays\":30}");
        check("POST", "/api/v1/tokens", Map.of(), admin, "{\"user\":\"Bad User\"}");
        check("GET", "/api/v1/tokens", Map.of(), admin, null);
        check("GET", "/api/v1/tokens", Map.of(), alice, null);
        check("DELETE", "/api/v1/tokens/{token}", Map.of("token", token.get("id").asString()), admin, null);
        check("DELETE", "/api/v1/tokens/{token}", Map.of("token", "tok-none"), admin, null);
        check("POST", "/api/v1/store/backup", Map.of(), admin, null);
        check("POST", "/api/v1/store/backup", Map.of(), alice, null);

        check("DELETE", "/api/v1/workspaces/{workspace}/jobs/{job}", Map.of("workspace", "team-a", "job", "hello"), alice, null);
        check("DELETE", "/api/v1/workspaces/{workspace}/jobs/{job}", Map.of("workspace", "team-a", "job", "yearly"), alice, null);
        check("DELETE", "/api/v1/workspaces/{workspace}/secrets/{secret}", Map.of("workspace", "team-a", "secret", "hf"), alice, null);
        check("DELETE", "/api/v1/workspaces/{workspace}/secrets/{secret}", Map.of("workspace", "team-a", "secret", "hf"), alice, null);
        check("DELETE", "/api/v1/workspaces/{workspace}/quotas/{quota}", Map.of("workspace", "team-a", "quota", "team-a-gpu"), alice, null);
        check("DELETE", "/api/v1/workspaces/{workspace}/quotas/{quota}", Map.of("workspace", "team-a", "quota", "team-a-gpu"), admin, null);
        check("DELETE", "/api/v1/shapes/{shape}", Map.of("shape", "cpu.small"), admin, null);
        check("DELETE", "/api/v1/topologies/{topology}", Map.of("topology", "default"), alice, null);
        check("DELETE", "/api/v1/topologies/{topology}", Map.of("topology", "default"), admin, null);
        check("DELETE", "/api/v1/workspaces/{workspace}", Map.of("workspace", "team-a"), admin, null);

        Set<String> documented = new HashSet<>();
        server.server().routes().forEach(route -> documented.add(route.method() + " " + route.path()));
        assertThat(exercised).as("every route was exercised").containsAll(documented);
    }

    /** What the session cannot produce with real processes (an OOM kill's cause, measured usage): the view itself, every field set. */
    @Test
    void anInstanceEndedByAnOomKillMatchesTheDocument() {
        var instance = new io.slipstream.model.InstanceRecord(new io.slipstream.api.run.InstanceId(new io.slipstream.api.run.RunId("r-1"), 1, 0),
                "main", 0, "node-1", List.of(0), io.slipstream.api.run.InstanceState.FAILED, 137,
                "OOMKilled: used more memory than its limit (exit code 137)", Map.of(), java.time.Instant.EPOCH, java.time.Instant.EPOCH,
                new io.slipstream.api.run.Endpoint("h", "h.f", "10.0.0.1", List.of(40000)), java.time.Instant.EPOCH, null, null, null,
                io.slipstream.api.run.EndCause.OOMKilled, 0, 1).measured(new io.slipstream.api.run.InstanceUsage(1536L << 20, 12_345_678_901L));
        JsonNode view = Json.mapper().valueToTree(Views.instance(instance, true, Set.of()));
        assertThat(view.get("endCause").asString()).isEqualTo("OOMKilled");
        assertThat(view.get("memoryPeak").asString()).isEqualTo("1536Mi");
        assertThat(view.get("cpuSeconds").asDouble()).isEqualTo(12.346);
        validate(openApi.get("components").get("schemas").get("Instance"), view, "Instance");
    }

    /** Calls a route, then checks the status is documented for it and the body matches the documented schema. */
    private static JsonNode check(String method, String template, Map<String, String> params, String token, String body) {
        String path = template;
        for (var entry : params.entrySet()) {
            if (!entry.getKey().equals("?")) {
                path = path.replace("{" + entry.getKey() + "}", entry.getValue());
            }
        }
        if (params.containsKey("?")) {
            path += "?" + params.get("?");
        }
        Response response = body == null ? server.call(method, path, token, null, null) : server.post(path, token, body);
        if (!method.equals("POST") && body != null) {
            throw new IllegalArgumentException("only POST has a body here");
        }
        exercised.add(method + " " + template);
        JsonNode operation = openApi.get("paths").get(template).get(method.toLowerCase(Locale.ROOT));
        assertThat(operation).as("%s %s is documented", method, template).isNotNull();
        JsonNode documented = operation.get("responses").get(Integer.toString(response.status()));
        assertThat(documented).as("status %d of %s %s is documented (body: %s)", response.status(), method, template, response.text()).isNotNull();
        documented = resolve(documented);
        JsonNode content = documented.get("content");
        if (content == null) {
            assertThat(response.text()).as("%s %s answers %d without a body", method, template, response.status()).isEmpty();
            return null;
        }
        String mediaType = response.contentType().split(";")[0].trim();
        JsonNode schema = content.get(mediaType);
        assertThat(schema).as("%s %s answers %s, a documented media type", method, template, mediaType).isNotNull();
        if (mediaType.equals("text/plain") || mediaType.equals("application/zip") || mediaType.equals("text/event-stream")) {
            return null;
        }
        if (mediaType.equals("application/x-ndjson")) {
            for (String line : response.text().split("\n")) {
                validate(schema.get("schema"), Json.mapper().readTree(line), method + " " + template);
            }
            return null;
        }
        JsonNode json = response.json();
        validate(schema.get("schema"), json, method + " " + template + " " + response.status());
        return json;
    }

    private static JsonNode resolve(JsonNode node) {
        if (node.has("$ref")) {
            String[] parts = node.get("$ref").asString().substring(2).split("/");
            JsonNode target = openApi;
            for (String part : parts) {
                target = target.get(part);
            }
            return target;
        }
        return node;
    }

    /** Validates against a schema of the document, its $refs rewritten to point into $defs. */
    private static void validate(JsonNode schema, JsonNode instance, String where) {
        ObjectNode root = Json.mapper().createObjectNode();
        root.put("$schema", "https://json-schema.org/draft/2020-12/schema");
        root.set("$defs", openApi.get("components").get("schemas"));
        root.setAll((ObjectNode) schema);
        String text = root.toString().replace("#/components/schemas/", "#/$defs/");
        Schema compiled = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(text, InputFormat.JSON);
        List<Error> errors = compiled.validate(instance);
        assertThat(errors).as("%s: %s does not match the document", where, instance).isEmpty();
    }
}
