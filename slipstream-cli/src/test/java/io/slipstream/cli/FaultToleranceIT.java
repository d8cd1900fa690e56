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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Fault tolerance through the real server, CLI and processes: the distributed-training example preempted on borrowed
 * capacity and SIGKILLed mid-training resumes from its checkpoint and ends with the weights of an uninterrupted run;
 * failures are retried by rule, hangs are detected, and preemptions never use up the failure budget.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FaultToleranceIT {
    private static final Path REPO = Path.of(System.getProperty("slipstream.repo", ".."));
    private static final Pattern SHA = Pattern.compile("final weights sha256=([0-9a-f]{64})");
    private static final int STEPS = 800;
    private static final int CHECKPOINT_EVERY = 200;

    @TempDir
    static Path work;

    private static Server server;
    private static String bob;
    /** The weights and duration of an uninterrupted run, for comparison. */
    private static String referenceDigest;
    private static Duration referenceDuration;

    @BeforeAll
    static void startServer() throws Exception {
        server = SlipstreamProcess.startServer(work.resolve("data"));
        Files.copy(REPO.resolve("examples/quotas/teams.yaml"), work.resolve("teams.yaml"));
        Files.writeString(work.resolve("owner.yaml"), Files.readString(REPO.resolve("examples/quotas/owner.yaml"))
                .replace("SECONDS_TO_RUN: \"10\"", "SECONDS_TO_RUN: \"2\""));
        Files.writeString(work.resolve("training.yaml"), Files.readString(REPO.resolve("examples/fault-tolerance/training-on-idle.yaml"))
                .replace("STEPS: \"1500\"", "STEPS: \"" + STEPS + "\"").replace("CHECKPOINT_EVERY: \"200\"", "CHECKPOINT_EVERY: \"" + CHECKPOINT_EVERY + "\""));
        Result apply = cli("apply", "-f", "teams.yaml");
        assertThat(apply.exit()).as(apply.err()).isZero();
        bob = cli("token", "create", "--user", "bob").lastLine();
    }

    @AfterAll
    static void stopServer() throws Exception {
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
        long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
        JsonNode run = run(id);
        while (!done.test(run)) {
            assertThat(System.nanoTime()).as("run %s never got there; last: %s", id, run).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(500); // polling with a deadline (each poll starts a JVM)
            run = run(id);
        }
        return run;
    }

    private static Predicate<JsonNode> state(String state) {
        return run -> run.get("state").asString().equals(state);
    }

    private static Predicate<JsonNode> running(int attempt) {
        return run -> run.get("state").asString().equals("RUNNING") && run.get("attempt").asInt() == attempt;
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
        String logs = cli("logs", id).out();
        Matcher sha = SHA.matcher(logs);
        List<String> digests = new ArrayList<>();
        while (sha.find()) {
            digests.add(sha.group(1));
        }
        assertThat(digests).as(logs).hasSize(4);
        assertThat(digests.stream().distinct()).as("every rank agrees").hasSize(1);
        return digests.get(0);
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
        referenceDuration = Duration.between(time(done, "startedAt"), time(done, "finishedAt"));
        System.out.printf(Locale.ROOT, "figure: uninterrupted %d steps in %d ms%n", STEPS, referenceDuration.toMillis());
    }

    @Test
    @Order(2)
    void aPreemptedRunCheckpointsOnTheNoticeResumesAndEndsWithIdenticalWeights() throws Exception {
        String id = submit("training.yaml", "--token", bob);
        await(id, atStep(CHECKPOINT_EVERY + CHECKPOINT_EVERY / 4)); // between two periodic checkpoints
        String owner = submit("owner.yaml");

        JsonNode ownerDone = await(owner, state("SUCCEEDED"));
        JsonNode resumed = await(id, running(2));
        JsonNode done = await(id, state("SUCCEEDED"));
        assertThat(done.get("restarts").get("preemptions").asInt()).isEqualTo(1);
        assertThat(done.get("restarts").get("failures").asInt()).isZero();

        String first = cli("logs", id, "--attempt", "1", "--stream", "stdout").out();
        Matcher saved = Pattern.compile("rank 0 saved the checkpoint of step (\\d+) on the stop notice in ([0-9.]+) ms").matcher(first);
        String step;
        String saveMillis;
        if (saved.find()) {
            step = saved.group(1);
            saveMillis = saved.group(2);
        } else {
            // Rarely the notice lands just after a periodic checkpoint: nothing newer to save.
            Matcher stopped = Pattern.compile("rank 0 stops after step (\\d+)").matcher(first);
            assertThat(stopped.find()).as(first).isTrue();
            step = stopped.group(1);
            saveMillis = "-";
            assertThat(Long.parseLong(step) % CHECKPOINT_EVERY).isZero();
        }
        assertThat(Long.parseLong(step)).isGreaterThan(CHECKPOINT_EVERY);
        assertThat(cli("logs", id, "--attempt", "2").out()).contains("rank 0 resumes from the checkpoint of step " + step);
        assertThat(digestOf(id)).as("bit-identical to the uninterrupted run").isEqualTo(referenceDigest);

        double lostPerInstance = done.get("progress").get("workLostSeconds").asDouble() / 4;
        double checkpointInterval = referenceDuration.toMillis() / 1000.0 * CHECKPOINT_EVERY / STEPS;
        assertThat(lostPerInstance).as("work lost is under one checkpoint interval (%.1f s)", checkpointInterval).isLessThan(checkpointInterval);
        Result events = cli("events", id);
        assertThat(events.out()).contains("Reclaimed").contains("WorkLost").contains("since the checkpoint of step " + step);

        Instant capacityBack = ownerDone.get("instances").findValues("finishedAt").stream().map(n -> Instant.parse(n.asString()))
                .max(Instant::compareTo).orElseThrow();
        System.out.printf(Locale.ROOT, "figure: checkpoint on notice %s ms; work lost %.2f s per instance (interval %.1f s); "
                        + "capacity back to RUNNING again %d ms%n", saveMillis, lostPerInstance, checkpointInterval,
                Duration.between(capacityBack, Instant.parse(firstRunningOfAttempt(id, 2))).toMillis());
        assertThat(resumed.get("attempt").asInt()).isEqualTo(2);
    }

    /** When the run's attempt moved to RUNNING, from its events. */
    private static String firstRunningOfAttempt(String id, int attempt) throws Exception {
        JsonNode events = Json.mapper().readTree(cli("events", id, "-o", "json").out());
        int seen = 0;
        for (JsonNode event : events.get("items")) {
            if ("RUNNING".equals(event.path("state").asString()) && "StateChanged".equals(event.path("type").asString())) {
                seen++;
                if (seen == attempt) {
                    return event.get("time").asString();
                }
            }
        }
        throw new AssertionError("attempt " + attempt + " never ran: " + events);
    }

    @Test
    @Order(3)
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

    @Test
    @Order(4)
    void failuresAreRetriedByRuleAndOthersFailTheRunAtOnce() throws Exception {
        Files.writeString(work.resolve("flaky.yaml"), """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: flaky, workspace: team-a}
                spec:
                  quota: gpus
                  faultTolerance:
                    maxRestarts: 2
                    backoff: {base: 1s, cap: 2s}
                    retryOn: {exitCodes: [75], errorPatterns: ["NCCL error"]}
                  nodeGroups:
                    - name: main
                      resources: {cpu: 1, memory: 1Gi}
                      command: [sh, -c, 'echo "attempt $SLIPSTREAM_ATTEMPT"; echo "$MESSAGE" >&2; exit "$CODE"']
                      env: {CODE: "3", MESSAGE: "ValueError: bad config"}
                """);
        String plain = submit("flaky.yaml");
        JsonNode failed = await(plain, state("FAILED"));
        assertThat(failed.get("attempt").asInt()).isEqualTo(1);
        assertThat(failed.get("reason").asString()).isEqualTo("InstanceFailed: main-0 (Exited with code 3); no retry rule matches");

        String nccl = submit("flaky.yaml", "--set", "nodeGroups.main.env.MESSAGE=RuntimeError: NCCL error: unhandled system error");
        JsonNode exhausted = await(nccl, state("FAILED"));
        assertThat(exhausted.get("attempt").asInt()).isEqualTo(3);
        assertThat(exhausted.get("restarts").get("failures").asInt()).isEqualTo(2);
        assertThat(exhausted.get("reason").asString())
                .startsWith("RestartBudgetExhausted: restarted 2 time(s) for failures (faultTolerance.maxRestarts: 2); last: main-0 (Exited with code 3)")
                .contains("retryOn.errorPatterns 'NCCL error'");
    }

    @Test
    @Order(5)
    void aWorkloadThatStopsLoggingIsRestartedAsHung() throws Exception {
        Files.writeString(work.resolve("hang.yaml"), """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: stuck, workspace: team-a}
                spec:
                  quota: gpus
                  faultTolerance:
                    hangTimeout: 3s
                    maxHangRestarts: 1
                    backoff: {base: 1s, cap: 1s}
                  nodeGroups:
                    - name: main
                      replicas: 2
                      resources: {cpu: 1, memory: 1Gi}
                      command: [sh, -c, 'echo "waiting on a collective that never completes"; exec sleep 600']
                """);
        String id = submit("hang.yaml");
        JsonNode hung = await(id, state("FAILED"));
        assertThat(hung.get("attempt").asInt()).isEqualTo(2);
        assertThat(hung.get("restarts").get("hangs").asInt()).isEqualTo(1);
        assertThat(hung.get("reason").asString()).startsWith("HangBudgetExhausted").contains("no output and no progress");
        assertThat(cli("events", id).out()).contains("Hung: no output and no progress from any instance for");
    }

    @Test
    @Order(6)
    void aRunPreemptedFiveTimesStillHasItsWholeFailureBudget() throws Exception {
        Files.writeString(work.resolve("borrower.yaml"), """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: borrower, workspace: team-b}
                spec:
                  quota: gpus
                  idleResources: OnlyIdle
                  preemptionGracePeriod: 5s
                  faultTolerance:
                    maxRestarts: 1
                    backoff: {base: 1s, cap: 1s}
                    retryOn: {exitCodes: [7]}
                  nodeGroups:
                    - name: worker
                      replicas: 4
                      resources: {cpu: 32, memory: 256Gi, gpu: 8}
                      command: [sh, -c, 'trap "exit 0" TERM; if [ "$SLIPSTREAM_ATTEMPT" = 6 ]; then exit 7; fi; while true; do sleep 1 & wait $!; done']
                """);
        String id = submit("borrower.yaml", "--token", bob);
        for (int attempt = 1; attempt <= 5; attempt++) {
            await(id, running(attempt));
            String owner = submit("owner.yaml");
            await(owner, state("SUCCEEDED"));
        }
        JsonNode after = await(id, running(7)); // attempt 6 failed (exit 7): its one failure restart
        assertThat(after.get("restarts").get("preemptions").asInt()).isEqualTo(5);
        assertThat(after.get("restarts").get("failures").asInt()).isEqualTo(1);
        assertThat(cli("cancel", id, "--wait").exit()).isZero();
    }

    @Test
    @Order(7)
    void aLostNodeRestartsTheRunElsewhereAndTheShellContractResumesFromItsCheckpoint() throws Exception {
        Files.writeString(work.resolve("shell.yaml"), Files.readString(REPO.resolve("examples/fault-tolerance/shell-checkpoint.yaml"))
                .replace("metadata: {name: shell-checkpoint, workspace: demo}", "metadata: {name: shell-checkpoint, workspace: team-a}")
                .replace("  preemptionGracePeriod: 20s", "  quota: gpus\n  preemptionGracePeriod: 20s")
                .replace("STEPS: \"120\"", "STEPS: \"25\""));
        String id = submit("shell.yaml");
        JsonNode running = await(id, atStep(12));
        assertThat(running.get("progress").get("checkpointStep").asLong()).isEqualTo(10);
        String node = running.get("instances").get(0).get("node").asString();

        Result down = cli("node", "down", node, "--reason", "disk failure");
        assertThat(down.exit()).as(down.err()).isZero();
        assertThat(cli("get", "nodes").out()).contains("Down");
        JsonNode restarted = await(id, running(2));
        assertThat(restarted.get("restarts").get("nodeLost").asInt()).isEqualTo(1);
        assertThat(restarted.get("instances")).filteredOn(i -> i.get("attempt").asInt() == 1).singleElement()
                .satisfies(i -> assertThat(i.get("state").asString()).isEqualTo("NODE_LOST"));
        assertThat(restarted.get("instances")).filteredOn(i -> i.get("attempt").asInt() == 2).singleElement()
                .satisfies(i -> assertThat(i.get("node").asString()).isNotEqualTo(node));
        assertThat(cli("node", "up", node).exit()).isZero();

        JsonNode done = await(id, state("SUCCEEDED"));
        assertThat(cli("logs", id, "--attempt", "2").out()).contains("attempt 2 starts at step 10").contains("done at step 25");
        assertThat(done.get("progress").get("workLostSeconds").asDouble()).as("the steps after the checkpoint of step 10").isGreaterThan(1);
        assertThat(cli("events", id).out()).contains("NodeLost: node " + node + " is down (disk failure)");
    }
}
