package io.slipstream.server.bench;

import static io.slipstream.server.bench.ServerFigures.CYCLE_COUNT;
import static io.slipstream.server.bench.ServerFigures.CYCLE_SUM;
import static io.slipstream.server.bench.ServerFigures.metrics;
import static io.slipstream.server.bench.ServerFigures.percentile;
import static io.slipstream.server.bench.ServerFigures.residentMegabytes;
import static io.slipstream.server.bench.ServerFigures.round;
import static io.slipstream.server.bench.ServerFigures.storeMegabytes;
import static io.slipstream.server.bench.ServerFigures.runs;
import static io.slipstream.server.bench.ServerFigures.value;

import io.slipstream.api.codec.Json;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.simulated.SimulatedExecutorSettings;
import io.slipstream.server.support.TestServer;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Churn on the real server (the test's JVM, the server's JVM options when run by {@code bench/run churn}), embedded
 * store, {@code -Dbench.nodes} (5,000) simulated nodes of 64 CPUs: runs of one CPU that last 30 to 120 s (their label
 * {@code slipstream.io/simulated-duration}, uniform) offered at a fixed rate for {@code -Dbench.churnStepSeconds}
 * (300) per step, at the rates of {@code -Dbench.churnRates} (100, 200, 400, 800, 1600 a second), stepping up until
 * the server falls behind. 32 clients submit open loop (each submission at its due time, whether the last has been
 * answered or not). Per step: the rate reached, submit-to-running p50 and p99 (the run's own timestamps, a tenth of
 * the runs sampled), runs queued at its end, cycles, {@code get runs} / {@code get run} p99 (once a second each), the
 * watch streams' p99 (from a run's start to its event; {@code -Dbench.churnWatchers} streams, 1), CPU per run submitted by what the threads do ({@link CpuShares}),
 * resident memory, heap after a full collection, store size.
 * A step keeps pace when it submits 95% of its offered runs and ends with fewer queued than two seconds' worth.
 */
class ChurnBenchmark {
    private static final int NODES = Integer.getInteger("bench.nodes", 5_000);
    private static final int CLIENTS = 32;
    private static final int WORKSPACES = 5;
    private static final int STEP_SECONDS = Integer.getInteger("bench.churnStepSeconds", 300);
    /** Watch streams open during a step (one user may hold 8). */
    private static final int WATCHERS = Integer.getInteger("bench.churnWatchers", 1);
    private static final List<Integer> RATES = Arrays.stream(System.getProperty("bench.churnRates", "100,200,400,800,1600").split(","))
            .map(String::trim).map(Integer::valueOf).toList();
    private static final Pattern QUEUED = runs("QUEUED");
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @TempDir
    Path dataDir;

    @Test
    void churn() throws Exception {
        List<NodeInfo> nodes = new ArrayList<>();
        for (int i = 1; i <= NODES; i++) {
            nodes.add(new NodeInfo(String.format(Locale.ROOT, "cpu-%05d", i), new Resources(64_000, 512L << 30, 0, null), null, Map.of()));
        }
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("benchmark", "churn");
        report.put("nodes", NODES);
        report.put("clients", CLIENTS);
        report.put("watchers", WATCHERS);
        report.put("stepSeconds", STEP_SECONDS);
        report.put("cores", Runtime.getRuntime().availableProcessors());
        report.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        List<Map<String, Object>> steps = new ArrayList<>();
        report.put("steps", steps);
        try (TestServer server = TestServer.start(dataDir, config -> config.withExecutor(SimulatedExecutorSettings.defaults().withNodes(nodes)))) {
            String admin = server.adminToken();
            setUp(server, admin);
            Integer sustained = null;
            for (int rate : RATES) {
                Map<String, Object> step = step(server, admin, rate);
                steps.add(step);
                System.out.println("churn step: " + step);
                if (!(Boolean) step.get("keptPace")) {
                    break;
                }
                sustained = rate;
            }
            report.put("highestRateKeptPace", sustained);
        }
        String json = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(report);
        System.out.println(json);
        Files.writeString(Path.of("target", "churn.json"), json);
    }

    /** Workspaces {@code c0..c4}, each a quota of a fifth of the cluster's CPUs and a job of one CPU. */
    private static void setUp(TestServer server, String admin) {
        int cpus = NODES * 64 / WORKSPACES;
        for (int w = 0; w < WORKSPACES; w++) {
            String documents = "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: c" + w + "}\n"
                    + "---\napiVersion: slipstream/v1\nkind: Quota\nmetadata: {name: q, workspace: c" + w + "}\nspec:\n  min: {cpu: " + cpus
                    + ", memory: " + cpus * 4 + "Gi}\n"
                    + "---\napiVersion: slipstream/v1\nkind: Job\nmetadata: {name: tick, workspace: c" + w + "}\nspec:\n  quota: q\n  nodeGroups:\n"
                    + "    - {name: main, replicas: 1, resources: {cpu: 1, memory: 1Gi}, command: [tick]}\n";
            TestServer.Response applied = server.post("/api/v1/apply", admin, documents);
            if (applied.status() != 200) {
                throw new AssertionError("set-up failed: " + applied.text());
            }
        }
    }

