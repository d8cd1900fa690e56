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
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import tools.jackson.databind.JsonNode;

/**
 * The real server as the benchmarks run it: {@code java -jar slipstream.jar server} in a process of its own, over one
 * data directory and configuration, with what a client of its API needs (the admin token, submitting, counting and
 * cancelling runs of the workspace {@code bench}).
 */
final class ServerProcess {
    static final Path JAR = Path.of(System.getProperty("bench.jar", "../slipstream-cli/target/slipstream.jar")).toAbsolutePath().normalize();
    /** The server's JVM options, as {@code ./slipstream server} passes them; left out with {@code -Dbench.serverOptions=false}. */
    static final Path SERVER_OPTIONS = Path.of("../slipstream-cli/src/main/jvm/server.options").toAbsolutePath().normalize();

    private final Path scratch;
    private final Path dataDir;
    private final Path config;
    private final int port;
    private final List<String> javaOptions;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private String admin;

    /** @param configuration the server's configuration, with {@code %d} where its port goes */
    ServerProcess(Path scratch, String configuration, List<String> javaOptions) throws IOException {
        if (!Files.isRegularFile(JAR)) {
            throw new AssertionError(JAR + " is missing: build it first (mvn -DskipTests package, or bench/run)");
        }
        this.scratch = scratch;
        // As a data directory such as /var/lib/slipstream: other users may pass, so a root server gives instances uids.
        Files.setPosixFilePermissions(scratch, java.nio.file.attribute.PosixFilePermissions.fromString("rwx--x--x"));
        this.dataDir = scratch.resolve("data");
        this.config = scratch.resolve("server.yaml");
        this.javaOptions = List.copyOf(javaOptions);
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        Files.writeString(config, configuration.formatted(port));
    }

    /** The server's own options (unless left out), then those of {@code -Dbench.java.opts}, which win. */
    static List<String> options(String javaOpts) {
        List<String> options = new ArrayList<>();
        if (Boolean.parseBoolean(System.getProperty("bench.serverOptions", "true"))) {
            options.add("@" + SERVER_OPTIONS);
        }
        if (!javaOpts.isBlank()) {
            options.addAll(List.of(javaOpts.trim().split("\\s+")));
        }
        return options;
    }

    /** The options as the JVM reads them: an argument file's options in its place. */
    static List<String> expanded(List<String> options) throws IOException {
        List<String> expanded = new ArrayList<>();
        for (String option : options) {
            if (option.startsWith("@")) {
                Files.readAllLines(Path.of(option.substring(1)), StandardCharsets.UTF_8).stream().map(String::trim)
                        .filter(line -> !line.isEmpty() && !line.startsWith("#")).forEach(expanded::add);
            } else {
                expanded.add(option);
            }
        }
        return expanded;
    }

