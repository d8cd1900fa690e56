package io.slipstream.server.bench;

import io.slipstream.api.codec.Json;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.NodeInfo;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * End-to-end throughput of the real server with the local executor on 16 declared nodes: runs completed per
 * second for trivial one-instance jobs ({@code true}) and for 4-instance gangs. Every run goes through the whole
 * path: HTTP submit, store, scheduling cycle, process launch under its supervisor, exit, reconcile. The rate is
 * taken from the server's own timestamps: runs / (last finish - first creation). Not part of the test run; run it
 * with {@code bench/run e2e} (or {@code -Dtest=ThroughputBenchmark}); {@code -Dbench.runs=N} changes the 2,000
 * ({@code -Dbench.gangRuns} those of gangs, {@code -Dbench.repeats} the 3 repeats), after a warm-up of 3,000 trivial
 * runs and 300 gangs ({@code -Dbench.warmUpRuns}). It also measures submit to
 * running, one run at a time on the idle cluster ({@code -Dbench.latencyRuns}, 200).
 */
class ThroughputBenchmark {
    private static final int RUNS = Integer.getInteger("bench.runs", 2_000);
    /** Gangs are counted apart (bench/run slurm runs fewer of them, as Slurm takes about a second each). */
    private static final int GANG_RUNS = Integer.getInteger("bench.gangRuns", RUNS);
    private static final int REPEATS = Integer.getInteger("bench.repeats", 3);
    private static final int CLIENTS = 8;
    /**
     * Trivial runs before the measured ones (a tenth as many gangs): {@code -Dbench.warmUpRuns}, 3,000. After 500, nine
     * repeats of 1,000 trivial runs still climbed for the first three (49, 56, 67, then 64-74 runs/s): the JIT was
     * still at work on the path. A long-running server is past that; the figures are its steady state.
     */
    private static final int WARM_UP_RUNS = Integer.getInteger("bench.warmUpRuns", 3_000);
    /** What starts the instances ({@code -Dbench.launcher=shell} for the shell chain; {@code auto} by default). */
    private static final io.slipstream.executor.local.process.SupervisorProgram.Mode LAUNCHER =
            io.slipstream.executor.local.process.SupervisorProgram.Mode.valueOf(System.getProperty("bench.launcher", "auto"));

    @TempDir
    Path dataDir;

    @Test
    void runsCompletedPerSecond() throws Exception {
        List<NodeInfo> nodes = new ArrayList<>();
        for (int i = 1; i <= 16; i++) {
            nodes.add(new NodeInfo(String.format("node-%02d", i), new Resources(64_000, 256L << 30, 8, "sim-gpu"), null, Map.of()));
        }
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("benchmark", "end-to-end-throughput");
        report.put("runsPerRepeat", RUNS);
        report.put("repeats", REPEATS);
        report.put("nodes", nodes.size());
        report.put("clients", CLIENTS);
        report.put("cores", Runtime.getRuntime().availableProcessors());
        report.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        report.put("launcher", LAUNCHER.name());
        report.put("warmUpRuns", WARM_UP_RUNS);
        try (TestServer server = TestServer.start(dataDir, config -> config.withExecutor(config.executor(io.slipstream.executor.local.LocalExecutorSettings.class)
                .withNodes(nodes).withLauncher(LAUNCHER)))) {
            String admin = server.adminToken();
            server.post("/api/v1/apply", admin, """
                    apiVersion: slipstream/v1
                    kind: Workspace
                    metadata: {name: bench}
                    ---
                    apiVersion: slipstream/v1
                    kind: Job
                    metadata: {name: trivial, workspace: bench}
                    spec:
                      nodeGroups:
                        - {name: main, resources: {cpu: 1, memory: 1Gi}, command: ["true"]}
                    ---
                    apiVersion: slipstream/v1
                    kind: Job
                    metadata: {name: brief, workspace: bench}
                    spec:
                      nodeGroups:
                        - {name: main, resources: {cpu: 1, memory: 1Gi}, command: ["sleep", "0.1"]}
                    ---
                    apiVersion: slipstream/v1
                    kind: Job
                    metadata: {name: gang, workspace: bench}
                    spec:
                      nodeGroups:
                        - {name: main, replicas: 4, resources: {cpu: 1, memory: 1Gi}, command: ["true"]}
                    """);
            // Warm-up: the JIT compiles the server's whole path (a long-running server's state), the pools fill, the first
            // processes start. Measured from a cold start, the first repeat spent about a sixth of the machine in C2.
            if (WARM_UP_RUNS >= 10) {
                measure(server, admin, "trivial", WARM_UP_RUNS);
                measure(server, admin, "gang", WARM_UP_RUNS / 10);
            }
            for (String job : List.of("trivial", "gang")) {
                List<Double> rates = new ArrayList<>();
                List<Double> seconds = new ArrayList<>();
                int runs = job.equals("gang") ? GANG_RUNS : RUNS;
                for (int r = 0; r < REPEATS; r++) {
                    double elapsed = measure(server, admin, job, runs);
                    rates.add(runs / elapsed);
                    seconds.add(elapsed);
                    System.out.printf(java.util.Locale.ROOT, "%s: %d runs in %.1f s = %.1f runs/s%n", job, runs, elapsed, runs / elapsed);
                }
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("instancesPerRun", job.equals("gang") ? 4 : 1);
                row.put("runs", runs);
                row.put("medianRunsPerSecond", round(median(rates)));
                row.put("runsPerSecond", rates.stream().map(ThroughputBenchmark::round).toList());
                row.put("seconds", seconds.stream().map(ThroughputBenchmark::round).toList());
                report.put(job, row);
            }
            report.put("submitToRunning", submitToRunning(server, admin));
        }
        String json = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(report);
        System.out.println(json);
        Files.writeString(Path.of("target", "throughput.json"), json);
    }