    private Map<String, Object> step(TestServer server, String admin, int rate) throws Exception {
        int offered = rate * STEP_SECONDS;
        String before = metrics(server, admin);
        CpuShares cpuBefore = CpuShares.now();
        List<String> sampled = Collections.synchronizedList(new ArrayList<>());
        ConcurrentLinkedQueue<Double> watchLags = new ConcurrentLinkedQueue<>();
        AtomicInteger submitted = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger next = new AtomicInteger();
        long start = System.nanoTime();
        long end = start + Duration.ofSeconds(STEP_SECONDS).toNanos();
        List<HttpResponse<InputStream>> watches = new ArrayList<>();
        for (int w = 0; w < WATCHERS; w++) { // as a console open on each workspace would
            HttpResponse<InputStream> watch = HTTP.send(HttpRequest.newBuilder(URI.create(server.server().url() + "/api/v1/watch?workspace=c" + w % WORKSPACES))
                    .header("Authorization", "Bearer " + admin).build(), HttpResponse.BodyHandlers.ofInputStream());
            watches.add(watch);
            Thread watcher = new Thread(() -> readWatch(watch.body(), watchLags), "churn-watch");
            watcher.setDaemon(true);
            watcher.start();
        }
        ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
        List<Double> listMillis = new ArrayList<>();
        List<Double> getMillis = new ArrayList<>();
        try {
            List<Future<?>> sent = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++) {
                int client = c;
                sent.add(clients.submit(() -> {
                    Random random = new Random(rate * 100L + client);
                    for (int i = next.getAndIncrement(); i < offered; i = next.getAndIncrement()) {
                        long due = start + (long) (i * 1e9 / rate);
                        if (System.nanoTime() > end) {
                            return null; // the step is over: what was not sent is the shortfall
                        }
                        LockSupport.parkNanos(due - System.nanoTime()); // open loop: each submission at its due time
                        String body = "{\"workspace\":\"c" + i % WORKSPACES + "\",\"job\":\"tick\",\"labels\":{\"slipstream.io/simulated-duration\":\""
                                + (30 + random.nextInt(91)) + "s\"}}";
                        TestServer.Response created = server.post("/api/v1/runs", admin, body);
                        if (created.status() != 201) {
                            failed.incrementAndGet();
                            continue;
                        }
                        submitted.incrementAndGet();
                        if (i % 10 == 0) {
                            sampled.add(created.json().get("id").asString());
                        }
                    }
                    return null;
                }));
            }
            // The API under the load, once a second: a page of runs and one run.
            while (System.nanoTime() < end) {
                long t = System.nanoTime();
                server.get("/api/v1/runs?workspace=c1&limit=50", admin);
                listMillis.add((System.nanoTime() - t) / 1e6);
                if (!sampled.isEmpty()) {
                    String id = sampled.get(sampled.size() - 1);
                    t = System.nanoTime();
                    server.get("/api/v1/runs/" + id, admin);
                    getMillis.add((System.nanoTime() - t) / 1e6);
                }
                Thread.sleep(1_000); // pacing the probe, not waiting for a condition
            }
            for (Future<?> future : sent) {
                future.get();
            }
        } finally {
            clients.shutdownNow();
            for (HttpResponse<InputStream> watch : watches) {
                watch.body().close();
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        CpuShares cpuAfter = CpuShares.now();
        String after = metrics(server, admin);
        // Submit to running of the sampled runs; one not running yet counts as waiting until now.
        List<Double> toRunning = new ArrayList<>();
        Instant now = Instant.now();
        for (String id : sampled) {
            JsonNode run = server.get("/api/v1/runs/" + id, admin).json();
            Instant created = Instant.parse(run.get("createdAt").asString());
            JsonNode started = run.get("startedAt");
            Instant at = started == null || started.isNull() ? now : Instant.parse(started.asString());
            toRunning.add(Duration.between(created, at).toNanos() / 1e6);
        }
        int queued = (int) value(QUEUED, after);
        double cycles = value(CYCLE_COUNT, after) - value(CYCLE_COUNT, before);
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("offeredPerSecond", rate);
        row.put("submittedPerSecond", round(submitted.get() / seconds));
        row.put("failedSubmissions", failed.get());
        row.put("queuedAtEnd", queued);
        row.put("submitToRunningP50Millis", round(percentile(toRunning, 50)));
        row.put("submitToRunningP99Millis", round(percentile(toRunning, 99)));
        row.put("cycles", (int) cycles);
        row.put("cycleMeanMillis", cycles == 0 ? null : round((value(CYCLE_SUM, after) - value(CYCLE_SUM, before)) / cycles * 1000));
        row.put("getRunsP99Millis", round(percentile(listMillis, 99)));
        row.put("getRunP99Millis", round(percentile(getMillis, 99)));
        row.put("watchP99Millis", round(percentile(new ArrayList<>(watchLags), 99)));
        // CPU per run submitted in the step (it runs and ends within about a step at a rate kept), the clients' included.
        row.put("cpuMillisPerRun", cpuAfter.perRunSince(cpuBefore, submitted.get()));
        System.gc();
        row.put("heapAfterFullGcMB", ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() >> 20);
        row.put("residentMB", residentMegabytes());
        row.put("storeMB", storeMegabytes(server.dataDir(), false));
        row.put("keptPace", submitted.get() >= offered * 0.95 && queued < rate * 2);
        return row;
    }

    /** From each {@code run} event of a run that runs: how long after its start the stream told of it. */
    private static void readWatch(InputStream body, ConcurrentLinkedQueue<Double> lags) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.startsWith("data: ") && line.contains("\"state\":\"RUNNING\"")) {
                    JsonNode run = Json.mapper().readTree(line.substring(6));
                    JsonNode started = run.get("startedAt");
                    if (started != null && !started.isNull()) {
                        lags.add(Duration.between(Instant.parse(started.asString()), Instant.now()).toNanos() / 1e6);
                    }
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            // the stream closed at the step's end
        }
    }
}
