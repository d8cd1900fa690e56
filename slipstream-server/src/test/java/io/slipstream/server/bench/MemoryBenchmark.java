package io.slipstream.server.bench;

import io.slipstream.api.codec.Json;
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
 * The real server's memory under load: a {@code java -jar slipstream.jar server} process with the server's JVM options
 * (as {@code ./slipstream server} starts it; {@code -Dbench.serverOptions=false} leaves them out, for the JVM's
 * defaults), {@value #DEFAULT_RUNNING} running instances (one-instance runs of
 * {@code sleep 3600}, which fill the cluster) and {@value #DEFAULT_QUEUED} more runs queued behind them. Once both are
 * there, the server's resident memory ({@code VmRSS}) and the heap in use (its own {@code /metrics}) are sampled once
 * a second while the control loop cycles over the queue; reported: their medians and largest, and the peak resident
 * memory over the whole process ({@code VmHWM}, the submissions included). Then every run is cancelled.
 *
 * <p>Not part of the test run; run it with {@code bench/run memory}. {@code -Dbench.running=N} (a multiple of 10),
 * {@code -Dbench.queued=N}, {@code -Dbench.samples=N} (30) and {@code -Dbench.java.opts="..."} change it. Writes
 * {@code target/memory.json}.
 */
class MemoryBenchmark {
    private static final int DEFAULT_RUNNING = 1_000;
    private static final int DEFAULT_QUEUED = 10_000;
    private static final int RUNNING = Integer.getInteger("bench.running", DEFAULT_RUNNING);
    private static final int QUEUED = Integer.getInteger("bench.queued", DEFAULT_QUEUED);
    private static final int SAMPLES = Integer.getInteger("bench.samples", 30);
    private static final int CLIENTS = 8;
    private static final long MIB = 1024 * 1024;

    @TempDir
    Path scratch;

    @Test
    void residentMemoryUnderLoad() throws Exception {
        String javaOpts = System.getProperty("bench.java.opts", "");
        // Exactly room for the running instances: 10 nodes of RUNNING / 10 one-cpu slots.
        ServerProcess servers = new ServerProcess(scratch, """
                server: {port: %%d}
                nodes:
                  - {namePrefix: node, count: 10, cpu: %d, memory: 4096Gi, gpu: 0}
                instances: {gracePeriod: 1s}
                """.formatted(RUNNING / 10), ServerProcess.options(javaOpts));
        List<String> runs = Collections.synchronizedList(new ArrayList<>());
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("benchmark", "server-memory");
        report.put("running", RUNNING);
        report.put("queued", QUEUED);
        report.put("cores", Runtime.getRuntime().availableProcessors());
        report.put("machineMemoryMiB", machineMemoryMiB());
        report.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        report.put("javaOptions", ServerProcess.expanded(ServerProcess.options(javaOpts)));
        Process server = servers.start(List.of());
        Throwable failure = null;
        try {
            servers.awaitReady(server, Duration.ofMinutes(2));
            servers.applySleeper();
            long started = System.nanoTime();
            System.out.println("submitting " + RUNNING + " runs that start");
            servers.submit("sleeper", RUNNING, CLIENTS, runs);
            awaitRuns(servers, "RUNNING", RUNNING, Duration.ofMinutes(15));
            report.put("secondsToStartAllRunning", RestartBenchmark.round((System.nanoTime() - started) / 1e9));
            System.out.println("submitting " + QUEUED + " runs that queue");
            servers.submit("sleeper", QUEUED, CLIENTS, runs);
            awaitRuns(servers, "QUEUED", QUEUED, Duration.ofMinutes(5));

            List<Double> residentMiB = new ArrayList<>();
            List<Double> heapUsedMiB = new ArrayList<>();
            List<Double> heapCommittedMiB = new ArrayList<>();
            for (int i = 0; i < SAMPLES; i++) {
                residentMiB.add(status(server.pid(), "VmRSS") / 1024.0);
                Map<String, Double> heap = heap(servers);
                heapUsedMiB.add(heap.get("used") / MIB);
                heapCommittedMiB.add(heap.get("committed") / MIB);
                Thread.sleep(1_000); // a sample a second: the measurement's period, not a wait for something
            }
            if (runs(servers, "RUNNING") != RUNNING || runs(servers, "QUEUED") != QUEUED) {
                throw new AssertionError("the load changed while it was measured");
            }
            report.put("residentMiB", figures(residentMiB));
            report.put("heapUsedMiB", figures(heapUsedMiB));
            report.put("heapCommittedMiB", figures(heapCommittedMiB));
            report.put("peakResidentMiB", RestartBenchmark.round(status(server.pid(), "VmHWM") / 1024.0));
            report.put("gcPausesSinceStart", gcPauses(servers)); // what the small heap costs: pauses of the server
            if (javaOpts.contains("NativeMemoryTracking")) {
                System.out.println(jcmd(server.pid(), "VM.native_memory summary"));
            }
            // What the heap holds that is alive: after a full collection (which may also give memory back).
            jcmd(server.pid(), "GC.run");
            Map<String, Double> live = heap(servers);
            report.put("heapUsedAfterFullGcMiB", RestartBenchmark.round(live.get("used") / MIB));
            report.put("residentAfterFullGcMiB", RestartBenchmark.round(status(server.pid(), "VmRSS") / 1024.0));
            System.out.println(jcmd(server.pid(), "GC.class_histogram").lines().limit(25).collect(java.util.stream.Collectors.joining("\n")));
            System.out.printf(java.util.Locale.ROOT, "%d running, %d queued: resident %s MiB (median %.0f), heap used median %.0f MiB, peak resident %.0f MiB%n",
                    RUNNING, QUEUED, RestartBenchmark.rounded(residentMiB), RestartBenchmark.median(residentMiB),
                    RestartBenchmark.median(heapUsedMiB), status(server.pid(), "VmHWM") / 1024.0);
        } catch (Exception | AssertionError e) {
            failure = e;
            throw e;
        } finally {
            cleanUp(servers, server, failure);
        }
        String json = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(report);
        System.out.println(json);
        Files.writeString(Path.of("target", "memory.json"), json);
    }

    /**
     * Leaves nothing running: every run cancelled (by a server started again if this one died: instances outlive it),
     * the server stopped, its log kept in {@code target/memory-server.log}. A failure here is added to the benchmark's.
     */
    private static void cleanUp(ServerProcess servers, Process server, Throwable failure) throws Exception {
        Process running = server;
        try {
            if (!running.isAlive()) {
                running = servers.start(List.of());
                servers.awaitReady(running, Duration.ofMinutes(2));
            }
            servers.cancelAll();
        } catch (Exception | AssertionError e) {
            if (failure == null) {
                throw e;
            }
            failure.addSuppressed(e);
        } finally {
            ServerProcess.stop(running);
            Files.copy(servers.log(), Path.of("target", "memory-server.log"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
    }

    private static void awaitRuns(ServerProcess servers, String state, int count, Duration limit) throws Exception {
        long deadline = System.nanoTime() + limit.toNanos();
        while (runs(servers, state) != count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(runs(servers, state) + " runs " + state + " after " + limit + ", not " + count + ": " + servers.tail());
            }
            Thread.sleep(200); // polling with a deadline
        }
    }

    /** The server's own count of runs in a state (the gauge {@code slipstream_runs}). */
    private static int runs(ServerProcess servers, String state) throws Exception {
        double sum = 0;
        for (String line : metrics(servers)) {
            if (line.startsWith("slipstream_runs{") && line.contains("state=\"" + state + "\"")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return (int) sum;
    }

    /** Heap used and committed, summed over the heap's pools, in bytes. */
    private static Map<String, Double> heap(ServerProcess servers) throws Exception {
        Map<String, Double> heap = new LinkedHashMap<>(Map.of("used", 0.0, "committed", 0.0));
        for (String line : metrics(servers)) {
            for (String figure : List.of("used", "committed")) {
                if (line.startsWith("jvm_memory_" + figure + "_bytes{") && line.contains("area=\"heap\"")) {
                    heap.merge(figure, Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)), Double::sum);
                }
            }
        }
        return heap;
    }

    /**
     * The collector's pauses since the start ({@code jvm_gc_pause_seconds}), by kind (minor: the young generation
     * only; major: the whole heap): how many, their total, and the longest of the last minutes (Micrometer's max decays).
     */
    private static Map<String, Object> gcPauses(ServerProcess servers) throws Exception {
        List<String> metrics = metrics(servers);
        Map<String, Object> byKind = new LinkedHashMap<>();
        for (String kind : List.of("minor", "major")) {
            double count = 0;
            double seconds = 0;
            double longest = 0;
            for (String line : metrics) {
                if (!line.startsWith("jvm_gc_pause_seconds") || !line.contains("action=\"end of " + kind + " GC\"")) {
                    continue;
                }
                double value = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                if (line.startsWith("jvm_gc_pause_seconds_count{")) {
                    count += value;
                } else if (line.startsWith("jvm_gc_pause_seconds_sum{")) {
                    seconds += value;
                } else if (line.startsWith("jvm_gc_pause_seconds_max{")) {
                    longest = Math.max(longest, value);
                }
            }
            Map<String, Object> pauses = new LinkedHashMap<>();
            pauses.put("count", (long) count);
            pauses.put("totalSeconds", RestartBenchmark.round(seconds));
            pauses.put("longestRecentMillis", Math.round(longest * 1000));
            byKind.put(kind, pauses);
        }
        return byKind;
    }

    private static List<String> metrics(ServerProcess servers) throws Exception {
        return servers.get("/metrics").body().lines().toList();
    }

    private static String jcmd(long pid, String command) throws Exception {
        Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(), Long.toString(pid), command)
                .redirectErrorStream(true).start();
        String output = new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (jcmd.waitFor() != 0) {
            throw new AssertionError("jcmd " + command + ": " + output);
        }
        return output;
    }

    /** A field of {@code /proc/<pid>/status}, in KiB. */
    private static long status(long pid, String field) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"), StandardCharsets.US_ASCII)) {
            if (line.startsWith(field + ":")) {
                return Long.parseLong(line.substring(field.length() + 1).trim().split("\\s+")[0]);
            }
        }
        throw new AssertionError("no " + field + " for " + pid);
    }

    private static long machineMemoryMiB() throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/meminfo"), StandardCharsets.US_ASCII)) {
            if (line.startsWith("MemTotal:")) {
                return Long.parseLong(line.split("\\s+")[1]) / 1024;
            }
        }
        return -1;
    }

    private static Map<String, Object> figures(List<Double> values) {
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("median", RestartBenchmark.round(RestartBenchmark.median(values)));
        figures.put("max", RestartBenchmark.round(Collections.max(values)));
        return figures;
    }
}
