package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.cli.SlipstreamProcess.Result;
import io.slipstream.cli.SlipstreamProcess.Server;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import io.slipstream.testing.NoProcessLeftBehind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The packaged jar, end to end: a real server process driven by real CLI processes. A job submitted and watched, a
 * kill -9 of the server, and {@code slipstream demo} (its story is the fault-tolerance one: preempted on borrowed
 * GPUs, a checkpoint on the notice, resumed, weights bit-identical to a run never interrupted). The commands' exit
 * codes, messages and scoping are {@code CliCommandsTest}'s, against a server in the test's JVM.
 */
@ExtendWith(NoProcessLeftBehind.class)
class EndToEndIT {
    @TempDir
    static Path work;

    private static Server server;

    @BeforeAll
    static void startServer() throws Exception {
        server = SlipstreamProcess.startServer(work.resolve("data"));
        write("hello.yaml", Files.readString(Path.of(System.getProperty("slipstream.repo", "..")).resolve("examples/hello.yaml")));
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    private static Path write(String name, String content) throws IOException {
        return Files.writeString(work.resolve(name), content);
    }

    /** Runs a client command against the server, with the admin token from the data dir. */
    private static Result cli(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--server", server.url(), "--data-dir", server.dataDir().toString()));
        return SlipstreamProcess.cli(work, all.toArray(String[]::new));
    }

    private static String job(String name, String workspace, String script) {
        return """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: %s, workspace: %s}
                spec:
                  nodeGroups:
                    - name: main
                      replicas: 2
                      resources: {cpu: 1, memory: 1Gi}
                      command: [sh, -c, %s]
                """.formatted(name, workspace, Json.mapper().writeValueAsString(script));
    }

    private static JsonNode run(String id) throws Exception {
        Result result = cli("get", "run", id, "-o", "json");
        assertThat(result.exit()).as(result.err()).isZero();
        return Json.mapper().readTree(result.out());
    }

    @Test
    void submitWaitsAndPrintsTheRunIdLastAndLogsAreAttributed() throws Exception {
        Result submit = cli("submit", "-f", "hello.yaml", "--wait");
        assertThat(submit.exit()).as(submit.err()).isZero();
        String id = submit.lastLine();
        assertThat(id).matches("hello-[a-z0-9]{8}");
        assertThat(submit.err()).contains("SUCCEEDED");

        JsonNode run = run(id);
        assertThat(run.get("state").asString()).isEqualTo("SUCCEEDED");
        assertThat(run.get("instances")).hasSize(2);
        assertThat(run.get("startedAt").asString()).isNotEmpty();

        Result logs = cli("logs", id);
        assertThat(logs.out()).contains("[main-0|r0|node-1] hello from rank 0 of 2").contains("[main-1|r1|node-1] rank 1 done");
        Result table = cli("get", "runs");
        assertThat(table.out()).startsWith("ID").contains(id).contains("SUCCEEDED");
        Result events = cli("events", id);
        assertThat(events.out()).contains("AllInstancesSucceeded").contains("InstanceStarted");
        Result yaml = cli("get", "runs", "-o", "yaml");
        assertThat(yaml.out()).contains("state: SUCCEEDED");
    }

    /**
     * A kill -9 of the server: what it acknowledged survives, instances outlive it and are adopted (also what ended
     * meanwhile, with its exit code), and a cancel it accepted just before (its processes ignore SIGTERM for the grace
     * period) is finished after the restart: CANCELLED only once every process is gone.
     */
    @Test
    void aKilledServerAdoptsItsInstancesAndLosesNothingAcknowledged() throws Exception {
        Path dataDir = work.resolve("crash-data");
        Path config = work.resolve("crash.yaml");
        Files.writeString(config, "instances: {gracePeriod: 5s}\n");
        Server crashing = SlipstreamProcess.startServer(dataDir, "--config", config.toString());
        List<String> acknowledged = new ArrayList<>();
        String marker = "e2e-mid-cancel-" + System.nanoTime();
        String longId;
        String shortId;
        String cancelledId;
        try {
            String[] target = {"--server", crashing.url(), "--data-dir", dataDir.toString()};
            Result apply = SlipstreamProcess.cli(work, concat(new String[] {"apply", "-f", "hello.yaml"}, target));
            assertThat(apply.exit()).as(apply.err()).isZero();
            write("long.yaml", job("long", "demo", "echo begun; sleep 4; echo finished"));
            write("short.yaml", job("short", "demo", "sleep 1; exit 7"));
            write("mid-cancel.yaml", job("mid-cancel", "demo", "trap '' TERM; sh -c 'sleep 600; echo " + marker + "' & wait"));
            cancelledId = SlipstreamProcess.cli(work, concat(new String[] {"submit", "-f", "mid-cancel.yaml"}, target)).lastLine();
            longId = SlipstreamProcess.cli(work, concat(new String[] {"submit", "-f", "long.yaml"}, target)).lastLine();
            shortId = SlipstreamProcess.cli(work, concat(new String[] {"submit", "-f", "short.yaml"}, target)).lastLine();
            for (int i = 0; i < 5; i++) {
                Result submit = SlipstreamProcess.cli(work, concat(new String[] {"submit", "-f", "long.yaml"}, target));
                assertThat(submit.exit()).isZero();
                acknowledged.add(submit.lastLine());
            }
            crashing.awaitRun(cancelledId, Duration.ofSeconds(90), r -> r.get("state").asString().equals("RUNNING"));
            awaitProcesses(marker);
            Result cancel = SlipstreamProcess.cli(work, concat(new String[] {"cancel", cancelledId}, target));
            assertThat(cancel.out()).contains("cancelling run " + cancelledId);
        } finally {
            crashing.kill9(); // between "cancel accepted" and "processes gone": they ignore SIGTERM for 5s
        }
        assertThat(processesWith(marker)).as("still running while the server is down").isNotEmpty();

        Server restarted = SlipstreamProcess.startServer(dataDir, "--config", config.toString());
        try {
            String[] target = {"--server", restarted.url(), "--data-dir", dataDir.toString()};
            for (String id : acknowledged) {
                assertThat(SlipstreamProcess.cli(work, concat(new String[] {"get", "run", id}, target)).exit()).as("run %s survived", id).isZero();
            }
            JsonNode shortRun = restarted.awaitRun(shortId, Duration.ofSeconds(90), r -> r.get("state").asString().equals("FAILED"));
            assertThat(shortRun.get("instances").get(0).get("exitCode").asInt()).isEqualTo(7);
            restarted.awaitRun(longId, Duration.ofSeconds(90), r -> r.get("state").asString().equals("SUCCEEDED"));
            Result logs = SlipstreamProcess.cli(work, concat(new String[] {"logs", longId}, target));
            assertThat(logs.out()).contains("begun").contains("finished");

            JsonNode cancelled = restarted.awaitRun(cancelledId, Duration.ofSeconds(90), r -> List.of("SUCCEEDED", "FAILED", "CANCELLED", "TIMED_OUT")
                    .contains(r.get("state").asString()));
            assertThat(cancelled.get("state").asString()).isEqualTo("CANCELLED");
            assertThat(processesWith(marker)).as("CANCELLED only once every process is gone").isEmpty();
            assertThat(SlipstreamProcess.cli(work, concat(new String[] {"events", cancelledId}, target)).out())
                    .contains("CancelRequested").contains("Cancelled: every instance stopped");
        } finally {
            restarted.close();
        }
    }

    private static void awaitProcesses(String marker) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (processesWith(marker).isEmpty()) {
            assertThat(System.nanoTime()).as("processes with %s", marker).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(50);
        }
    }

