package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.slipstream.cli.SlipstreamProcess.Result;
import io.slipstream.cli.SlipstreamProcess.Server;
import io.slipstream.testing.NoProcessLeftBehind;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Issue 42's story with the real server, CLI and processes, in seconds: 3 nodes of 8 GPUs under one root quota of 24;
 * teams a, b and c guaranteed 8 each; a is idle. b queues first and takes all 24 GPUs; c queues later. c takes back
 * its guarantee (a reclaim), and then half of a's idle GPUs by preempting b's borrowers for fair sharing; with weights
 * b 1 and c 3, three quarters. Why each run is admitted or preempted, at each step, is the scheduler's tests'
 * ({@code FairSharingTest}, {@code FairPreemptionTest}, the no-loop property); this is the story as a user sees it.
 */
@ExtendWith(NoProcessLeftBehind.class)
class FairSharingIT {
    @TempDir
    static Path work;

    private static Server server;

    @BeforeAll
    static void startServer() throws Exception {
        Files.writeString(work.resolve("server.yaml"), """
                nodes:
                  - {namePrefix: node, count: 3, cpu: 8, memory: 16Gi, gpu: 8, gpuModel: sim-gpu}
                instances: {gracePeriod: 5s}
                """);
        server = SlipstreamProcess.startServer(work.resolve("data"), "--config", work.resolve("server.yaml").toString());
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    private static Result cli(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--server", server.url(), "--data-dir", server.dataDir().toString()));
        Result result = SlipstreamProcess.cli(work, all.toArray(String[]::new));
        assertThat(result.exit()).as(String.join(" ", args) + ": " + result.err()).isZero();
        return result;
    }

    private static String quota(String team, String parent, int gpus, double weight) {
        return """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: %1$s}
                spec: {members: []}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: gpus, workspace: %1$s}
                spec:
                  type: General
                  %2$s
                  min: {cpu: %3$d, memory: %4$dGi, gpu: %3$d}
                  %5$s
                ---
                """.formatted(team, parent == null ? "" : "parent: " + parent, gpus, gpus * 2, parent == null ? "" : "fairSharing: {weight: " + weight + "}");
    }

    /** A job of two GPUs a run that borrows when it can and, on the notice, saves nothing and ends at once. */
    private static String job(String team) {
        return """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: train, workspace: %s}
                spec:
                  quota: gpus
                  idleResources: Acceptable
                  preemptionGracePeriod: 2s
                  nodeGroups:
                    - name: main
                      resources: {cpu: 1, memory: 1Gi, gpu: 2}
                      command: [sh, -c, "trap 'exit 0' TERM; sleep 600 & wait"]
                """.formatted(team);
    }

    /** GPUs held by each team's quota, as GET /api/v1/quotas has them. */
    private static Map<String, Integer> gpusHeld() throws InterruptedException {
        Map<String, Integer> held = new TreeMap<>();
        for (JsonNode quota : server.api("GET", "/api/v1/quotas", null).get("items")) {
            String team = quota.get("metadata").get("workspace").asString();
            if (!team.equals("org")) {
                held.put(team, quota.path("status").path("used").path("gpu").asInt());
            }
        }
        return held;
    }

    private static Map<String, Integer> awaitHeld(Map<String, Integer> expected, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        Map<String, Integer> held = gpusHeld();
        while (!held.equals(expected)) {
            assertThat(System.nanoTime()).as("GPUs held %s, expected %s", held, expected).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(100); // polling with a deadline
            held = gpusHeld();
        }
        return held;
    }

    private static List<String> submit(String team, int runs) throws InterruptedException {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
            ids.add(server.api("POST", "/api/v1/runs", "{\"workspace\": \"" + team + "\", \"job\": \"train\"}").get("id").asString());
        }
        return ids;
    }

    /** Each run's preemptions, by reason: what a failed assertion shows. */
    private static Map<String, List<String>> preemptions(List<String> ids) throws InterruptedException {
        Map<String, List<String>> all = new TreeMap<>();
        for (String id : ids) {
            for (JsonNode event : server.api("GET", "/api/v1/runs/" + id + "/events", null).get("items")) {
                String reason = event.path("reason").asString("");
                if (reason.startsWith("Preempted: ")) {
                    all.computeIfAbsent(id, i -> new ArrayList<>()).add(reason.substring(0, Math.min(reason.length(), 40)));
                }
            }
        }
        return all;
    }

