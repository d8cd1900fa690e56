package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.server.support.TestServer;
import io.slipstream.testing.NoProcessLeftBehind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import tools.jackson.databind.JsonNode;

/**
 * {@code faultTolerance.runType: Async} through the real API and the real local executor: a parameter-server job (ps-0
 * and worker-0..2) in which one worker exits 137. Every process appends a line to {@code starts.log} in the run's
 * checkpoint directory when it starts, so the log proves who was started how often: a peer restarted with the worker
 * would have written a second line.
 */
@ExtendWith(NoProcessLeftBehind.class)
class AsyncRestartApiTest {
    private static final Path EXAMPLES = Path.of("..", "examples");
    /**
     * Every process logs its start, then waits until every worker is done. Worker {@code CRASH_RANK} (once every process
     * has logged, so that its peers are surely running) exits 137: always, or only while the marker {@code crashed} is
     * absent ({@code CRASH: once}).
     */
    private static final String SCRIPT = String.join("\n",
            "CK=\"$SLIPSTREAM_CHECKPOINT_DIR\"; ME=\"$SLIPSTREAM_NODE_GROUP-$SLIPSTREAM_GROUP_RANK\"",
            "META=no; [ -s \"$SLIPSTREAM_METADATA_FILE\" ] && grep -q worker-2 \"$SLIPSTREAM_METADATA_FILE\" && META=yes",
            "echo \"$ME rank=$SLIPSTREAM_RANK attempt=$SLIPSTREAM_ATTEMPT torchelastic=$TORCHELASTIC_RESTART_COUNT"
                    + " slipstream=$SLIPSTREAM_RESTART_COUNT metadata=$META\" >> \"$CK/starts.log\"",
            "if [ \"$ME\" = \"worker-$CRASH_RANK\" ] && { [ \"$CRASH\" = always ] || [ ! -e \"$CK/crashed\" ]; }; then",
            "  while [ \"$(wc -l < \"$CK/starts.log\")\" -lt 4 ]; do sleep 0.1; done",
            "  touch \"$CK/crashed\"; echo 'worker lost its parameter shard' >&2; exit 137",
            "fi",
            "[ \"$SLIPSTREAM_NODE_GROUP\" = worker ] && touch \"$CK/done-$SLIPSTREAM_GROUP_RANK\"",
            "while [ ! -e \"$CK/done-0\" ] || [ ! -e \"$CK/done-1\" ] || [ ! -e \"$CK/done-2\" ]; do sleep 0.1; done");

    @TempDir
    Path dataDir;

    private TestServer server;
    private String admin;

    @BeforeEach
    void start() throws Exception {
        server = TestServer.start(dataDir);
        admin = server.adminToken();
        apply(Files.readString(EXAMPLES.resolve("quotas/teams.yaml")));
    }

