package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.api.codec.Json;
import io.slipstream.cli.SlipstreamProcess.Result;
import io.slipstream.cli.SlipstreamProcess.Server;
import io.slipstream.testing.NoProcessLeftBehind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Real PyTorch (DDP over gloo, four ranks) through the real server, CLI and processes: examples/pytorch-ddp run
 * uninterrupted gives the reference weights; preempted on borrowed GPUs by the owner's guaranteed job, it saves a
 * checkpoint on the notice and resumes from exactly that step; with one rank SIGKILLed, retryOn restarts the gang from
 * the last periodic checkpoint. Both end bit-identical to the reference. Skipped, saying so, without PyTorch for
 * Debian's /usr/bin/python3 ({@code apt-get install python3-torch}; .ci/run installs it). The same story with the
 * Java example was FaultToleranceIT's, which ran only where this one could not: the story has one test now.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ExtendWith(NoProcessLeftBehind.class)
class PyTorchDdpIT {
    private static final Path REPO = Path.of(System.getProperty("slipstream.repo", ".."));
    private static final int STEPS = 600;

    @TempDir
    static Path work;

    private static Server server;
    private static String referenceDigest;

    @BeforeAll
    static void startServer() throws Exception {
        assumeTrue(SlipstreamProcess.torchIsInstalled(), "PyTorch is not installed for /usr/bin/python3 (apt-get install python3-torch): "
                + "the PyTorch DDP example is not tested");
        server = SlipstreamProcess.startServer(work.resolve("data"));
        Files.copy(REPO.resolve("examples/quotas/teams.yaml"), work.resolve("teams.yaml"));
        Files.copy(REPO.resolve("examples/pytorch-ddp/job.yaml"), work.resolve("job.yaml")); // STEPS: 600
        // The borrower's steps take 25 ms at least (results unchanged), so that the reclaim lands mid-run however
        // loaded the machine is: once, under load, 480 steps went by before it did.
        Files.writeString(work.resolve("on-idle.yaml"), Files.readString(REPO.resolve("examples/pytorch-ddp/on-idle.yaml"))
                .replace("SEED: \"42\"}", "SEED: \"42\", STEP_MILLIS: \"25\"}"));
        Files.writeString(work.resolve("owner.yaml"), Files.readString(REPO.resolve("examples/quotas/owner.yaml"))
                .replace("SECONDS_TO_RUN: \"10\"", "SECONDS_TO_RUN: \"2\""));
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    private static Result cli(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--server", server.url(), "--data-dir", server.dataDir().toString()));
        return SlipstreamProcess.cli(work, all.toArray(String[]::new));
    }

    /** Submits as {@code token}'s user; {@code null}: as the admin (job.yaml applies its workspace too). */
    private static String submit(String file, String token) throws Exception {
        Result submitted = token == null ? cli("submit", "-f", file) : cli("submit", "-f", file, "--token", token);
        assertThat(submitted.exit()).as(submitted.err()).isZero();
        return submitted.lastLine();
    }

    /** Waits for the run; if it never gets there, the failure says what its instances printed. */
    private static JsonNode await(String id, Predicate<JsonNode> done) throws Exception {
        try {
            return server.awaitRun(id, Duration.ofSeconds(240), done);
        } catch (AssertionError e) {
            Result logs = cli("logs", id);
            String tail = logs.out().length() > 6000 ? logs.out().substring(logs.out().length() - 6000) : logs.out();
            throw new AssertionError(e.getMessage() + "\nits logs (last attempt, tail):\n" + tail + logs.err(), e);
        }
    }

    private static Predicate<JsonNode> state(String state) {
        return run -> run.get("state").asString().equals(state);
    }

    private static Predicate<JsonNode> atStep(long step) {
        return run -> run.get("state").asString().equals("RUNNING") && run.path("progress").path("step").asLong() >= step;
    }

    private static String logs(String id, int attempt) throws Exception {
        Result logs = cli("logs", id, "--attempt", Integer.toString(attempt));
        assertThat(logs.exit()).as(logs.err()).isZero();
        return logs.out();
    }

    /** The weights' digest every rank printed: all four, all equal. */
    private static String digestOf(String id, int attempt) throws Exception {
        return SlipstreamProcess.agreedDigest(logs(id, attempt), 4);
    }

    private static long stepIn(String text, Pattern pattern) {
        Matcher matcher = pattern.matcher(text);
        assertThat(matcher.find()).as(text).isTrue();
        return Long.parseLong(matcher.group(1));
    }

    @Test
    @Order(1)
    void anUninterruptedRunGivesTheReferenceWeights() throws Exception {
        String id = submit("job.yaml", null);
        JsonNode done = await(id, state("SUCCEEDED"));
        assertThat(done.get("attempt").asInt()).isEqualTo(1);
        referenceDigest = digestOf(id, 1);
    }

    @Test
    @Order(3)
    void aBorrowerPreemptedByTheOwnerResumesFromTheCheckpointTakenOnTheNotice() throws Exception {
        // Team A is guaranteed the whole cluster (no run without a quota starts after this): the last test.
        Result apply = cli("apply", "-f", "teams.yaml");
        assertThat(apply.exit()).as(apply.err()).isZero();
        String alice = cli("token", "create", "--user", "alice").lastLine();
        String bob = cli("token", "create", "--user", "bob").lastLine();
        String id = submit("on-idle.yaml", bob);
        await(id, atStep(20));
        String owner = submit("owner.yaml", alice);

        JsonNode done = await(id, state("SUCCEEDED"));
        assertThat(await(owner, state("SUCCEEDED")).get("restarts").get("preemptions").asInt()).isZero();
        assertThat(done.get("restarts").get("preemptions").asInt()).isEqualTo(1);
        assertThat(done.get("restarts").get("failures").asInt()).isZero();
        String preempted = logs(id, 1);
        long saved = stepIn(preempted, Pattern.compile("rank 0 stops after step (\\d+)"));
        assertThat(saved).isGreaterThanOrEqualTo(20).isLessThan(STEPS);
        if (saved % 100 != 0) { // else its periodic checkpoint is already that step's
            assertThat(preempted).contains("rank 0 saved the checkpoint of step " + saved + " on the stop notice");
        }
        String resumed = logs(id, 2);
        for (int rank = 0; rank < 4; rank++) {
            assertThat(resumed).contains("rank " + rank + " resumes from the checkpoint of step " + saved);
        }
        assertThat(digestOf(id, 2)).isEqualTo(referenceDigest);
    }

    @Test
    @Order(2)
    void aRankKilledMidTrainingRestartsTheGangFromTheLastPeriodicCheckpoint() throws Exception {
        String id = submit("job.yaml", null);
        await(id, atStep(150));
        Path pidFile = server.dataDir().resolve("instances").resolve(id).resolve("1").resolve("2").resolve("pid");
        long pid = Long.parseLong(Files.readString(pidFile).trim().split(" ")[1]);
        Process kill = new ProcessBuilder("kill", "-9", Long.toString(pid)).inheritIO().start();
        assertThat(kill.waitFor()).isZero();

        JsonNode done = await(id, state("SUCCEEDED"));
        assertThat(done.get("attempt").asInt()).isEqualTo(2);
        assertThat(done.get("restarts").get("failures").asInt()).isEqualTo(1);
        assertThat(done.get("restarts").get("preemptions").asInt()).isZero();
        assertThat(cli("events", id).out()).contains("InstanceFailed: trainer-2 (Exited with code 137) (retryOn.exitCodes 137)");
        assertThat(done.get("instances")).filteredOn(i -> i.get("attempt").asInt() == 1).hasSize(4);
        long resumedFrom = stepIn(logs(id, 2), Pattern.compile("rank 0 resumes from the checkpoint of step (\\d+)"));
        assertThat(resumedFrom).isGreaterThanOrEqualTo(100).isLessThan(STEPS);
        assertThat(resumedFrom % 100).as("a periodic checkpoint, every 100 steps").isZero();
        assertThat(digestOf(id, 2)).isEqualTo(referenceDigest);
    }
}