    /** The runs (of {@code ids}) whose history has a preemption whose reason starts with {@code reason}. */
    private static List<String> preemptedFor(List<String> ids, String reason) throws InterruptedException {
        List<String> found = new ArrayList<>();
        for (String id : ids) {
            for (JsonNode event : server.api("GET", "/api/v1/runs/" + id + "/events", null).get("items")) {
                if (event.path("reason").asString("").startsWith("Preempted: " + reason) || event.path("message").asString("").startsWith("Preempted: " + reason)) {
                    found.add(id);
                    break;
                }
            }
        }
        return found;
    }

    @Test
    void cGetsHalfOfTheIdleGpusAndThreeQuartersWithWeightsOneToThree() throws Exception {
        Files.writeString(work.resolve("teams.yaml"), quota("org", null, 24, 1) + quota("a", "org/gpus", 8, 1) + quota("b", "org/gpus", 8, 1)
                + quota("c", "org/gpus", 8, 1) + job("b") + "---\n" + job("c"));
        cli("apply", "-f", "teams.yaml");

        // b queues first: 12 runs of 2 GPUs take all 24 (its own 8, and a's and c's idle 16), 2 more wait.
        List<String> bRuns = new ArrayList<>(List.of(cli("submit", "-f", writeJob("b")).lastLine()));
        bRuns.addAll(submit("b", 13));
        awaitHeld(Map.of("a", 0, "b", 24, "c", 0), Duration.ofSeconds(60));

        // c queues 8 runs: its guarantee back (4 reclaimed), then half of a's idle 8 (2 preempted for fairness).
        long began = System.nanoTime();
        List<String> cRuns = submit("c", 8);
        awaitHeld(Map.of("a", 0, "b", 12, "c", 12), Duration.ofSeconds(90));
        System.out.printf("figure: c held half of a's idle GPUs %d ms after it queued (grace period 2 s)%n",
                Duration.ofNanos(System.nanoTime() - began).toMillis());
        assertThat(preemptedFor(bRuns, "FairSharing")).as("%s", preemptions(bRuns)).hasSize(2);
        assertThat(preemptedFor(cRuns, "")).as("c's runs are never preempted").isEmpty();
        Result quotas = cli("get", "quotas");
        assertThat(shareOf(quotas.out(), "b")).isEqualTo(shareOf(quotas.out(), "c")).isNotEqualTo("-");

        // c's weight 3 from the next cycle: of a's 8, c borrows 6 and b 2 (one more of b's runs preempted).
        Files.writeString(work.resolve("weight.yaml"), quota("c", "org/gpus", 8, 3));
        began = System.nanoTime();
        cli("apply", "-f", "weight.yaml");
        awaitHeld(Map.of("a", 0, "b", 10, "c", 14), Duration.ofSeconds(90));
        System.out.printf("figure: c held three quarters %d ms after the CLI began to apply its weight%n", Duration.ofNanos(System.nanoTime() - began).toMillis());
        List<String> fairVictims = preemptedFor(bRuns, "FairSharing");
        assertThat(fairVictims).as("%s", preemptions(bRuns)).hasSize(3);
        assertThat(preemptedFor(cRuns, "")).isEmpty();

        // What the victim's owner sees: the reason, and the instance stopped for it.
        Result events = cli("events", fairVictims.get(0));
        assertThat(events.out()).contains("Preempted: FairSharing");
        Result run = cli("get", "run", fairVictims.get(0), "-o", "json");
        assertThat(run.out()).contains("RESOURCE_PREEMPTED");
        quotas = cli("get", "quotas");
        assertThat(Double.parseDouble(shareOf(quotas.out(), "c"))).as(quotas.out()).isCloseTo(Double.parseDouble(shareOf(quotas.out(), "b")), within(0.01));
    }

    private static String writeJob(String team) throws IOException {
        Path file = work.resolve(team + "-job.yaml");
        Files.writeString(file, job(team));
        return file.toString();
    }

    /** The SHARE column of team's row in {@code get quotas} (cells hold spaces: found by the header's offset). */
    private static String shareOf(String table, String team) {
        List<String> lines = table.lines().toList();
        int column = lines.get(0).indexOf("SHARE");
        return lines.stream().skip(1).filter(line -> line.startsWith(team + " ")).findFirst()
                .map(line -> line.substring(column).split("\\s+")[0]).orElseThrow(() -> new AssertionError("no row of " + team + " in\n" + table));
    }
}
