package io.slipstream.server.bench;

import io.slipstream.api.codec.Json;
import io.slipstream.server.support.TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The times of an elastic run's changes of size through the real server and local executor (embedded store, the demo's
 * 4 nodes of 8 GPUs), {@code bench.elasticRounds} (20) rounds one after the other: team B's elastic run (1 to 4, a node
 * each, on idle capacity) runs at 4; team A's guaranteed run of 2 nodes reclaims: B shrinks to 2; A ends: B grows back
 * to 4; B is cancelled. The workload leaves at SIGTERM at once, so the figures are the platform's. From the server's
 * events: {@code reclaimToOwnerRunning}, the shrink decided to A's RUNNING (aimed at: within the grace period plus 1 s);
 * {@code removedGoneToSurvivorsRunning}, the last of the world before gone (the new world's start) to both survivors
 * running again (bound: 5 s); {@code freedToGrow}, A's end to the grow decided (bound: one cycle) and
 * {@code freedToGrownRunning}, to every instance of the grown world running (one cycle plus a start). Not part of the
 * test run (surefire runs *Test); {@code bench/run elastic} runs it with the server's JVM options.
 */
class ElasticLatencyBenchmark {
    private static final int ROUNDS = Integer.getInteger("bench.elasticRounds", 20);
    private static final String GRACE = "30s";
    private static final String LEAVES_AT_SIGTERM = "trap 'exit 0' TERM; while :; do sleep 0.05; done";

    @TempDir
    Path dir;

    @Test
    void shrinkAndGrowTimes() throws Exception {
        Map<String, List<Double>> figures = new LinkedHashMap<>();
        try (TestServer server = TestServer.start(dir.resolve("data"))) {
            String admin = server.adminToken();
            apply(server, admin, Files.readString(Path.of("../examples/quotas/teams.yaml")));
            apply(server, admin, job("team-b", "elastic", "gpus", "OnlyIdle", 4, 1, LEAVES_AT_SIGTERM));
            apply(server, admin, job("team-a", "owner", "gpus", "Disabled", 2, null, "sleep 2"));
            for (int round = 0; round < ROUNDS; round++) {
                String b = submit(server, admin, "team-b", "elastic");
                await(server, admin, b, run -> size(run, 4));
                String a = submit(server, admin, "team-a", "owner");
                await(server, admin, a, run -> "SUCCEEDED".equals(run.get("state").asString()));
                await(server, admin, b, run -> size(run, 4) && run.get("world").get("version").asInt() >= 3);
                List<JsonNode> bEvents = events(server, admin, b);
                List<JsonNode> aEvents = events(server, admin, a);
                Instant shrink = first(bEvents, e -> "Shrunk".equals(e.path("reason").asString()), Instant.MIN);
                Instant ownerRunning = first(aEvents, e -> "StateChanged".equals(e.get("type").asString())
                        && "RUNNING".equals(e.get("state").asString()), shrink);
                Instant worldTwo = first(bEvents, e -> "WorldStarted".equals(e.path("reason").asString()), shrink);
                Instant survivorsRunning = nth(bEvents, e -> "InstanceStarted".equals(e.get("type").asString()), worldTwo, 2);
                Instant ownerDone = first(aEvents, e -> "SUCCEEDED".equals(e.get("state").asString()), shrink);
                Instant grow = first(bEvents, e -> "Grown".equals(e.path("reason").asString()), ownerDone.minusSeconds(1));
                Instant worldThree = first(bEvents, e -> "WorldStarted".equals(e.path("reason").asString()), grow);
                Instant grownRunning = nth(bEvents, e -> "InstanceStarted".equals(e.get("type").asString()), worldThree, 4);
                add(figures, "reclaimToOwnerRunning", shrink, ownerRunning);
                add(figures, "removedGoneToSurvivorsRunning", worldTwo, survivorsRunning);
                add(figures, "freedToGrow", ownerDone, grow);
                add(figures, "freedToGrownRunning", ownerDone, grownRunning);
                server.post("/api/v1/runs/" + b + "/cancel", admin, "{}");
                await(server, admin, b, run -> "CANCELLED".equals(run.get("state").asString()));
            }
        }
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("benchmark", "elastic-latency");
        report.put("rounds", ROUNDS);
        report.put("cores", Runtime.getRuntime().availableProcessors());
        report.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        report.put("gracePeriod", GRACE);
        Map<String, Object> millis = new LinkedHashMap<>();
        figures.forEach((name, values) -> millis.put(name, percentiles(values)));
        report.put("millis", millis);
        String json = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(report);
        System.out.println(json);
        Files.writeString(Path.of("target", "elastic-latency.json"), json);
    }

    private static String job(String workspace, String name, String quota, String idle, int replicas, Integer minReplicas, String command) {
        return """
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: %s, workspace: %s}
                spec:
                  quota: %s
                  idleResources: %s
                  preemptionGracePeriod: %s
                  nodeGroups:
                    - name: worker
                      replicas: %d
                %s      resources: {cpu: 32, memory: 256Gi, gpu: 8}
                      command: [sh, -c, "%s"]
                """.formatted(name, workspace, quota, idle, GRACE, replicas, minReplicas == null ? "" : "      minReplicas: " + minReplicas + "\n",
                command);
    }

    private static void apply(TestServer server, String admin, String yaml) {
        TestServer.Response applied = server.post("/api/v1/apply", admin, yaml);
        if (applied.status() != 200) {
            throw new IllegalStateException(applied.text());
        }
    }

    private static String submit(TestServer server, String admin, String workspace, String job) {
        TestServer.Response created = server.post("/api/v1/runs", admin,
                Json.mapper().writeValueAsString(Map.of("workspace", workspace, "job", job, "overrides", Map.of())));
        if (created.status() != 201) {
            throw new IllegalStateException(created.text());
        }
        return created.json().get("id").asString();
    }

    private static JsonNode await(TestServer server, String admin, String run, Predicate<JsonNode> done) {
        return server.awaitRun(admin, run, done);
    }

    private static boolean size(JsonNode run, int size) {
        return "RUNNING".equals(run.get("state").asString()) && run.hasNonNull("world") && run.get("world").get("size").asInt() == size
                && !run.get("world").get("changing").asBoolean()
                && run.get("nodeGroups").get(0).get("running").asInt() == size;
    }

    private static List<JsonNode> events(TestServer server, String admin, String run) {
        List<JsonNode> all = new ArrayList<>();
        server.get("/api/v1/runs/" + run + "/events?limit=1000", admin).json().get("items").forEach(all::add);
        return all;
    }

    private static Instant first(List<JsonNode> events, Predicate<JsonNode> which, Instant notBefore) {
        return nth(events, which, notBefore, 1);
    }

    /** The time of the {@code n}th event {@code which} selects at or after {@code notBefore}. */
    private static Instant nth(List<JsonNode> events, Predicate<JsonNode> which, Instant notBefore, int n) {
        List<Instant> times = events.stream().filter(which).map(e -> Instant.parse(e.get("time").asString())).filter(t -> !t.isBefore(notBefore))
                .sorted().toList();
        if (times.size() < n) {
            throw new IllegalStateException("fewer than " + n + " such events after " + notBefore + " in " + events);
        }
        return times.get(n - 1);
    }

    private static void add(Map<String, List<Double>> figures, String name, Instant from, Instant to) {
        figures.computeIfAbsent(name, n -> new ArrayList<>()).add(Duration.between(from, to).toNanos() / 1e6);
    }

    /** p50, p90 and max in milliseconds (nearest rank), to one decimal. */
    private static Map<String, Object> percentiles(List<Double> millis) {
        List<Double> sorted = new ArrayList<>(millis);
        Collections.sort(sorted);
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("p50", round(sorted.get((int) Math.ceil(0.5 * sorted.size()) - 1)));
        row.put("p90", round(sorted.get((int) Math.ceil(0.9 * sorted.size()) - 1)));
        row.put("max", round(sorted.get(sorted.size() - 1)));
        return row;
    }

    private static double round(double millis) {
        return Math.round(millis * 10) / 10.0;
    }
}
