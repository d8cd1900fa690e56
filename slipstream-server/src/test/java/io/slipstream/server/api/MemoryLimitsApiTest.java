package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.executor.local.LocalExecutorSettings;
import io.slipstream.executor.local.cgroup.Cgroups;
import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.server.support.TestServer;
import io.slipstream.server.support.TestServer.Response;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * A node group's {@code limits.memory} through the API of a server with the local executor: a limit below the request
 * (its own, or its shape's once resolved) is a 400 naming it, and one above it is refused where the admin does not allow
 * bursts ({@code instances.burstableMemory: false}, the default), when the job is applied and when an override asks for it.
 */
class MemoryLimitsApiTest {
    private static final String REFUSED = "this server holds instances to their memory request (instances.burstableMemory: false)";

    @TempDir
    static Path root;

    private static TestServer held;
    private static TestServer bursting;

    @BeforeAll
    static void start() {
        held = start(root.resolve("held"), false);
        bursting = start(root.resolve("bursting"), true);
    }

    private static TestServer start(Path dataDir, boolean burstableMemory) {
        TestServer server = TestServer.start(dataDir, config -> config.withExecutor(config.executor(LocalExecutorSettings.class)
                .withIsolation(Isolation.Mode.off).withCgroups(Cgroups.Mode.off).withBurstableMemory(burstableMemory)));
        assertThat(server.post("/api/v1/apply", server.adminToken(), """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-a}
                spec: {members: [alice]}
                ---
                apiVersion: slipstream/v1
                kind: Shape
                metadata: {name: cpu.small}
                spec: {cpu: 1, memory: 1Gi}
                """).status()).isEqualTo(200);
        return server;
    }

    @AfterAll
    static void stop() {
        held.close();
        bursting.close();
    }

    private static String job(String name, String sizing) {
        return """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: %s, workspace: team-a}
                spec:
                  nodeGroups:
                    - {name: main, %s, command: ["true"]}
                """.formatted(name, sizing);
    }

    private static Response apply(TestServer server, String yaml) {
        return server.post("/api/v1/apply", server.adminToken(), yaml);
    }

    private static void assertRefused(Response response, String field, String message) {
        assertThat(response.status()).as(response.text()).isEqualTo(400);
        JsonNode problems = response.json().get("problems");
        assertThat(problems).as(response.text()).anySatisfy(p -> {
            assertThat(p.get("field").asString()).isEqualTo(field);
            assertThat(p.get("message").asString()).startsWith(message);
        });
    }

    @Test
    void aLimitBelowTheRequestIsRefusedNamingIt() {
        assertRefused(apply(held, job("below", "resources: {cpu: 1, memory: 1Gi}, limits: {memory: 512Mi}")),
                "spec.nodeGroups[0].limits.memory", "must be at least the memory request (1Gi)");
        assertRefused(apply(held, job("below-shape", "shape: cpu.small, limits: {memory: 512Mi}")),
                "spec.nodeGroups[0].limits.memory", "must be at least the memory request (1Gi) of shape 'cpu.small'");
        assertRefused(apply(held, job("unknown", "resources: {cpu: 1, memory: 1Gi}, limits: {memory: 2Gi, swap: 1Gi}")),
                "spec.nodeGroups[0].limits.swap", "unknown field");
    }

    @Test
    void aBurstIsRefusedWhereTheServerHoldsInstancesToTheirRequest() {
        assertRefused(apply(held, job("burst", "resources: {cpu: 1, memory: 1Gi}, limits: {memory: 2Gi}")),
                "spec.nodeGroups[0].limits.memory", REFUSED);
        assertRefused(apply(held, job("burst-shape", "shape: cpu.small, limits: {memory: 2Gi}")), "spec.nodeGroups[0].limits.memory", REFUSED);
        assertThat(apply(held, job("equal", "resources: {cpu: 1, memory: 1Gi}, limits: {memory: 1Gi}")).status()).isEqualTo(200);

        Response overridden = held.post("/api/v1/runs", held.adminToken(), Json.mapper().writeValueAsString(
                Map.of("workspace", "team-a", "job", "equal", "overrides", Map.of("nodeGroups.main.limits.memory", "2Gi"))));
        assertRefused(overridden, "overrides.nodeGroups.main.limits.memory", REFUSED);
    }

    @Test
    void aBurstIsAcceptedWhereTheServerAllowsIt() {
        assertThat(apply(bursting, job("burst", "resources: {cpu: 1, memory: 1Gi}, limits: {memory: 2Gi}")).status()).isEqualTo(200);
        Response run = bursting.post("/api/v1/runs", bursting.adminToken(), Json.mapper().writeValueAsString(
                Map.of("workspace", "team-a", "job", "burst", "overrides", Map.of("nodeGroups.main.limits.memory", "3Gi"))));
        assertThat(run.status()).as(run.text()).isEqualTo(201);
        JsonNode finished = bursting.awaitState(bursting.adminToken(), run.json().get("id").asString(), "SUCCEEDED");
        assertThat(finished.toString()).contains("\"limits\":{\"memory\":\"3Gi\"}");
    }

    /** A shape that grew past a group's limit since its job was applied: the run is refused when it is made. */
    @Test
    void aShapeThatGrewPastTheLimitIsRefusedWhenARunIsMade() {
        String shape = """
                apiVersion: slipstream/v1
                kind: Shape
                metadata: {name: cpu.growing}
                spec: {cpu: 1, memory: %s}
                """;
        assertThat(apply(bursting, shape.formatted("1Gi")).status()).isEqualTo(200);
        assertThat(apply(bursting, job("grown", "shape: cpu.growing, limits: {memory: 2Gi}")).status()).isEqualTo(200);
        assertThat(apply(bursting, shape.formatted("4Gi")).status()).isEqualTo(200);
        Response run = bursting.post("/api/v1/runs", bursting.adminToken(), "{\"workspace\": \"team-a\", \"job\": \"grown\"}");
        assertRefused(run, "spec.nodeGroups[0].limits.memory", "must be at least the memory request (4Gi) of shape 'cpu.growing'");
    }
}
