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
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/** The packaged jar, end to end: a real server process driven by real CLI processes. */
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

    private static JsonNode awaitRun(String id, Predicate<JsonNode> done) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        JsonNode run = run(id);
        while (!done.test(run)) {
            assertThat(System.nanoTime()).as("run %s never got there; last: %s", id, run).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(100);
            run = run(id);
        }
        return run;
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

    @Test
    void exitCodesSayWhatHappened() throws Exception {
        cli("apply", "-f", "hello.yaml");
        write("fails.yaml", job("fails", "demo", "exit 3"));
        Result failed = cli("submit", "-f", "fails.yaml", "--wait");
        assertThat(failed.exit()).isEqualTo(1);
        assertThat(failed.err()).contains("FAILED").contains("Exited with code 3");

        write("bad.yaml", """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: Bad, workspace: demo}
                spec:
                  nodeGroups:
                    - {name: main, replicas: 0, resources: {cpu: 1, memory: 1Gi}, command: [x], env: {"no good": y}}
                """);
        Result bad = cli("submit", "-f", "bad.yaml");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).contains("metadata.name:").contains("spec.nodeGroups[0].replicas:").contains("spec.nodeGroups[0].env.no good:")
                .doesNotContain("Exception").doesNotContain("\tat ");
        assertThat(cli("get", "jobs", "-w", "demo").out()).doesNotContain("Bad");
        write("half.yaml", """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: never-made}
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: half, workspace: never-made}
                spec:
                  nodeGroups:
                    - {name: main, shape: no-such-shape, command: ["true"]}
                """);
        Result half = cli("submit", "-f", "half.yaml");
        assertThat(half.exit()).isEqualTo(2);
        assertThat(half.err()).contains("documents[1].spec.nodeGroups[0].shape: unknown shape 'no-such-shape'");
        assertThat(cli("get", "workspaces").out()).doesNotContain("never-made");

        assertThat(cli("get", "frobs").exit()).isEqualTo(2);
        assertThat(cli("submit").exit()).isEqualTo(2);
        assertThat(cli("cancel", "no-such-run-1").exit()).isEqualTo(2);

        Result unreachable = SlipstreamProcess.cli(work, "get", "runs", "--server", "http://127.0.0.1:1");
        assertThat(unreachable.exit()).isEqualTo(3);
        assertThat(unreachable.err()).contains("cannot reach");
    }

    @Test
    void cancelLeavesNoProcessBehind() throws Exception {
        String marker = "e2e-cancel-" + System.nanoTime();
        cli("apply", "-f", "hello.yaml");
        write("sleeper.yaml", job("sleeper", "demo", "sleep 600 & sleep 600 & echo " + marker + "; wait"));
        Result submit = cli("submit", "-f", "sleeper.yaml");
        String id = submit.lastLine();
        awaitRun(id, r -> r.get("state").asString().equals("RUNNING"));
        assertThat(processesWith(marker)).isNotEmpty();

        Result cancel = cli("cancel", id, "--wait");
        assertThat(cancel.exit()).as(cancel.err()).isZero();
        assertThat(cancel.out()).contains("CANCELLED");
        assertThat(processesWith(marker)).isEmpty();
        assertThat(cli("cancel", id).out()).contains("already finished");
    }

    @Test
    void tokensScopeWhatAUserSees() throws Exception {
        write("teams.yaml", """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-x}
                spec: {members: [xavier]}
                ---
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-y}
                spec: {members: [yvonne]}
                """);
        assertThat(cli("apply", "-f", "teams.yaml").exit()).isZero();
        String xavier = cli("token", "create", "--user", "xavier").lastLine();
        assertThat(xavier).startsWith("ss_");
        write("x.yaml", job("xjob", "team-x", "true"));
        write("y.yaml", job("yjob", "team-y", "true"));
        String yRun = cli("submit", "-f", "y.yaml").lastLine();
        Result xSubmit = cli("submit", "-f", "x.yaml", "--token", xavier);
        assertThat(xSubmit.exit()).as(xSubmit.err()).isZero();

        Result xRuns = cli("get", "runs", "-o", "json", "--token", xavier);
        assertThat(xRuns.out()).contains("team-x").doesNotContain("team-y");
        Result stolen = cli("get", "run", yRun, "--token", xavier);
        assertThat(stolen.exit()).isEqualTo(2);
        assertThat(stolen.err()).contains("not found");
        Result intoY = cli("submit", "-f", "y.yaml", "--token", xavier);
        assertThat(intoY.exit()).isEqualTo(2);
        assertThat(cli("whoami", "--token", xavier).out()).contains("xavier").contains("team-x");
    }

    @Test
    void aKilledServerAdoptsItsInstancesAndLosesNothingAcknowledged() throws Exception {
        Path dataDir = work.resolve("crash-data");
        Server crashing = SlipstreamProcess.startServer(dataDir);
        List<String> acknowledged = new ArrayList<>();
        String longId;
        String shortId;
        try {
            Result apply = SlipstreamProcess.cli(work, "apply", "-f", "hello.yaml", "--server", crashing.url(), "--data-dir", dataDir.toString());
            assertThat(apply.exit()).as(apply.err()).isZero();
            write("long.yaml", job("long", "demo", "echo begun; sleep 4; echo finished"));
            write("short.yaml", job("short", "demo", "sleep 1; exit 7"));
            longId = SlipstreamProcess.cli(work, "submit", "-f", "long.yaml", "--server", crashing.url(), "--data-dir", dataDir.toString()).lastLine();
            shortId = SlipstreamProcess.cli(work, "submit", "-f", "short.yaml", "--server", crashing.url(), "--data-dir", dataDir.toString()).lastLine();
            for (int i = 0; i < 5; i++) {
                Result submit = SlipstreamProcess.cli(work, "submit", "-f", "long.yaml", "--server", crashing.url(), "--data-dir", dataDir.toString());
                assertThat(submit.exit()).isZero();
                acknowledged.add(submit.lastLine());
            }
        } finally {
            crashing.kill9();
        }
        Server restarted = SlipstreamProcess.startServer(dataDir);
        try {
            String[] target = {"--server", restarted.url(), "--data-dir", dataDir.toString()};
            for (String id : acknowledged) {
                assertThat(SlipstreamProcess.cli(work, concat(new String[] {"get", "run", id}, target)).exit()).as("run %s survived", id).isZero();
            }
            JsonNode shortRun = awaitWith(shortId, target, r -> r.get("state").asString().equals("FAILED"));
            assertThat(shortRun.get("instances").get(0).get("exitCode").asInt()).isEqualTo(7);
            awaitWith(longId, target, r -> r.get("state").asString().equals("SUCCEEDED"));
            Result logs = SlipstreamProcess.cli(work, concat(new String[] {"logs", longId}, target));
            assertThat(logs.out()).contains("begun").contains("finished");
        } finally {
            restarted.close();
        }
    }

    @Test
    void theDemoRunsTheExampleJob() throws Exception {
        Result demo = SlipstreamProcess.cli(work, "demo", "--data-dir", work.resolve("demo-data").toString(), "-f",
                work.resolve("hello.yaml").toString());
        assertThat(demo.exit()).as(demo.out() + demo.err()).isZero();
        assertThat(demo.out()).contains("hello from rank 0 of 2").contains("SUCCEEDED");
    }

    @Test
    void theDemoTellsTheStoryOfPreemptionCheckpointAndResume() throws Exception {
        long began = System.nanoTime();
        Result demo = SlipstreamProcess.cli(work, "demo", "--data-dir", work.resolve("story-data").toString());
        assertThat(demo.exit()).as(demo.out() + demo.err()).isZero();
        assertThat(demo.out()).contains("NotInQuota").contains("saved a checkpoint of step").contains("resumed from the checkpoint of step")
                .contains("identical, bit for bit");
        assertThat(demo.err()).as("the server's log stays out of the story").doesNotContain("INFO");
        System.out.printf("figure: the demo story took %d s%n", Duration.ofNanos(System.nanoTime() - began).toSeconds());
    }

    private static JsonNode awaitWith(String id, String[] target, Predicate<JsonNode> done) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (true) {
            Result result = SlipstreamProcess.cli(work, concat(new String[] {"get", "run", id, "-o", "json"}, target));
            JsonNode run = Json.mapper().readTree(result.out());
            if (done.test(run)) {
                return run;
            }
            assertThat(System.nanoTime()).as("run %s never got there; last: %s", id, run).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(100);
        }
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
