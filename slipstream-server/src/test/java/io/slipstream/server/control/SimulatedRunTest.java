package io.slipstream.server.control;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.executor.simulated.SimulatedExecutorSettings;
import io.slipstream.server.support.TestServer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The real server with {@code executor: simulated}: runs whose instances start no process end when their labels say,
 * with the code they say, through the same API and life cycle as real ones; a label that is not a duration or an exit
 * code is a 400 naming it; a restarted server adopts the instances, which end on their own clocks.
 */
class SimulatedRunTest {
    private static final String DURATION = "slipstream.io/simulated-duration";
    private static final String EXIT_CODE = "slipstream.io/simulated-exit-code";

    @TempDir
    Path root;

    private TestServer server;
    private String admin;

    private TestServer startServer() {
        return TestServer.start(root.resolve("data"), config -> config.withExecutor(SimulatedExecutorSettings.defaults()));
    }

    @BeforeEach
    void start() {
        server = startServer();
        admin = server.adminToken();
        server.post("/api/v1/apply", admin, "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: w}\n");
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private TestServer.Response submit(String name, int replicas, Map<String, String> labels) {
        Map<String, Object> job = Map.of("jobDocument", Map.of("apiVersion", "slipstream/v1", "kind", "Job",
                "metadata", Map.of("name", name, "workspace", "w"),
                "spec", Map.of("nodeGroups", List.of(Map.of("name", "worker", "replicas", replicas,
                        "resources", Map.of("cpu", 8, "memory", "32Gi", "gpu", 8), "command", List.of("torchrun", "train.py"))))),
                "labels", labels);
        return server.post("/api/v1/runs", admin, Json.mapper().writeValueAsString(job));
    }

    private String submitted(String name, int replicas, Map<String, String> labels) {
        TestServer.Response response = submit(name, replicas, labels);
        assertThat(response.status()).as(response.text()).isEqualTo(201);
        return response.json().get("id").asString();
    }

    @Test
    void aGangRunsForItsLabelsDurationAndEndsWithItsCode() {
        String ok = submitted("pretrain", 2, Map.of(DURATION, "1s"));
        String failing = submitted("broken", 1, Map.of(DURATION, "1s", EXIT_CODE, "3"));
        JsonNode done = server.awaitState(admin, ok, "SUCCEEDED");
        assertThat(done.get("instances")).hasSize(2).allSatisfy(instance -> {
            assertThat(instance.get("node").asString()).startsWith("node-");
            Duration ran = Duration.between(Instant.parse(instance.get("startedAt").asString()), Instant.parse(instance.get("finishedAt").asString()));
            assertThat(ran).as("ran for its label's second, by the server's clock").isBetween(Duration.ofMillis(800), Duration.ofMillis(1_900));
        });
        assertThat(server.get("/api/v1/runs/" + ok + "/logs", admin).text()).contains("simulated instance on node-").contains("runs 1s, then exits 0");
        JsonNode failed = server.awaitState(admin, failing, "FAILED");
        assertThat(failed.get("instances").get(0).get("exitCode").asInt()).isEqualTo(3);
    }

    @Test
    void aLabelThatIsNotADurationOrAnExitCodeIsRefusedNamingIt() {
        TestServer.Response refused = submit("typo", 1, Map.of(DURATION, "soon", EXIT_CODE, "300"));
        assertThat(refused.status()).isEqualTo(400);
        assertThat(refused.text()).contains("labels." + DURATION).contains("'soon' is not a duration").contains("labels." + EXIT_CODE)
                .contains("from 0 to 255");
        TestServer.Response applied = server.post("/api/v1/apply", admin, """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: long, workspace: w, labels: {%s: 2h}}
                spec:
                  maxRuntime: 1h
                  nodeGroups: [{name: main, resources: {cpu: 1, memory: 1Gi}, command: [train]}]
                """.formatted(DURATION));
        assertThat(applied.status()).isEqualTo(400);
        assertThat(applied.text()).contains("metadata.labels." + DURATION).contains("must be shorter than the run's maxRuntime (1h");
        // Without a maxRuntime of its own, a run is held to this installation's longest.
        TestServer.Response beyond = submit("forever", 1, Map.of(DURATION, "999999999d"));
        assertThat(beyond.status()).isEqualTo(400);
        assertThat(beyond.text()).contains("labels." + DURATION).contains("must be shorter than the run's maxRuntime");
    }

    @Test
    void aRestartedServerAdoptsTheInstancesWhichEndOnTheirOwnClocks() {
        String run = submitted("survivor", 2, Map.of(DURATION, "4s"));
        JsonNode running = server.awaitState(admin, run, "RUNNING");
        Instant started = Instant.parse(running.get("instances").get(0).get("startedAt").asString());
        server.close(); // the control plane goes away; the simulated instances' clocks go on

        server = startServer();
        JsonNode done = server.awaitState(admin, run, "SUCCEEDED");
        assertThat(done.get("attempt").asInt()).as("adopted, not restarted").isEqualTo(1);
        Instant finished = Instant.parse(done.get("instances").get(0).get("finishedAt").asString());
        // The server marks an instance started when the launch returns, a little after the executor's own start.
        assertThat(Duration.between(started, finished)).as("ended 4 s after its start, not 4 s after the restart").isBetween(Duration.ofMillis(3_800),
                Duration.ofMillis(4_900));
    }
}
