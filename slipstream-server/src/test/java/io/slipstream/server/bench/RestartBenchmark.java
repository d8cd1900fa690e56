package io.slipstream.server.bench;

import io.slipstream.api.codec.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Restart to ready of the real server: from the start of a {@code java -jar slipstream.jar server} process to the first
 * 200 of {@code GET /readyz}, over a data directory that has been started before. Measured idle, then with
 * {@value #DEFAULT_INSTANCES} running instances (one-instance runs of {@code sleep 3600}) that each restart adopts; each
 * with the plain jar and, when {@code -Dbench.archive} names one, with the class-data archive the {@code slipstream}
 * command makes. Also reported: the server's CPU time when it is ready (steadier than wall time on a shared machine),
 * and the time to its first completed control-loop cycle (adoption done, every run stepped once), which readiness
 * does not wait for. The server is stopped with SIGTERM between starts, as a supervisor stops it. After the last restart
 * every instance must still be running (adoption loses nothing); then all runs are cancelled.
 *
 * <p>Not part of the test run; run it with {@code bench/run restart} (which builds the jar and the archive first).
 * {@code -Dbench.repeats=N} (default 5), {@code -Dbench.instances=N}, {@code -Dbench.java.opts="..."} (e.g. a JFR
 * recording) change it. Writes {@code target/restart.json}.
 */
class RestartBenchmark {
    private static final int DEFAULT_INSTANCES = 500;
    private static final int REPEATS = Integer.getInteger("bench.repeats", 5);
    private static final int INSTANCES = Integer.getInteger("bench.instances", DEFAULT_INSTANCES);
    private static final Path JAR = Path.of(System.getProperty("bench.jar", "../slipstream-cli/target/slipstream.jar")).toAbsolutePath().normalize();
    private static final String ARCHIVE = System.getProperty("bench.archive", "");
    private static final String JAVA_OPTS = System.getProperty("bench.java.opts", "");
    private static final int CLIENTS = 4;

    @TempDir
    Path scratch;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private Path dataDir;
    private Path config;
    private int port;
    private String admin;
    private final List<String> runs = Collections.synchronizedList(new ArrayList<>());

    @Test
    void restartToReady() throws Exception {
        if (!Files.isRegularFile(JAR)) {
            throw new AssertionError(JAR + " is missing: build it first (mvn -DskipTests package, or bench/run restart)");
        }
        dataDir = scratch.resolve("data");
        config = scratch.resolve("server.yaml");
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        // Room for every instance: 8 nodes of 64 one-cpu slots.
        Files.writeString(config, """
                server: {port: %d}
                nodes:
                  - {namePrefix: node, count: 8, cpu: 64, memory: 512Gi, gpu: 0}
                instances: {gracePeriod: 1s}
                """.formatted(port));
        Map<String, List<String>> modes = new LinkedHashMap<>();
        modes.put("jar", List.of());
        Path archive = ARCHIVE.isEmpty() ? null : Path.of(ARCHIVE).toAbsolutePath().normalize();
        if (archive != null && Files.isRegularFile(archive)) {
            modes.put("jarWithClassDataArchive", List.of("-XX:SharedArchiveFile=" + archive, "-Xlog:cds=off", "-Xlog:cds+dynamic=off"));
        }

        Map<String, Object> report = new LinkedHashMap<>();
        report.put("benchmark", "restart-to-ready");
        report.put("repeats", REPEATS);
        report.put("instances", INSTANCES);
        report.put("nodes", "8 x 64 cpu");
        report.put("cores", Runtime.getRuntime().availableProcessors());
        report.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        report.put("javaOptions", JAVA_OPTS);
        Process server = start(List.of()); // the first start creates the data directory, keys and admin: not measured
        try {
            awaitReady(server, Duration.ofMinutes(2));
            admin = Files.readString(dataDir.resolve("admin.token"), StandardCharsets.UTF_8).trim();
            post("/api/v1/apply", """
                    apiVersion: slipstream/v1
                    kind: Workspace
                    metadata: {name: bench}
                    ---
                    apiVersion: slipstream/v1
                    kind: Job
                    metadata: {name: sleeper, workspace: bench}
                    spec:
                      nodeGroups:
                        - {name: main, resources: {cpu: 1, memory: 1Gi}, command: [sleep, "3600"]}
                    """, "application/yaml");
            stop(server);
            server = null;
            report.put("idle", measure(modes, "idle"));

            server = start(List.of());
            awaitReady(server, Duration.ofMinutes(2));
            submitAll();
            awaitAllRunning(Duration.ofMinutes(10));
            stop(server);
            server = null;
            report.put("adopting", measure(modes, "adopting " + INSTANCES));

            server = start(List.of());
            awaitReady(server, Duration.ofMinutes(2));
            awaitAllRunning(Duration.ofMinutes(2)); // nothing was lost over all those restarts
        } finally {
            if (!runs.isEmpty()) {
                if (server == null) {
                    server = start(List.of());
                    awaitReady(server, Duration.ofMinutes(2));
                }
                cancelAll();
            }
            if (server != null) {
                stop(server);
            }
        }
        String json = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(report);
        System.out.println(json);
        Files.writeString(Path.of("target", "restart.json"), json);
    }

    /** Per mode: {@link #REPEATS} restarts, each from process start to ready; the server is stopped after each. */
    private Map<String, Object> measure(Map<String, List<String>> modes, String what) throws Exception {
        Map<String, Object> rows = new LinkedHashMap<>();
        for (Map.Entry<String, List<String>> mode : modes.entrySet()) {
            List<Double> seconds = new ArrayList<>();
            List<Double> cpuSeconds = new ArrayList<>();
            List<Double> firstCycleSeconds = new ArrayList<>();
            for (int i = 0; i < REPEATS; i++) {
                long started = System.nanoTime();
                Process server = start(mode.getValue());
                awaitReady(server, Duration.ofMinutes(2));
                seconds.add((System.nanoTime() - started) / 1e9);
                // CPU time says more than wall time on a machine shared with other work.
                cpuSeconds.add(server.toHandle().info().totalCpuDuration().map(d -> d.toMillis() / 1e3).orElse(-1.0));
                awaitFirstCycle(Duration.ofMinutes(2));
                firstCycleSeconds.add((System.nanoTime() - started) / 1e9);
                stop(server);
            }
            System.out.printf(java.util.Locale.ROOT, "%s, %s: restart to ready %s s (median %.2f s; CPU %s s), to the first cycle %s s (median %.2f s)%n",
                    what, mode.getKey(), rounded(seconds), median(seconds), rounded(cpuSeconds), rounded(firstCycleSeconds), median(firstCycleSeconds));
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("medianSeconds", round(median(seconds)));
            row.put("seconds", rounded(seconds));
            row.put("medianCpuSecondsAtReady", round(median(cpuSeconds)));
            row.put("cpuSecondsAtReady", rounded(cpuSeconds));
            row.put("medianSecondsToFirstCycle", round(median(firstCycleSeconds)));
            row.put("secondsToFirstCycle", rounded(firstCycleSeconds));
            row.put("lastStartSteps", lastStartSteps()); // the server's own account of where its last start went
            rows.put(mode.getKey(), row);
        }
        return rows;
    }

    private Process start(List<String> options) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(options);
        if (!JAVA_OPTS.isBlank()) {
            command.addAll(List.of(JAVA_OPTS.trim().split("\\s+")));
        }
        command.addAll(List.of("-jar", JAR.toString(), "server", "--data-dir", dataDir.toString(), "--config", config.toString()));
        return new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(scratch.resolve("server.log").toFile()))
                .start();
    }

    private void awaitReady(Process server, Duration limit) throws Exception {
        long deadline = System.nanoTime() + limit.toNanos();
        while (true) {
            if (!server.isAlive()) {
                throw new AssertionError("the server exited (" + server.exitValue() + "): " + tail(scratch.resolve("server.log")));
            }
            try {
                HttpResponse<Void> ready = http.send(HttpRequest.newBuilder(uri("/readyz")).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.discarding());
                if (ready.statusCode() == 200) {
                    return;
                }
            } catch (IOException notListeningYet) {
                // polled again below
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the server was not ready within " + limit);
            }
            Thread.sleep(5); // polling with a deadline
        }
    }

    /** Until the control loop has completed a cycle since the start: adoption done, every run stepped once. */
    private void awaitFirstCycle(Duration limit) throws Exception {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!Json.mapper().readTree(get("/readyz").body()).has("lastCycleAt")) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no cycle completed within " + limit);
            }
            Thread.sleep(5); // polling with a deadline
        }
    }

    private static void stop(Process server) throws InterruptedException {
        server.destroy(); // SIGTERM: the server closes the store and leaves its instances running
        if (!server.waitFor(60, TimeUnit.SECONDS)) {
            server.destroyForcibly();
            server.waitFor();
        }
    }

    private void submitAll() throws Exception {
        ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
        try {
            List<Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < INSTANCES; i++) {
                sent.add(clients.submit(() -> {
                    HttpResponse<String> created = post("/api/v1/runs", "{\"workspace\":\"bench\",\"job\":\"sleeper\"}", "application/json");
                    if (created.statusCode() != 201) {
                        throw new AssertionError("submit failed: " + created.statusCode() + " " + created.body());
                    }
                    runs.add(Json.mapper().readTree(created.body()).get("id").asString());
                    return null;
                }));
            }
            for (Future<?> future : sent) {
                future.get();
            }
        } finally {
            clients.shutdown();
        }
    }

    /** Every run submitted is RUNNING: none waits to start, none ended. */
    private void awaitAllRunning(Duration limit) throws Exception {
        long deadline = System.nanoTime() + limit.toNanos();
        while (count("QUEUED,STARTING,TERMINATING") > 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("runs did not all start within " + limit);
            }
            Thread.sleep(100); // polling with a deadline
        }
        if (count("SUCCEEDED,FAILED,CANCELLED,TIMED_OUT") > 0) {
            throw new AssertionError("runs ended that should still run: " + get("/api/v1/runs?workspace=bench&state=FAILED&limit=5").body());
        }
    }

    private void cancelAll() throws Exception {
        for (String run : List.copyOf(runs)) {
            post("/api/v1/runs/" + run + "/cancel", "{}", "application/json");
        }
        long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        while (count("QUEUED,STARTING,RUNNING,TERMINATING") > 0 && System.nanoTime() < deadline) {
            Thread.sleep(200); // polling with a deadline
        }
    }

    private int count(String states) throws Exception {
        HttpResponse<String> response = get("/api/v1/runs?workspace=bench&state=" + states + "&limit=1");
        JsonNode items = Json.mapper().readTree(response.body()).get("items");
        return items == null ? 0 : items.size();
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(uri(path)).header("Authorization", "Bearer " + admin).timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private HttpResponse<String> post(String path, String body, String contentType) throws Exception {
        return http.send(HttpRequest.newBuilder(uri(path)).header("Authorization", "Bearer " + admin).header("Content-Type", contentType)
                .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8)).build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    /** The last "ready: ..." line the server logged: how long each step of its start took. */
    private String lastStartSteps() throws IOException {
        String steps = null;
        for (String line : Files.readAllLines(scratch.resolve("server.log"), StandardCharsets.UTF_8)) {
            int at = line.indexOf("ready: ");
            if (at >= 0) {
                steps = line.substring(at + "ready: ".length());
            }
        }
        return steps;
    }

    private static String tail(Path log) {
        try {
            String text = Files.readString(log, StandardCharsets.UTF_8);
            return text.substring(Math.max(0, text.length() - 2000));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }

    private static List<Double> rounded(List<Double> values) {
        return values.stream().map(RestartBenchmark::round).toList();
    }

    private static double round(double value) {
        return Math.round(value * 100) / 100.0;
    }
}