    @AfterEach
    void stop() {
        if (server == null) {
            return;
        }
        try {
            for (JsonNode run : server.get("/api/v1/runs?limit=1000", admin).json().get("items")) {
                String id = run.get("id").asString();
                if (!isFinal(run)) {
                    server.post("/api/v1/runs/" + id + "/cancel", admin, "{}");
                    server.awaitRun(admin, id, AsyncRestartApiTest::isFinal);
                }
            }
        } finally {
            server.close();
        }
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void onlyTheFailedWorkerRestartsAndTheRunSucceeds() throws Exception {
        apply(job("ps-once", 3, "once"));
        String id = start("ps-once");
        JsonNode done = server.awaitRun(admin, id, state("SUCCEEDED"));

        assertThat(done.get("attempt").asInt()).as("no new attempt").isEqualTo(1);
        assertThat(done.get("restarts").get("failures").asInt()).isEqualTo(1);
        assertThat(done.get("instances")).hasSize(4);
        assertThat(done.get("instances")).allSatisfy(i -> assertThat(i.get("state").asString()).isEqualTo("SUCCEEDED"));
        assertThat(restartsByName(done)).isEqualTo(Map.of("ps-0", 0, "worker-0", 0, "worker-1", 1, "worker-2", 0));

        List<String> starts = Files.readAllLines(checkpointDir(id).resolve("starts.log"));
        assertThat(starts).as("ps-0, worker-0 and worker-2 started once: they ran on through worker-1's restart").containsExactlyInAnyOrder(
                "ps-0 rank=0 attempt=1 torchelastic=0 slipstream=0 metadata=yes",
                "worker-0 rank=1 attempt=1 torchelastic=0 slipstream=0 metadata=yes",
                "worker-1 rank=2 attempt=1 torchelastic=0 slipstream=0 metadata=yes",
                "worker-2 rank=3 attempt=1 torchelastic=0 slipstream=0 metadata=yes",
                "worker-1 rank=2 attempt=1 torchelastic=1 slipstream=1 metadata=yes");
        assertThat(starts.get(starts.size() - 1)).as("the restart came last").startsWith("worker-1 ").endsWith("torchelastic=1 slipstream=1 metadata=yes");

        JsonNode restarted = eventsOf(id, "InstanceRestarted");
        assertThat(restarted).hasSize(1);
        assertThat(restarted.get(0).get("instance").asString()).isEqualTo("worker-1");
        assertThat(restarted.get(0).get("message").asString()).isEqualTo("worker-1 (rank 2) restarted after exit code 137 (restart 1 of 3); starts in 1s");
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aWorkerThatKeepsFailingUsesUpTheBudgetAndTheRunFailsWithItsPeersStopped() throws Exception {
        apply(job("ps-always", 1, "always"));
        String id = start("ps-always");
        JsonNode failed = server.awaitRun(admin, id, state("FAILED"));

        assertThat(failed.get("attempt").asInt()).isEqualTo(1);
        assertThat(failed.get("reason").asString()).isEqualTo("RestartBudgetExhausted: restarted 1 time(s) for failures"
                + " (faultTolerance.maxRestarts: 1); last: worker-1 (Exited with code 137) (retryOn.exitCodes 137)");
        assertThat(restartsByName(failed)).isEqualTo(Map.of("ps-0", 0, "worker-0", 0, "worker-1", 1, "worker-2", 0));
        assertThat(failed.get("instances")).filteredOn(i -> !i.get("nodeGroup").asString().equals("worker") || i.get("groupRank").asInt() != 1)
                .allSatisfy(i -> assertThat(i.get("state").asString()).as(i.toString()).isEqualTo("KILLED"));
        assertThat(eventsOf(id, "InstanceRestarted")).singleElement()
                .satisfies(e -> assertThat(e.get("message").asString()).startsWith("worker-1 (rank 2) restarted after exit code 137 (restart 1 of 1)"));
        assertThat(Files.readAllLines(checkpointDir(id).resolve("starts.log"))).hasSize(5);
    }

    private static String job(String name, int maxRestarts, String crash) {
        String command = "      command: [sh, -c, " + Json.mapper().writeValueAsString(SCRIPT) + "]\n";
        return """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: %s, workspace: team-a}
                spec:
                  quota: gpus
                  faultTolerance:
                    runType: Async
                    maxRestarts: %d
                    backoff: {base: 1s, cap: 1s}
                    retryOn: {exitCodes: [137]}
                  nodeGroups:
                    - name: ps
                      resources: {cpu: 1, memory: 1Gi}
                %s      env: {CRASH_RANK: "1", CRASH: %s}
                    - name: worker
                      replicas: 3
                      resources: {cpu: 1, memory: 1Gi}
                %s      env: {CRASH_RANK: "1", CRASH: %s}
                """.formatted(name, maxRestarts, command, crash, command, crash);
    }

    private Path checkpointDir(String id) {
        JsonNode run = server.get("/api/v1/runs/" + id, admin).json();
        try (var paths = Files.walk(dataDir)) {
            return paths.filter(p -> p.getFileName().toString().equals("starts.log")).map(Path::getParent)
                    .filter(p -> p.toString().contains(run.get("id").asString()) || p.toString().contains(run.get("job").asString()))
                    .findFirst().orElseThrow(() -> new AssertionError("no starts.log of run " + id + " under " + dataDir));
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    private static Map<String, Integer> restartsByName(JsonNode run) {
        Map<String, Integer> restarts = new java.util.TreeMap<>();
        run.get("instances").forEach(i -> restarts.put(i.get("nodeGroup").asString() + "-" + i.get("groupRank").asInt(), i.get("restarts").asInt()));
        return restarts;
    }

    private JsonNode eventsOf(String id, String type) {
        JsonNode events = server.get("/api/v1/runs/" + id + "/events?limit=1000", admin).json();
        JsonNode items = events.has("items") ? events.get("items") : events;
        return Json.mapper().valueToTree(StreamSupport.stream(items.spliterator(), false).filter(e -> e.get("type").asString().equals(type)).toList());
    }

    private void apply(String yaml) {
        TestServer.Response applied = server.post("/api/v1/apply", admin, yaml);
        assertThat(applied.status()).as(applied.text()).isEqualTo(200);
    }

    private String start(String job) {
        TestServer.Response created = server.post("/api/v1/runs", admin,
                Json.mapper().writeValueAsString(Map.of("workspace", "team-a", "job", job, "overrides", Map.of())));
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        return created.json().get("id").asString();
    }

    private static Predicate<JsonNode> state(String state) {
        return run -> run.get("state").asString().equals(state);
    }

    private static boolean isFinal(JsonNode run) {
        return io.slipstream.api.run.RunState.valueOf(run.get("state").asString()).isFinal();
    }
}