    Process start(List<String> options) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(options);
        command.addAll(javaOptions);
        command.addAll(List.of("-jar", JAR.toString(), "server", "--data-dir", dataDir.toString(), "--config", config.toString()));
        return new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log().toFile()))
                .start();
    }

    Path log() {
        return scratch.resolve("server.log");
    }

    void awaitReady(Process server, Duration limit) throws Exception {
        long deadline = System.nanoTime() + limit.toNanos();
        while (true) {
            if (!server.isAlive()) {
                throw new AssertionError("the server exited (" + server.exitValue() + "): " + tail());
            }
            try {
                HttpResponse<Void> ready = http.send(HttpRequest.newBuilder(uri("/readyz")).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.discarding());
                if (ready.statusCode() == 200) {
                    if (admin == null) {
                        admin = Files.readString(dataDir.resolve("admin.token"), StandardCharsets.UTF_8).trim();
                    }
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
    void awaitFirstCycle(Duration limit) throws Exception {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!Json.mapper().readTree(get("/readyz").body()).has("lastCycleAt")) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no cycle completed within " + limit);
            }
            Thread.sleep(5); // polling with a deadline
        }
    }

    static void stop(Process server) throws InterruptedException {
        server.destroy(); // SIGTERM: the server closes the store and leaves its instances running
        if (!server.waitFor(60, TimeUnit.SECONDS)) {
            server.destroyForcibly();
            server.waitFor();
        }
    }

    /** The workspace {@code bench} and its job {@code sleeper}: one instance of {@code sleep 3600} on one cpu. */
    void applySleeper() throws Exception {
        HttpResponse<String> applied = post("/api/v1/apply", """
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
        if (applied.statusCode() >= 300) {
            throw new AssertionError("apply failed: " + applied.statusCode() + " " + applied.body());
        }
    }

    /** Submits {@code count} runs of the job from {@code clients} clients at once; their ids are added to {@code ids}. */
    void submit(String job, int count, int clients, List<String> ids) throws Exception {
        // Connections of its own: the server closes idle ones, and a POST on one it just closed fails.
        HttpClient fresh = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        ExecutorService senders = Executors.newFixedThreadPool(clients);
        try {
            List<Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                sent.add(senders.submit(() -> {
                    HttpResponse<String> created = post(fresh, "/api/v1/runs", "{\"workspace\":\"bench\",\"job\":\"" + job + "\"}", "application/json");
                    if (created.statusCode() != 201) {
                        throw new AssertionError("submit failed: " + created.statusCode() + " " + created.body());
                    }
                    ids.add(Json.mapper().readTree(created.body()).get("id").asString());
                    return null;
                }));
            }
            for (Future<?> future : sent) {
                future.get();
            }
        } finally {
            senders.shutdown();
        }
    }

    /**
     * Cancels every run of the workspace {@code bench} the server lists as not ended (those of a submission whose
     * answer was lost too), page by page, until none is left or 5 minutes have passed.
     */
    void cancelAll() throws Exception {
        HttpClient fresh = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        while (count("QUEUED,STARTING,RUNNING,TERMINATING") > 0 && System.nanoTime() < deadline) {
            JsonNode page = Json.mapper().readTree(get("/api/v1/runs?workspace=bench&state=QUEUED,STARTING,RUNNING&limit=500").body()).get("items");
            if (page == null || page.isEmpty()) {
                Thread.sleep(200); // only TERMINATING left: polling with a deadline
                continue;
            }
            for (JsonNode run : page) {
                String id = run.get("id").asString();
                try {
                    post(fresh, "/api/v1/runs/" + id + "/cancel", "{}", "application/json");
                } catch (IOException closed) { // cancelling twice is harmless
                    post(fresh, "/api/v1/runs/" + id + "/cancel", "{}", "application/json");
                }
            }
        }
    }

    /** Whether any run of the workspace {@code bench} is in one of these states: 0 or 1. */
    int count(String states) throws Exception {
        HttpResponse<String> response = get("/api/v1/runs?workspace=bench&state=" + states + "&limit=1");
        JsonNode items = Json.mapper().readTree(response.body()).get("items");
        return items == null ? 0 : items.size();
    }

    /** Tried again once if the connection was closed under it (GET is safe to repeat). */
    HttpResponse<String> get(String path) throws Exception {
        try {
            return getOnce(path);
        } catch (IOException closed) {
            return getOnce(path);
        }
    }

    private HttpResponse<String> getOnce(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(uri(path)).header("Authorization", "Bearer " + admin).timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    HttpResponse<String> post(String path, String body, String contentType) throws Exception {
        return post(http, path, body, contentType);
    }

    private HttpResponse<String> post(HttpClient client, String path, String body, String contentType) throws Exception {
        return client.send(HttpRequest.newBuilder(uri(path)).header("Authorization", "Bearer " + admin).header("Content-Type", contentType)
                .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8)).build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    String tail() {
        try {
            String text = Files.readString(log(), StandardCharsets.UTF_8);
            return text.substring(Math.max(0, text.length() - 2000));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }
}
