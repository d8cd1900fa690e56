package io.slipstream.server.bench;

import io.slipstream.api.codec.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
    private static final String ARCHIVE = System.getProperty("bench.archive", "");
    private static final int CLIENTS = 4;

    @TempDir
    Path scratch;

    private ServerProcess servers;
    private final List<String> runs = Collections.synchronizedList(new ArrayList<>());

    @Test
    void restartToReady() throws Exception {
        // Room for every instance: 8 nodes of 64 one-cpu slots.
        servers = new ServerProcess(scratch, """
                server: {port: %d}
                nodes:
                  - {namePrefix: node, count: 8, cpu: 64, memory: 512Gi, gpu: 0}
                instances: {gracePeriod: 1s}
                """, ServerProcess.options(System.getProperty("bench.java.opts", "")));
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
        report.put("javaOptions", ServerProcess.expanded(ServerProcess.options(System.getProperty("bench.java.opts", ""))));
        Process server = servers.start(List.of()); // the first start creates the data directory, keys and admin: not measured
        try {
            servers.awaitReady(server, Duration.ofMinutes(2));
            servers.applySleeper();
            ServerProcess.stop(server);
            server = null;
            report.put("idle", measure(modes, "idle"));

            server = servers.start(List.of());
            servers.awaitReady(server, Duration.ofMinutes(2));
            servers.submit("sleeper", INSTANCES, CLIENTS, runs);
            awaitAllRunning(Duration.ofMinutes(10));
            ServerProcess.stop(server);
            server = null;
            report.put("adopting", measure(modes, "adopting " + INSTANCES));

            server = servers.start(List.of());
            servers.awaitReady(server, Duration.ofMinutes(2));
            awaitAllRunning(Duration.ofMinutes(2)); // nothing was lost over all those restarts
        } finally {
            if (!runs.isEmpty()) {
                if (server == null) {
                    server = servers.start(List.of());
                    servers.awaitReady(server, Duration.ofMinutes(2));
                }
                servers.cancelAll();
            }
            if (server != null) {
                ServerProcess.stop(server);
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
                Process server = servers.start(mode.getValue());
                servers.awaitReady(server, Duration.ofMinutes(2));
                seconds.add((System.nanoTime() - started) / 1e9);
                // CPU time says more than wall time on a machine shared with other work.
                cpuSeconds.add(server.toHandle().info().totalCpuDuration().map(d -> d.toMillis() / 1e3).orElse(-1.0));
                servers.awaitFirstCycle(Duration.ofMinutes(2));
                firstCycleSeconds.add((System.nanoTime() - started) / 1e9);
                ServerProcess.stop(server);
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

    /** Every run submitted is RUNNING: none waits to start, none ended. */
    private void awaitAllRunning(Duration limit) throws Exception {
        long deadline = System.nanoTime() + limit.toNanos();
        while (servers.count("QUEUED,STARTING,TERMINATING") > 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("runs did not all start within " + limit);
            }
            Thread.sleep(100); // polling with a deadline
        }
        if (servers.count("SUCCEEDED,FAILED,CANCELLED,TIMED_OUT") > 0) {
            throw new AssertionError("runs ended that should still run: " + servers.get("/api/v1/runs?workspace=bench&state=FAILED&limit=5").body());
        }
    }

    /** The last "ready: ..." line the server logged: how long each step of its start took. */
    private String lastStartSteps() throws IOException {
        String steps = null;
        for (String line : Files.readAllLines(servers.log(), StandardCharsets.UTF_8)) {
            int at = line.indexOf("ready: ");
            if (at >= 0) {
                steps = line.substring(at + "ready: ".length());
            }
        }
        return steps;
    }

    static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }

    static List<Double> rounded(List<Double> values) {
        return values.stream().map(RestartBenchmark::round).toList();
    }

    static double round(double value) {
        return Math.round(value * 100) / 100.0;
    }
}
