package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.cli.SlipstreamProcess.Server;
import io.slipstream.testing.NoProcessLeftBehind;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Chaos with the real server and processes, and {@link ChaosInvariants} checked after every fault: a seeded crash
 * loop of {@code kill -9} under load on the embedded store, with submissions retried under their idempotency keys
 * whenever an answer was lost; and a PostgreSQL outage under load. Leader kill -9 and SIGSTOP/SIGCONT with a second
 * replica are {@code ReplicasIT}'s. The crash points themselves, every store call of a cycle with executor failures
 * between them, are {@code ControlLoopChaosTest}'s (server, in process, thousands of crashes in seconds): this test
 * keeps what only real processes show (a real {@code kill -9}, the launcher, H2's file, adoption by pid), so CI runs it
 * small, 3 kills under 150 runs. Its full size, 8 kills under 500 runs (200 running, 300 queued), is the profile
 * {@code chaos-full} ({@code mvn -B verify -pl slipstream-cli -am -Pchaos-full -Dit.test=ChaosIT}); longer still:
 * {@code -Dchaos.kills=20 -Dchaos.runs=1000} (docs/operations.md has their figures).
 */
@ExtendWith(NoProcessLeftBehind.class)
class ChaosIT {
    private static final long SEED = Long.getLong("chaos.seed", 16);
    private static final int KILLS = Integer.getInteger("chaos.kills", 3);
    private static final int RUNS = Integer.getInteger("chaos.runs", 150);
    private static final Duration SETTLE = Duration.ofMinutes(5);

    @TempDir
    Path work;

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void aCrashLoopUnderLoadLosesNothingAndStartsNothingTwice() throws Exception {
        Random random = new Random(SEED);
        String workspace = "chaos-" + Long.toString(System.nanoTime() % 1_000_000, 36);
        Path config = Files.writeString(work.resolve("chaos.yaml"), """
                instances: {gracePeriod: 2s}
                nodes:
                  - {namePrefix: node, count: 10, cpu: 20, memory: 200Gi}
                  - {namePrefix: quota-node, count: 2, cpu: 20, memory: 200Gi}
                """);
        Path data = work.resolve("data");
        Server server = SlipstreamProcess.startServer(data, "--config", config.toString());
        List<Path> logs = new ArrayList<>(List.of(server.log()));
        String token = server.adminToken();
        ChaosInvariants invariants = new ChaosInvariants(server.url(), token, workspace);
        ChaosInvariants quotas = new ChaosInvariants(server.url(), token, workspace + "-q");
        Submitter submitter = new Submitter(invariants, token, workspace, RUNS, random.nextLong());
        long started = System.nanoTime();
        try {
            send(server.url(), token, "POST", "/api/v1/apply", "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: " + workspace + "}\n", null, Duration.ofSeconds(30));
            List<String> quotaRuns = startQuotaRuns(server, token, workspace + "-q", quotas);
            submitter.start(server.url());
            List<String> load = new ArrayList<>();
            for (int kill = 1; kill <= KILLS; kill++) {
                TimeUnit.MILLISECONDS.sleep(300 + random.nextInt(2_500)); // a fault at a seeded, random moment
                load.add(load(invariants));
                server.kill9();
                server = SlipstreamProcess.startServer(data, "--config", config.toString());
                logs.add(server.log());
                submitter.at(server.url());
                invariants.at(server.url());
                invariants.check("after kill " + kill);
                quotas.at(server.url());
                quotas.check("after kill " + kill);
                quotas.checkQuotaUsage("after kill " + kill, 4_000);
            }
            submitter.finish();
            for (String id : quotaRuns) {
                send(server.url(), token, "POST", "/api/v1/runs/" + id + "/cancel", "{}", null, Duration.ofSeconds(30));
            }
            awaitEveryRunEnded(quotas);
            awaitEveryRunEnded(invariants);
            quotas.checkSettled("quota runs settled");
            invariants.checkSettled("settled");
            Map<String, JsonNode> runs = invariants.runs();
            long ours = runs.values().stream().filter(run -> run.get("workspace").asString().equals(workspace)).count();
            assertThat(ours).as("one run per idempotency key, however often its submission was retried").isEqualTo(RUNS);
            // Every run SUCCEEDED on its first attempt; what did not is printed with its story (events, log lines) first.
            List<String> unsuccessful = new ArrayList<>();
            for (String id : invariants.acknowledgedRuns()) {
                JsonNode run = runs.get(id);
                if (!run.get("state").asString().equals("SUCCEEDED") || run.get("attempt").asInt() != 1) {
                    unsuccessful.add(id);
                    System.out.println("did not succeed at once: " + run + "\n  events: " + invariants.get("/api/v1/runs/" + id + "/events"));
                    for (Path log : logs) {
                        Files.readAllLines(log).stream().filter(line -> line.contains(id)).forEach(line -> System.out.println("  " + log.getFileName() + ": " + line));
                    }
                }
            }
            System.out.printf("crash loop: %d runs, %d kills -9 (running/queued at each: %s), %d submissions retried, settled after %d s,"
                            + " %d not SUCCEEDED on their first attempt (seed %d)%n",
                    RUNS, KILLS, String.join(" ", load), submitter.retries.get(), (System.nanoTime() - started) / 1_000_000_000,
                    unsuccessful.size(), SEED);
            assertThat(unsuccessful).as("runs that did not succeed on their first attempt (printed above)").isEmpty();
        } catch (Throwable e) {
            for (Path log : logs) {
                System.out.println("warnings and errors of " + log.getFileName() + ":\n" + warningsAndErrors(log));
            }
            System.out.println("server log (" + server.log() + "):\n" + tail(server.log()));
            if (System.getProperty("chaos.keep") != null) {
                server.kill9();
                new ProcessBuilder("cp", "-a", work.toString(), System.getProperty("chaos.keep")).inheritIO().start().waitFor();
            }
            throw e;
        } finally {
            submitter.stop();
            closeKeepingTheFailure(server);
        }
    }

    @Test
    void aStoreOutageUnderLoadLosesNothing() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        Path pgData = work.resolve("pg");
        EmbeddedPostgres postgres = durablePostgres(port, pgData);
        String workspace = "outage-" + Long.toString(System.nanoTime() % 1_000_000, 36);
        Path config = Files.writeString(work.resolve("outage.yaml"), """
                store: {url: "%s", username: postgres}
                instances: {gracePeriod: 2s}
                nodes:
                  - {namePrefix: node, count: 2, cpu: 10, memory: 100Gi}
                """.formatted(postgres.getJdbcUrl("postgres", "postgres")));
        Server server = SlipstreamProcess.startServer(work.resolve("outage-data"), "--config", config.toString());
        String token = server.adminToken();
        ChaosInvariants invariants = new ChaosInvariants(server.url(), token, workspace);
        Submitter submitter = new Submitter(invariants, token, workspace, 60, SEED);
        try {
            send(server.url(), token, "POST", "/api/v1/apply", "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: " + workspace + "}\n", null, Duration.ofSeconds(30));
            // A commit whose answer the client never waited for, sent again with its key: one run, not two.
            String once = job(workspace, "once", 1);
            try {
                send(server.url(), token, "POST", "/api/v1/runs", once, "once-key", Duration.ofMillis(1));
            } catch (java.net.http.HttpTimeoutException expected) {
                // gave up before the answer came
            }
            JsonNode replayed = Json.mapper().readTree(send(server.url(), token, "POST", "/api/v1/runs", once, "once-key", Duration.ofSeconds(30)));
            invariants.acknowledged(replayed.get("id").asString());

            submitter.start(server.url());
            server.awaitRun(replayed.get("id").asString(), Duration.ofSeconds(60), token, r -> !r.get("state").asString().equals("QUEUED"));
            postgres.close();
            awaitReadiness(server, 503);
            TimeUnit.SECONDS.sleep(3); // the outage lasts a while: submissions get 503s and retry, instances end meanwhile
            postgres = durablePostgres(port, pgData);
            awaitReadiness(server, 200);
            invariants.check("after the outage");
            submitter.finish();
            awaitEveryRunEnded(invariants);
            invariants.checkSettled("settled");
            Map<String, JsonNode> runs = invariants.runs();
            assertThat(runs.values().stream().filter(run -> run.get("job").asString().equals("once"))).as("runs of the key once-key").hasSize(1);
            for (String id : invariants.acknowledgedRuns()) {
                assertThat(runs.get(id).get("state").asString()).as("run %s", id).isEqualTo("SUCCEEDED");
            }
        } catch (Throwable e) {
            System.out.println("server log (" + server.log() + "):\n" + tail(server.log()));
            throw e;
        } finally {
            submitter.stop();
            closeKeepingTheFailure(server);
            postgres.close();
        }
    }

    /**
     * Long runs on quotas, whose usage {@link ChaosInvariants#checkQuotaUsage} checks after every kill: a tree
     * {@code org} with children {@code a} (16 cpu guaranteed, 2 runs of 4) and {@code b} (24 cpu, 8 runs of 4 that may
     * borrow): b's last two borrow what a leaves unused. They are all running before the load starts, so that
     * none of them has to reclaim anything from it.
     */
    private List<String> startQuotaRuns(Server server, String token, String workspace, ChaosInvariants quotas) throws Exception {
        StringBuilder documents = new StringBuilder("""
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: %1$s}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: org, workspace: %1$s}
                spec: {min: {cpu: 40, memory: 40Gi}}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: a, workspace: %1$s}
                spec: {parent: org, min: {cpu: 16, memory: 16Gi}}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: b, workspace: %1$s}
                spec: {parent: org, min: {cpu: 24, memory: 24Gi}}
                """.formatted(workspace));
        for (String quota : List.of("a", "b")) {
            documents.append("""
                    ---
                    apiVersion: slipstream/v1
                    kind: Job
                    metadata: {name: %s, workspace: %s}
                    spec:
                      quota: %s
                      idleResources: Acceptable
                      nodeGroups:
                        - {name: main, resources: {cpu: 4, memory: 1Gi}, command: ["sleep", "900"]}
                    """.formatted(quota, workspace, quota));
        }
        send(server.url(), token, "POST", "/api/v1/apply", documents.toString(), null, Duration.ofSeconds(30));
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            String body = "{\"workspace\": \"" + workspace + "\", \"job\": \"" + (i < 2 ? "a" : "b") + "\"}";
            ids.add(Json.mapper().readTree(send(server.url(), token, "POST", "/api/v1/runs", body, workspace + "-" + i, Duration.ofSeconds(30)))
                    .get("id").asString());
        }
        ids.forEach(quotas::acknowledged);
        for (String id : ids) {
            server.awaitRun(id, Duration.ofSeconds(60), token, r -> r.get("state").asString().equals("RUNNING"));
        }
        quotas.checkQuotaUsage("quota runs started", 4_000);
        return ids;
    }

    /** Running and queued runs now, as "running/queued". */
    private static String load(ChaosInvariants invariants) throws IOException, InterruptedException {
        Map<String, JsonNode> runs = invariants.runs();
        long running = runs.values().stream().filter(r -> r.get("state").asString().equals("RUNNING")).count();
        long queued = runs.values().stream().filter(r -> r.get("state").asString().equals("QUEUED")).count();
        return running + "/" + queued;
    }

    /** The start of a line the server logged (its time); the lines of a stack trace have none. */
    private static final java.util.regex.Pattern LOGGED_LINE = java.util.regex.Pattern.compile("\\d{2}:\\d{2}:\\d{2}\\.\\d{3} ");

    /** Every server's WARN and ERROR lines with what follows them (a stack trace): the failure may be an earlier server's. */
    private static String warningsAndErrors(Path log) throws IOException {
        List<String> lines = Files.readAllLines(log);
        List<String> kept = new ArrayList<>();
        for (int i = 0; i < lines.size() && kept.size() < 200; i++) {
            String line = lines.get(i);
            if (line.contains(" WARN ") || line.contains(" ERROR ")) {
                kept.add(line);
                // The exception's own line has no timestamp either: everything up to the next logged line belongs to it.
                for (int j = i + 1; j < lines.size() && j <= i + 15 && !LOGGED_LINE.matcher(lines.get(j)).lookingAt(); j++) {
                    kept.add(lines.get(j));
                }
            }
        }
        return String.join("\n", kept);
    }

    private static String tail(Path log) throws IOException {
        List<String> lines = Files.readAllLines(log);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 80), lines.size()));
    }

    /** Stops the server (cancelling what still runs); a failure there is printed, not thrown over the test's own. */
    private static void closeKeepingTheFailure(Server server) {
        try {
            server.close();
        } catch (Throwable e) {
            System.out.println("stopping the server failed: " + e);
            server.process().destroyForcibly();
        }
    }

    private void awaitReadiness(Server server, int status) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            HttpResponse<String> ready = http.send(HttpRequest.newBuilder(URI.create(server.url() + "/readyz")).build(), HttpResponse.BodyHandlers.ofString());
            if (ready.statusCode() == status) {
                return;
            }
            assertThat(System.nanoTime()).as("/readyz never answered %d", status).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(100); // polling with a deadline
        }
    }

    private static void awaitEveryRunEnded(ChaosInvariants invariants) throws Exception {
        long deadline = System.nanoTime() + SETTLE.toNanos();
        while (true) {
            Map<String, JsonNode> runs = invariants.runs();
            long active = invariants.acknowledgedRuns().stream()
                    .filter(id -> !io.slipstream.api.run.RunState.valueOf(runs.get(id).get("state").asString()).isFinal()).count();
            if (active == 0) {
                return;
            }
            assertThat(System.nanoTime()).as("%d runs still active after %s", active, SETTLE).isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(500); // polling with a deadline
        }
    }

    /** A PostgreSQL that keeps what it acknowledged: the embedded one turns fsync and synchronous commits off by default. */
    static EmbeddedPostgres durablePostgres(int port, Path dir) throws IOException {
        return EmbeddedPostgres.builder().setLocaleConfig("locale", "C").setPort(port).setDataDirectory(dir).setCleanDataDirectory(false)
                .setServerConfig("fsync", "on").setServerConfig("synchronous_commit", "on").setServerConfig("full_page_writes", "on").start();
    }

    static String job(String workspace, String name, int seconds) {
        return """
                {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "%s", "workspace": "%s"},
                 "spec": {"nodeGroups": [{"name": "main", "resources": {"cpu": 1, "memory": "1Gi"},
                  "command": ["sh", "-c", "echo started; exec sleep %d"]}]}}}
                """.formatted(name, workspace, seconds);
    }

    private String send(String server, String token, String method, String path, String body, String key, Duration timeout)
            throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server + path)).timeout(timeout)
                .header("Authorization", "Bearer " + token)
                .header("Content-Type", body.startsWith("{") ? "application/json" : "application/yaml")
                .method(method, HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("%s %s: %s", method, path, response.body()).isIn(200, 201);
        return response.body();
    }

    /**
     * Submits {@code count} runs from 8 threads, each with an idempotency key of its own, and sends a submission
     * again (same key) until it is acknowledged: the server was down, answered 503, or the answer was lost in a kill.
     */
    private static final class Submitter {
        private final ChaosInvariants invariants;
        private final String token;
        private final String workspace;
        private final int count;
        private final long seed;
        private final HttpClient http = HttpClient.newHttpClient();
        private final ExecutorService threads = Executors.newFixedThreadPool(8);
        private final List<Future<?>> work = new ArrayList<>();
        private final AtomicInteger retries = new AtomicInteger();
        private volatile String server;
        private volatile boolean stopped;

        Submitter(ChaosInvariants invariants, String token, String workspace, int count, long seed) {
            this.invariants = invariants;
            this.token = token;
            this.workspace = workspace;
            this.count = count;
            this.seed = seed;
        }

        void at(String url) {
            server = url;
        }

        void start(String url) {
            server = url;
            Random random = new Random(seed);
            for (int i = 0; i < count; i++) {
                String body = job(workspace, "chaos-" + i, 2 + random.nextInt(14));
                String key = workspace + "-" + i;
                work.add(threads.submit(() -> {
                    submit(body, key);
                    return null;
                }));
            }
        }

        private void submit(String body, String key) throws InterruptedException {
            while (!stopped) {
                try {
                    HttpRequest request = HttpRequest.newBuilder(URI.create(server + "/api/v1/runs")).timeout(Duration.ofSeconds(30))
                            .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                            .header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.ofString(body)).build();
                    HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
                    if (response.statusCode() == 200 || response.statusCode() == 201) {
                        invariants.acknowledged(Json.mapper().readTree(response.body()).get("id").asString());
                        return;
                    }
                    assertThat(response.statusCode()).as("a submission: %s", response.body()).isEqualTo(503);
                } catch (IOException lost) {
                    // the server is down or died before answering: send it again
                }
                retries.incrementAndGet();
                TimeUnit.MILLISECONDS.sleep(200); // the server is being restarted: try again shortly
            }
        }

        /** Waits until every run is acknowledged. */
        void finish() throws Exception {
            for (Future<?> submission : work) {
                submission.get(5, TimeUnit.MINUTES);
            }
        }

        void stop() {
            stopped = true;
            threads.shutdownNow();
        }
    }
}
