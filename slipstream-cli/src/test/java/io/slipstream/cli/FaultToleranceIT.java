package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.cli.SlipstreamProcess.Result;
import io.slipstream.cli.SlipstreamProcess.Server;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import io.slipstream.testing.NoProcessLeftBehind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Fault tolerance through the real server, CLI and processes: the distributed-training example, one of its workers
 * SIGKILLed mid-training, restarts as a gang, resumes from its last checkpoint and ends with the weights of an
 * uninterrupted run. The same story on a preemption (checkpoint on the notice) is {@code slipstream demo}'s, which
 * {@code EndToEndIT} runs; the rules themselves (failures retried by rule, hangs, preemptions that never use up the
 * failure budget, lost nodes, work lost) are {@code FaultToleranceApiTest}'s, in process. Where PyTorch is installed
 * (CI), {@code PyTorchDdpIT} tells this story with real PyTorch and this test stands aside: one is always told.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ExtendWith(NoProcessLeftBehind.class)
class FaultToleranceIT {
    private static final Path REPO = Path.of(System.getProperty("slipstream.repo", ".."));
    private static final int STEPS = 300;
    private static final int CHECKPOINT_EVERY = 100;

    @TempDir
    static Path work;

    private static Server server;
    private static String bob;
    /** The weights of an uninterrupted run, for comparison. */
    private static String referenceDigest;

    @BeforeAll
    static void startServer() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse(SlipstreamProcess.torchIsInstalled(),
                "PyTorch is installed: PyTorchDdpIT tells the story of a rank SIGKILLed mid-training");
        server = SlipstreamProcess.startServer(work.resolve("data"));
        Files.copy(REPO.resolve("examples/quotas/teams.yaml"), work.resolve("teams.yaml"));
        Files.writeString(work.resolve("training.yaml"), Files.readString(REPO.resolve("examples/fault-tolerance/training-on-idle.yaml"))
                .replace("STEPS: \"1500\"", "STEPS: \"" + STEPS + "\"").replace("CHECKPOINT_EVERY: \"200\"", "CHECKPOINT_EVERY: \"" + CHECKPOINT_EVERY + "\""));
        Result apply = cli("apply", "-f", "teams.yaml");
        assertThat(apply.exit()).as(apply.err()).isZero();
        bob = cli("token", "create", "--user", "bob").lastLine();
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (server == null) {
            return;
        }
        server.close();
    }

    private static Result cli(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--server", server.url(), "--data-dir", server.dataDir().toString()));
        return SlipstreamProcess.cli(work, all.toArray(String[]::new));
    }

    private static JsonNode run(String id) throws Exception {
        Result result = cli("get", "run", id, "-o", "json");
        assertThat(result.exit()).as(result.err()).isZero();
        return Json.mapper().readTree(result.out());
    }

    private static JsonNode await(String id, Predicate<JsonNode> done) throws Exception {
        return server.awaitRun(id, Duration.ofSeconds(180), done);
    }

    private static Predicate<JsonNode> state(String state) {
        return run -> run.get("state").asString().equals(state);
    }

    private static Predicate<JsonNode> atStep(long step) {
        return run -> run.get("state").asString().equals("RUNNING") && run.path("progress").path("step").asLong() >= step;
    }

    private static String submit(String file, String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of("submit", "-f", file));
        args.addAll(List.of(extra));
        Result submitted = cli(args.toArray(String[]::new));
        assertThat(submitted.exit()).as(submitted.err()).isZero();
        return submitted.lastLine();
    }

    private static String digestOf(String id) throws Exception {
        return SlipstreamProcess.agreedDigest(cli("logs", id).out(), 4);
    }

    private static Instant time(JsonNode node, String field) {
        return Instant.parse(node.get(field).asString());
    }

    @Test
    @Order(1)
    void anUninterruptedRunGivesTheReferenceWeights() throws Exception {
        String id = submit("training.yaml", "--token", bob);
        JsonNode done = await(id, state("SUCCEEDED"));
        referenceDigest = digestOf(id);
        Duration took = Duration.between(time(done, "startedAt"), time(done, "finishedAt"));
        System.out.printf(Locale.ROOT, "figure: uninterrupted %d steps in %d ms%n", STEPS, took.toMillis());
    }

    @Test
    @Order(2)
    void aWorkerKilledMidTrainingRestartsTheGangFromTheLastCheckpoint() throws Exception {
        String id = submit("training.yaml", "--token", bob);
        await(id, atStep(CHECKPOINT_EVERY + CHECKPOINT_EVERY / 2));
        Path pidFile = server.dataDir().resolve("instances").resolve(id).resolve("1").resolve("2").resolve("pid");
        long pid = Long.parseLong(Files.readString(pidFile).trim().split(" ")[1]);
        Process kill = new ProcessBuilder("kill", "-9", Long.toString(pid)).inheritIO().start();
        assertThat(kill.waitFor()).isZero();

        JsonNode done = await(id, state("SUCCEEDED"));
        assertThat(done.get("attempt").asInt()).isEqualTo(2);
        assertThat(done.get("restarts").get("failures").asInt()).isEqualTo(1);
        assertThat(done.get("restarts").get("preemptions").asInt()).isZero();
        assertThat(cli("logs", id, "--attempt", "2").out()).contains("rank 0 resumes from the checkpoint of step");
        assertThat(digestOf(id)).isEqualTo(referenceDigest);
        assertThat(cli("events", id).out()).contains("InstanceFailed: worker-1 (Exited with code 137) (retryOn.exitCodes 137)");
        assertThat(done.get("instances")).filteredOn(i -> i.get("attempt").asInt() == 1).hasSize(4);
    }
}
