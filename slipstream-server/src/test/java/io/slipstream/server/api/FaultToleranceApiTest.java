package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.server.support.TestServer;
import io.slipstream.testing.NoProcessLeftBehind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Restarts by policy through the real API and the real local executor, where only real processes can show it: a hang
 * seen in what a workload writes (no output, no progress), and the shell checkpoint contract on a preemption (the
 * notice file read, a checkpoint saved on it, the next attempt resuming from it). The rules themselves (retries by exit
 * code and pattern, budgets, preemptions that never use up the failure budget, lost nodes, a cancel while preempted)
 * are decided in process, cycle by cycle: {@code FaultToleranceTest} and {@code ControlLoopTest}; this class mirrored
 * them test for test, through processes, until issue 40. {@code PyTorchDdpIT} keeps the story of real training
 * resumed bit for bit.
 */
@ExtendWith(NoProcessLeftBehind.class)
// The tests run concurrently with each other (each has its own server and data dir, and mostly waits on processes),
// the class not with other classes: @Execution on the methods, not on the class.
class FaultToleranceApiTest {
    private static final Path EXAMPLES = Path.of("..", "examples");

    @TempDir
    Path dataDir;

    private TestServer server;
    private String admin;
    private String bob;

    @BeforeEach
    void start() throws Exception {
        server = TestServer.start(dataDir);
        admin = server.adminToken();
        apply(Files.readString(EXAMPLES.resolve("quotas/teams.yaml")));
        bob = server.tokenFor("bob");
    }

    @AfterEach
    void stop() {
        if (server == null) {
            return;
        }
        try {
            cancelWhatIsActive();
        } finally {
            server.close();
        }
    }

    private void cancelWhatIsActive() {
        for (JsonNode run : server.get("/api/v1/runs?limit=1000", admin).json().get("items")) {
            String id = run.get("id").asString();
            if (!isFinal(run)) {
                server.post("/api/v1/runs/" + id + "/cancel", admin, "{}");
                server.awaitRun(admin, id, FaultToleranceApiTest::isFinal);
            }
        }
    }

    private static boolean isFinal(JsonNode run) {
        return io.slipstream.api.run.RunState.valueOf(run.get("state").asString()).isFinal();
    }

    private void apply(String yaml) {
        TestServer.Response applied = server.post("/api/v1/apply", admin, yaml);
        assertThat(applied.status()).as(applied.text()).isEqualTo(200);
    }

    private String start(String token, String workspace, String job, Map<String, Object> overrides) {
        TestServer.Response created = server.post("/api/v1/runs", token,
                Json.mapper().writeValueAsString(Map.of("workspace", workspace, "job", job, "overrides", overrides)));
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        return created.json().get("id").asString();
    }

    private JsonNode await(String token, String id, Predicate<JsonNode> done) {
        return server.awaitRun(token, id, done);
    }

    private static Predicate<JsonNode> state(String state) {
        return run -> run.get("state").asString().equals(state);
    }

    private String events(String id) {
        return server.get("/api/v1/runs/" + id + "/events?limit=1000", admin).text();
    }

    private String logs(String id, int attempt) {
        return server.get("/api/v1/runs/" + id + "/logs?attempt=" + attempt, admin).text();
    }