    /** Submits {@code count} runs of {@code job} from several clients, waits for all to succeed; returns seconds. */
    private static double measure(TestServer server, String admin, String job, int count) throws Exception {
        List<String> ids = Collections.synchronizedList(new ArrayList<>());
        ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
        try {
            List<Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                sent.add(clients.submit(() -> {
                    TestServer.Response created = server.post("/api/v1/runs", admin, "{\"workspace\":\"bench\",\"job\":\"" + job + "\"}");
                    if (created.status() != 201) {
                        throw new AssertionError("submit failed: " + created.status() + " " + created.text());
                    }
                    ids.add(created.json().get("id").asString());
                }));
            }
            for (Future<?> future : sent) {
                future.get();
            }
        } finally {
            clients.shutdown();
        }
        long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
        while (server.get("/api/v1/runs?workspace=bench&state=QUEUED,STARTING,RUNNING,TERMINATING&limit=1", admin).json().get("items").size() > 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("runs did not finish within 10 minutes");
            }
            Thread.sleep(50); // polling with a deadline
        }
        Instant first = null;
        Instant last = null;
        int succeeded = 0;
        for (String id : ids) {
            JsonNode run = server.get("/api/v1/runs/" + id, admin).json();
            if (!run.get("state").asString().equals("SUCCEEDED")) {
                throw new AssertionError("run " + id + " ended " + run.get("state").asString() + ": " + run.get("reason"));
            }
            succeeded++;
            Instant created = Instant.parse(run.get("createdAt").asString());
            Instant finished = Instant.parse(run.get("finishedAt").asString());
            first = first == null || created.isBefore(first) ? created : first;
            last = last == null || finished.isAfter(last) ? finished : last;
        }
        if (succeeded != count) {
            throw new AssertionError(succeeded + " of " + count + " runs succeeded");
        }
        return Duration.between(first, last).toMillis() / 1000.0;
    }

    /**
     * One run at a time on the idle cluster: from its creation to RUNNING (every instance started), by the server's
     * timestamps; the median and the 99th percentile of {@code bench.latencyRuns} (200) runs, in milliseconds.
     */
    private static Map<String, Object> submitToRunning(TestServer server, String admin) throws Exception {
        int count = Integer.getInteger("bench.latencyRuns", 200);
        List<Double> millis = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            TestServer.Response created = server.post("/api/v1/runs", admin, "{\"workspace\":\"bench\",\"job\":\"brief\"}");
            String id = created.json().get("id").asString();
            long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
            JsonNode run = server.get("/api/v1/runs/" + id, admin).json();
            while (!run.get("state").asString().equals("SUCCEEDED")) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("run " + id + " did not end within a minute: " + run);
                }
                Thread.sleep(20); // polling with a deadline
                run = server.get("/api/v1/runs/" + id, admin).json();
            }
            millis.add((double) Duration.between(Instant.parse(run.get("createdAt").asString()), Instant.parse(run.get("startedAt").asString())).toMillis());
        }
        List<Double> sorted = new ArrayList<>(millis);
        Collections.sort(sorted);
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("runs", count);
        row.put("p50Millis", sorted.get(sorted.size() / 2));
        row.put("p99Millis", sorted.get((int) Math.ceil(sorted.size() * 0.99) - 1));
        row.put("maxMillis", sorted.get(sorted.size() - 1));
        System.out.printf(java.util.Locale.ROOT, "submit to running, one run at a time: p50 %.0f ms, p99 %.0f ms%n", row.get("p50Millis"), row.get("p99Millis"));
        return row;
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }

    private static double round(double value) {
        return Math.round(value * 10) / 10.0;
    }
}
