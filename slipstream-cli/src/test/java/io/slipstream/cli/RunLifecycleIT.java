package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.cli.SlipstreamProcess.Result;
import io.slipstream.cli.SlipstreamProcess.Server;
import io.slipstream.testing.NoProcessLeftBehind;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * A run's life through the real server and CLI: a scheduled job is applied, a run whose processes ignore SIGTERM is
 * cancelled (SIGKILL after the configured grace period, nothing survives), and a run past its maxRuntime ends
 * TIMED_OUT. What a schedule does when it is due (Forbid, Replace, on the minute) is {@code ScheduledRunsApiTest}'s, on
 * a shifted clock: no test waits for a real cron minute. A cancel across a kill -9 of the server is {@code EndToEndIT}'s;
 * cancelling a queued or a preempted run, overrides and idempotency keys are {@code CliCommandsTest}'s and
 * {@code FaultToleranceApiTest}'s.
 */
@ExtendWith(NoProcessLeftBehind.class)
class RunLifecycleIT {
    private static final Path EXAMPLES = Path.of(System.getProperty("slipstream.repo", "..")).resolve("examples");

    @TempDir
    static Path work;

    private static Server server;

    @BeforeAll
    static void startServer() throws Exception {
        Files.writeString(work.resolve("server.yaml"), "instances: {gracePeriod: 3s}\n");
        server = SlipstreamProcess.startServer(work.resolve("data"), "--config", work.resolve("server.yaml").toString());
        Files.copy(EXAMPLES.resolve("hello.yaml"), work.resolve("hello.yaml"));
        assertThat(cli("apply", "-f", "hello.yaml").exit()).isZero();
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    private static Path write(String name, String content) throws IOException {
        return Files.writeString(work.resolve(name), content);
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
        return server.awaitRun(id, Duration.ofSeconds(120), done);
    }

    @Test
    void aScheduledJobIsAppliedAStubbornRunIsCancelledAndASlowOneTimesOut() throws Exception {
        // A schedule, through the jar: applied and shown (it is due at 03:00 only; ScheduledRunsApiTest makes one due).
        write("nightly.yaml", """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: nightly, workspace: demo}
                spec:
                  schedule: {cron: "0 3 * * *", timeZone: Europe/Berlin, concurrencyPolicy: Forbid}
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: [sh, -c, "echo tick"]}
                """);
        Result applied = cli("apply", "-f", "nightly.yaml");
        assertThat(applied.exit()).as(applied.err()).isZero();
        assertThat(cli("get", "job", "nightly", "--workspace", "demo", "-o", "yaml").out()).contains("0 3 * * *").contains("timeZone: Europe/Berlin")
                .contains("concurrencyPolicy: Forbid");

        // Processes that ignore SIGTERM (an ignored signal stays ignored across exec); both shells carry the marker.
        String marker = "slipstream-it-stubborn-" + System.nanoTime();
        write("stubborn.yaml", """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: stubborn, workspace: demo}
                spec:
                  nodeGroups:
                    - name: main
                      resources: {cpu: 1, memory: 1Gi}
                      command: [sh, -c, "trap '' TERM; sh -c 'sleep 600; echo %s' & wait"]
                """.formatted(marker));
        Result submitted = cli("submit", "-f", "stubborn.yaml");
        assertThat(submitted.exit()).as(submitted.err()).isZero();
        String id = submitted.lastLine();
        await(id, run -> run.get("state").asString().equals("RUNNING"));
        awaitProcesses(marker);

        Result cancel = cli("cancel", id, "--wait");
        assertThat(cancel.exit()).as(cancel.err()).isZero();
        assertThat(cancel.out()).contains("CANCELLED");
        assertThat(processesWith(marker)).as("nothing of the run survives").isEmpty();
        JsonNode cancelled = run(id);
        assertThat(cancelled.get("instances").get(0).get("state").asString()).isEqualTo("KILLED");
        assertThat(cancelled.get("instances").get(0).get("exitCode").asInt()).isEqualTo(137);
        Instant requested = Instant.parse(eventOf(id, "CancelRequested").get("time").asString());
        assertThat(Duration.between(requested, Instant.parse(cancelled.get("instances").get(0).get("finishedAt").asString())))
                .as("SIGKILL comes after the configured grace period (3s), not before").isGreaterThanOrEqualTo(Duration.ofSeconds(3));

        write("slow.yaml", """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: slow, workspace: demo}
                spec:
                  maxRuntime: 3s
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: [sleep, "600"]}
                """);
        Result slow = cli("submit", "-f", "slow.yaml", "--wait");
        assertThat(slow.exit()).as("--wait exits 1 unless the run succeeded").isEqualTo(1);
        assertThat(slow.err()).contains("TIMED_OUT");
        JsonNode timedOut = run(slow.lastLine());
        assertThat(timedOut.get("state").asString()).isEqualTo("TIMED_OUT");
        assertThat(timedOut.get("reason").asString()).contains("Timeout").contains("maxRuntime of 3s");
        Duration ran = Duration.between(Instant.parse(timedOut.get("startedAt").asString()), Instant.parse(timedOut.get("finishedAt").asString()));
        assertThat(ran).as("not stopped before its maxRuntime").isGreaterThanOrEqualTo(Duration.ofSeconds(3));
        System.out.printf("figure: a run with a maxRuntime of 3s ran %d ms%n", ran.toMillis());
    }

    private static JsonNode eventOf(String id, String type) throws Exception {
        JsonNode events = Json.mapper().readTree(cli("events", id, "-o", "json").out());
        for (JsonNode event : events.get("items")) {
            if (type.equals(event.path("type").asString()) || type.equals(event.path("reason").asString())) {
                return event;
            }
        }
        throw new AssertionError("no " + type + " event: " + events);
    }

    private static void awaitProcesses(String marker) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (processesWith(marker).isEmpty()) {
            assertThat(System.nanoTime()).as("processes with %s", marker).isLessThan(deadline);
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