    /** The owner of examples/quotas: team A's guarantee, the whole cluster, for {@code seconds}. */
    private String owner(double seconds) {
        return start(admin, "team-a", "owner", Map.of("nodeGroups.worker.env.SECONDS_TO_RUN", Double.toString(seconds)));
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aWorkloadThatStopsLoggingIsRestartedAsHung() {
        apply("""
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: stuck, workspace: team-a}
                spec:
                  quota: gpus
                  faultTolerance:
                    hangTimeout: 1s
                    maxHangRestarts: 1
                    backoff: {base: 1s, cap: 1s}
                  nodeGroups:
                    - name: main
                      replicas: 2
                      resources: {cpu: 1, memory: 1Gi}
                      command: [sh, -c, 'echo "waiting on a collective that never completes"; exec sleep 600']
                """);
        String id = start(admin, "team-a", "stuck", Map.of());
        JsonNode hung = await(admin, id, state("FAILED"));
        assertThat(hung.get("attempt").asInt()).isEqualTo(2);
        assertThat(hung.get("restarts").get("hangs").asInt()).isEqualTo(1);
        assertThat(hung.get("reason").asString()).startsWith("HangBudgetExhausted").contains("no output and no progress");
        assertThat(events(id)).contains("Hung: no output and no progress from any instance for");
    }

    /** A job whose steps take {@code stepSeconds} (the shell checkpoint example, faster). */
    private static String shellCheckpoint(String workspace, String extraSpec, int steps, String stepSeconds) throws Exception {
        String example = Files.readString(EXAMPLES.resolve("fault-tolerance/shell-checkpoint.yaml"));
        String job = example.substring(example.indexOf("apiVersion: slipstream/v1\nkind: Job"));
        String changed = job.replace("metadata: {name: shell-checkpoint, workspace: demo}", "metadata: {name: shell-checkpoint, workspace: " + workspace + "}")
                .replace("  preemptionGracePeriod: 20s", extraSpec + "  preemptionGracePeriod: 20s")
                .replace("STEPS: \"120\"", "STEPS: \"" + steps + "\"")
                .replace("sleep 1 & wait $!", "sleep " + stepSeconds + " & wait $!");
        assertThat(changed).isNotEqualTo(job).contains("sleep " + stepSeconds + " &").contains("STEPS: \"" + steps + "\"");
        return changed;
    }

    private static Predicate<JsonNode> atStep(long step) {
        return run -> run.get("state").asString().equals("RUNNING") && run.path("progress").path("step").asLong() >= step;
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aPreemptedRunCheckpointsOnTheNoticeAndResumesFromThatCheckpoint() throws Exception {
        apply(shellCheckpoint("team-b", "  quota: gpus\n  idleResources: OnlyIdle\n", 40, "0.2")
                .replace("resources: {cpu: 1, memory: 256Mi}", "resources: {cpu: 4, memory: 32Gi, gpu: 8}"));
        apply(ownerJob());
        String id = start(bob, "team-b", "shell-checkpoint", Map.of());
        // Between two periodic checkpoints (every 10 steps); progress is sampled every 2 s, so 5 s of steps are left.
        await(bob, id, atStep(13));
        String owner = owner(0.5);
        await(admin, owner, state("SUCCEEDED"));
        JsonNode done = await(admin, id, state("SUCCEEDED"));
        assertThat(done.get("attempt").asInt()).isEqualTo(2);
        assertThat(done.get("restarts").get("preemptions").asInt()).isEqualTo(1);
        assertThat(done.get("restarts").get("failures").asInt()).isZero();

        java.util.regex.Matcher saved = java.util.regex.Pattern.compile("\\[main-0\\|r0\\|[^]]*] .*saved step (\\d+)").matcher(logs(id, 1));
        assertThat(saved.find()).as(logs(id, 1)).isTrue();
        long step = Long.parseLong(saved.group(1));
        assertThat(step).as("a checkpoint newer than the periodic one of step 10").isGreaterThan(10);
        assertThat(logs(id, 1)).contains("stop notice: ").contains("Reclaimed");
        assertThat(logs(id, 2)).contains("attempt 2 starts at step " + step).contains("done at step 40");
        assertThat(events(id)).contains("Reclaimed").contains("WorkLost").contains("since the checkpoint of step ");
        assertThat(done.get("progress").get("workLostSeconds").asDouble()).as("work lost is under one checkpoint interval (2 s)").isLessThan(2);
    }

    private static String ownerJob() throws Exception {
        return Files.readString(EXAMPLES.resolve("quotas/owner.yaml"));
    }
}