    @Test
    void theDemoRunsTheExampleJobInAFreshStateOfItsOwn() throws Exception {
        // The story's state (whose quotas guarantee the whole cluster) must never keep the job from running: here the
        // story's directory is not even usable, and the demo of a file does not touch it.
        Files.writeString(work.resolve(".slipstream-demo"), "not a data directory\n");
        Result demo = SlipstreamProcess.cli(work, "demo", "-f", work.resolve("hello.yaml").toString());
        assertThat(demo.exit()).as(demo.out() + demo.err()).isZero();
        assertThat(demo.out()).contains("hello from rank 0 of 2").contains("SUCCEEDED");
        java.util.regex.Matcher state = java.util.regex.Pattern.compile("\\(state in (\\S+)\\)").matcher(demo.out());
        assertThat(state.find()).as(demo.out()).isTrue();
        assertThat(Path.of(state.group(1))).as("the fresh state is removed afterwards").doesNotExist();
    }

    @Test
    void theDemoTellsTheStoryOfPreemptionCheckpointAndResume() throws Exception {
        long began = System.nanoTime();
        Result demo = SlipstreamProcess.cli(work, "demo", "--data-dir", work.resolve("story-data").toString());
        assertThat(demo.exit()).as(demo.out() + demo.err()).isZero();
        // The notice may come right after a periodic checkpoint: then there is nothing newer to save, and the story says so.
        assertThat(demo.out()).contains("NotInQuota").containsPattern("saved a checkpoint of step|stopped after step \\d+, whose checkpoint it had just saved")
                .contains("resumed from the checkpoint of step").contains("identical, bit for bit");
        assertThat(demo.err()).as("the server's log stays out of the story").doesNotContain("INFO");
        System.out.printf("figure: the demo story took %d s%n", Duration.ofNanos(System.nanoTime() - began).toSeconds());
    }

    private static String[] concat(String[] a, String[] b) {
        List<String> all = new ArrayList<>(List.of(a));
        all.addAll(List.of(b));
        return all.toArray(String[]::new);
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
