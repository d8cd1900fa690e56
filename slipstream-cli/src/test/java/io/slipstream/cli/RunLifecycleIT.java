package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.cli.SlipstreamProcess.Result;
import io.slipstream.cli.SlipstreamProcess.Server;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * A run's life through the real server and CLI: cancel in every state (also across a kill -9 of the server), the
 * grace period's SIGKILL, timeouts, schedules that fire every minute, overrides and idempotent runs. The schedules
 * are applied first and checked last, so their two minutes pass while the other tests run.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RunLifecycleIT {
    private static final Path EXAMPLES = Path.of(System.getProperty("slipstream.repo", "..")).resolve("examples");

    @TempDir
    static Path work;

    private static Server server;
    private static Instant schedulesApplied;

    @BeforeAll
    static void startServer() throws Exception {
        Files.writeString(work.resolve("server.yaml"), "instances: {gracePeriod: 3s}\n");
        server = SlipstreamProcess.startServer(work.resolve("data"), "--config", work.resolve("server.yaml").toString());
        Files.copy(EXAMPLES.resolve("hello.yaml"), work.resolve("hello.yaml"));
        Files.copy(EXAMPLES.resolve("quotas/teams.yaml"), work.resolve("teams.yaml"));
        assertThat(cli(server, "apply", "-f", "hello.yaml").exit()).isZero();
        write("schedules.yaml", scheduled("every-minute-forbid", "Forbid") + "---\n" + scheduled("every-minute-replace", "Replace"));
        Result applied = cli(server, "apply", "-f", "schedules.yaml");
        assertThat(applied.exit()).as(applied.err()).isZero();
        schedulesApplied = Instant.now();
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    private static String scheduled(String name, String policy) {
        return """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: %s, workspace: demo}
                spec:
                  schedule: {cron: "* * * * *", timeZone: UTC, concurrencyPolicy: %s}
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: [sh, -c, "echo tick; sleep 600"]}
                """.formatted(name, policy);
    }

    /**
     * A job whose processes ignore SIGTERM (an ignored signal stays ignored across exec); both shells carry the marker.
     *
     * @param extraSpec more lines of the spec, each indented by two spaces and ending in a newline
     */
    private static String stubborn(String name, String workspace, String marker, String extraSpec, String resources) {
        return """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: %s, workspace: %s}
                spec:
                %s  nodeGroups:
                    - name: main
                      resources: %s
                      command: [sh, -c, "trap '' TERM; sh -c 'sleep 600; echo %s' & wait"]
                """.formatted(name, workspace, extraSpec, resources, marker);
    }

    private static Path write(String name, String content) throws IOException {
        return Files.writeString(work.resolve(name), content);
    }

    private static Result cli(Server target, String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--server", target.url(), "--data-dir", target.dataDir().toString()));
        return SlipstreamProcess.cli(work, all.toArray(String[]::new));
    }

    private static JsonNode run(Server target, String id) throws Exception {
        Result result = cli(target, "get", "run", id, "-o", "json");
        assertThat(result.exit()).as(result.err()).isZero();
        return Json.mapper().readTree(result.out());
    }

    private static JsonNode await(Server target, String id, Predicate<JsonNode> done) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        JsonNode run = run(target, id);
        while (!done.test(run)) {
            assertThat(System.nanoTime()).as("run %s never got there; last: %s", id, run).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(100);
            run = run(target, id);
        }
        return run;
    }

    private static Predicate<JsonNode> state(String state) {
        return run -> run.get("state").asString().equals(state);
    }

    private static String submit(Server target, String file, String content) throws Exception {
        write(file, content);
        Result submitted = cli(target, "submit", "-f", file);
        assertThat(submitted.exit()).as(submitted.err()).isZero();
        return submitted.lastLine();
    }

    private static String marker(String what) {
        return "slipstream-it-" + what + "-" + System.nanoTime();
    }

    @Test
    @Order(1)
    void aQueuedRunIsCancelledAtOnce() throws Exception {
        // Five instances of 8 GPUs on four nodes of 8: it can never start.
        String id = submit(server, "too-big.yaml", """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: too-big, workspace: demo}
                spec:
                  nodeGroups:
                    - {name: main, replicas: 5, resources: {cpu: 1, memory: 1Gi, gpu: 8}, command: ["true"]}
                """);
        assertThat(run(server, id).get("state").asString()).isEqualTo("QUEUED");
        Result cancel = cli(server, "cancel", id, "--wait");
        assertThat(cancel.exit()).as(cancel.err()).isZero();
        assertThat(cancel.out()).contains("CANCELLED");
        Result again = cli(server, "cancel", id);
        assertThat(again.exit()).isZero();
        assertThat(again.out()).contains("already finished (CANCELLED); nothing to cancel");
    }

    @Test
    @Order(2)
    void aProcessThatIgnoresSigtermIsKilledAfterTheGracePeriod() throws Exception {
        String marker = marker("stubborn");
        String id = submit(server, "stubborn.yaml", stubborn("stubborn", "demo", marker, "", "{cpu: 1, memory: 1Gi}"));
        await(server, id, state("RUNNING"));
        awaitProcesses(marker, true);

        long start = System.nanoTime();
        Result cancel = cli(server, "cancel", id, "--wait");
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(cancel.exit()).as(cancel.err()).isZero();
        assertThat(cancel.out()).contains("CANCELLED");
        assertThat(processesWith(marker)).as("nothing of the run survives").isEmpty();
        assertThat(took).as("SIGKILL comes after the 3s grace period, not before").isGreaterThanOrEqualTo(Duration.ofSeconds(3));
        JsonNode run = run(server, id);
        assertThat(run.get("instances").get(0).get("state").asString()).isEqualTo("KILLED");
        assertThat(run.get("instances").get(0).get("exitCode").asInt()).isEqualTo(137);
    }

    @Test
    @Order(3)
    void aRunBeingPreemptedCanBeCancelledAndEndsCancelled() throws Exception {
        // Its own server: the example's quotas guarantee the whole cluster to team A, leaving nothing for the others.
        Server quotas = SlipstreamProcess.startServer(work.resolve("quota-data"));
        try {
            assertThat(cli(quotas, "apply", "-f", "teams.yaml").exit()).isZero();
            String marker = marker("preempted");
            String borrower = submit(quotas, "borrower.yaml", stubborn("borrower", "team-b", marker,
                    "  quota: gpus\n  idleResources: OnlyIdle\n  preemptionGracePeriod: 8s\n", "{cpu: 4, memory: 32Gi, gpu: 8}"));
            await(quotas, borrower, state("RUNNING"));
            String owner = submit(quotas, "owner.yaml", """
                    apiVersion: slipstream/v1
                    kind: Job
                    metadata: {name: owner, workspace: team-a}
                    spec:
                      quota: gpus
                      nodeGroups:
                        - {name: main, replicas: 4, resources: {cpu: 16, memory: 64Gi, gpu: 8}, command: [sleep, "1"]}
                    """);
            JsonNode preempting = await(quotas, borrower, state("TERMINATING"));
            assertThat(preempting.get("reason").asString()).contains("Reclaimed");

            Result cancel = cli(quotas, "cancel", borrower, "--wait");
            assertThat(cancel.exit()).as(cancel.err()).isZero();
            JsonNode cancelled = run(quotas, borrower);
            assertThat(cancelled.get("state").asString()).as("cancelled, not queued again").isEqualTo("CANCELLED");
            assertThat(processesWith(marker)).isEmpty();
            await(quotas, owner, state("SUCCEEDED"));
        } finally {
            quotas.close();
        }
    }

    @Test
    @Order(4)
    void aCancelAcceptedBeforeAKillNineOfTheServerIsFinishedAfterTheRestart() throws Exception {
        Path dataDir = work.resolve("crash-data");
        Files.writeString(work.resolve("crash.yaml"), "instances: {gracePeriod: 5s}\n");
        String marker = marker("mid-cancel");
        Server crashing = SlipstreamProcess.startServer(dataDir, "--config", work.resolve("crash.yaml").toString());
        String id;
        try {
            assertThat(cli(crashing, "apply", "-f", "hello.yaml").exit()).isZero();
            id = submit(crashing, "mid-cancel.yaml", stubborn("mid-cancel", "demo", marker, "", "{cpu: 1, memory: 1Gi}"));
            await(crashing, id, state("RUNNING"));
            awaitProcesses(marker, true);
            Result cancel = cli(crashing, "cancel", id);
            assertThat(cancel.out()).contains("cancelling run " + id);
        } finally {
            crashing.kill9(); // between "cancel accepted" and "processes gone": they ignore SIGTERM for 5s
        }
        assertThat(processesWith(marker)).as("still running while the server is down").isNotEmpty();

        Server restarted = SlipstreamProcess.startServer(dataDir, "--config", work.resolve("crash.yaml").toString());
        try {
            JsonNode done = await(restarted, id, r -> RunLifecycleIT.isFinal(r.get("state").asString()));
            assertThat(done.get("state").asString()).isEqualTo("CANCELLED");
            assertThat(processesWith(marker)).as("CANCELLED only once every process is gone").isEmpty();
            assertThat(cli(restarted, "events", id).out()).contains("CancelRequested").contains("Cancelled: every instance stopped");
        } finally {
            restarted.close();
        }
    }

    @Test
    @Order(5)
    void aSleepingJobPastItsMaxRuntimeEndsTimedOut() throws Exception {
        write("slow.yaml", """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: slow, workspace: demo}
                spec:
                  maxRuntime: 3s
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: [sleep, "600"]}
                """);
        Result submitted = cli(server, "submit", "-f", "slow.yaml", "--wait");
        assertThat(submitted.exit()).as("--wait exits 1 unless the run succeeded").isEqualTo(1);
        assertThat(submitted.err()).contains("TIMED_OUT");
        JsonNode run = run(server, submitted.lastLine());
        assertThat(run.get("state").asString()).isEqualTo("TIMED_OUT");
        assertThat(run.get("reason").asString()).contains("Timeout").contains("maxRuntime of 3s");
        Duration ran = Duration.between(Instant.parse(run.get("startedAt").asString()), Instant.parse(run.get("finishedAt").asString()));
        assertThat(ran).isBetween(Duration.ofSeconds(3), Duration.ofSeconds(15));
    }

    @Test
    @Order(6)
    void aJobRunsWithOverridesAndAnIdempotencyKeyGivesOneRun() throws Exception {
        Result run = cli(server, "run", "demo/hello", "--set", "nodeGroups.main.env.GREETING=bonjour", "--set", "nodeGroups.main.replicas=3",
                "--wait");
        assertThat(run.exit()).as(run.err()).isZero();
        String id = run.lastLine();
        assertThat(cli(server, "logs", id).out()).contains("bonjour from rank 2 of 3");
        Result described = cli(server, "get", "run", id);
        assertThat(described.out()).contains("Overrides:  nodeGroups.main.env.GREETING=bonjour nodeGroups.main.replicas=3");
        assertThat(cli(server, "get", "job", "hello", "-w", "demo", "-o", "yaml").out()).contains("GREETING: hello").doesNotContain("bonjour");

        Result first = cli(server, "run", "hello", "-w", "demo", "--idempotency-key", "nightly-2026-11-29");
        Result retry = cli(server, "run", "hello", "-w", "demo", "--idempotency-key", "nightly-2026-11-29");
        assertThat(first.exit()).as(first.err()).isZero();
        assertThat(retry.lastLine()).isEqualTo(first.lastLine());

        Result bad = cli(server, "run", "demo/hello", "--set", "nodeGroups.nope.replicas=2");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).contains("overrides.nodeGroups.nope.replicas").contains("no node group 'nope'");

        Result recent = cli(server, "get", "runs", "--job", "hello", "--since", "10m");
        assertThat(recent.out()).contains(id).contains(first.lastLine());
        assertThat(cli(server, "get", "runs", "--job", "hello", "--until", "10m").out()).doesNotContain(id);
    }

    @Test
    @Order(100)
    void schedulesFireEveryMinuteOnTimeForbidSkipsAndReplaceCancels() throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(200).toNanos();
        List<JsonNode> replaced = runsOf("every-minute-replace");
        while (replaced.size() < 2) {
            assertThat(System.nanoTime()).as("two minutes after %s, the schedule fired %d time(s)", schedulesApplied, replaced.size())
                    .isLessThan(deadline);
            TimeUnit.SECONDS.sleep(1);
            replaced = runsOf("every-minute-replace");
        }
        JsonNode first = replaced.get(replaced.size() - 1); // newest first
        JsonNode second = replaced.get(replaced.size() - 2);
        Instant firstDue = Instant.parse(first.get("scheduleTime").asString());
        Instant secondDue = Instant.parse(second.get("scheduleTime").asString());
        assertThat(Duration.between(firstDue, secondDue)).isEqualTo(Duration.ofMinutes(1));
        assertThat(firstDue.getEpochSecond() % 60).isZero();
        for (JsonNode run : replaced) {
            Duration late = Duration.between(Instant.parse(run.get("scheduleTime").asString()), Instant.parse(run.get("createdAt").asString()));
            assertThat(late).as("fires on time").isBetween(Duration.ZERO, Duration.ofSeconds(3));
        }
        JsonNode cancelled = await(server, first.get("id").asString(), state("CANCELLED"));
        assertThat(cancelled.get("state").asString()).isEqualTo("CANCELLED");
        assertThat(cli(server, "events", first.get("id").asString()).out()).contains("ReplacedBySchedule");
        assertThat(run(server, second.get("id").asString()).get("state").asString()).isIn("STARTING", "RUNNING", "TERMINATING", "CANCELLED");

        // Forbid: the first due time started a run that still sleeps, so the second one started nothing.
        TimeUnit.SECONDS.sleep(2); // let a (wrong) second run of the Forbid job appear if it were going to
        List<JsonNode> forbidden = runsOf("every-minute-forbid");
        assertThat(forbidden).extracting(r -> r.get("scheduleTime").asString()).containsExactly(firstDue.toString());
        assertThat(forbidden.get(0).get("state").asString()).isEqualTo("RUNNING");
    }

    private static List<JsonNode> runsOf(String job) throws Exception {
        Result result = cli(server, "get", "runs", "--job", job, "-o", "json");
        assertThat(result.exit()).as(result.err()).isZero();
        List<JsonNode> runs = new ArrayList<>();
        JsonNode parsed = Json.mapper().readTree(result.out());
        (parsed.has("items") ? parsed.get("items") : parsed).forEach(runs::add);
        return runs;
    }

    private static boolean isFinal(String state) {
        return List.of("SUCCEEDED", "FAILED", "CANCELLED", "TIMED_OUT").contains(state);
    }

    private static void awaitProcesses(String marker, boolean present) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (processesWith(marker).isEmpty() == present) {
            assertThat(System.nanoTime()).as("processes with %s present: %s", marker, present).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(50);
        }
    }

    /** Live processes whose command line contains {@code marker}. */
    private static List<Long> processesWith(String marker) {
        List<Long> found = new ArrayList<>();
        ProcessHandle.allProcesses().forEach(p -> p.info().commandLine().ifPresent(line -> {
            if (line.contains(marker) && p.isAlive()) {
                found.add(p.pid());
            }
        }));
        return found;
    }
}
