package io.slipstream.server.support;

import io.slipstream.api.codec.Json;
import io.slipstream.server.SlipstreamServer;
import io.slipstream.server.config.ConfigReader;
import io.slipstream.server.config.ServerConfig;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.Function;
import tools.jackson.databind.JsonNode;

/**
 * A real server on a free port over a temporary data dir, and an HTTP client for it. {@link #start} gives it the
 * embedded H2 store and the real local executor (processes); {@link #startInMemory} the in-memory store and a lifelike
 * fake executor, for suites of the API itself (authorization, validation, listings) that run no workload: the same
 * HTTP, authentication and services, without a store file or a process per instance.
 */
public final class TestServer implements AutoCloseable {
    private final SlipstreamServer server;
    /** HTTP/1.1, as the CLI and SDK speak it (see ApiClient). */
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final String adminToken;
    private final Path dataDir;
    /** The fake executor of a server started in memory; {@code null} for one with the real executor. */
    private final io.slipstream.executor.testing.FakeExecutor fake;

    private TestServer(SlipstreamServer server, Path dataDir) throws IOException {
        this(server, dataDir, null);
    }

    private TestServer(SlipstreamServer server, Path dataDir, io.slipstream.executor.testing.FakeExecutor fake) throws IOException {
        this.server = server;
        this.dataDir = dataDir;
        this.fake = fake;
        this.adminToken = Files.readString(server.adminTokenFile(), StandardCharsets.UTF_8).trim();
    }

    public static TestServer start(Path dataDir) {
        return start(dataDir, config -> config);
    }

    public static TestServer start(Path dataDir, Function<ServerConfig, ServerConfig> customize) {
        return start(dataDir, customize, SlipstreamServer.systemClock());
    }

    /** A server on {@code clock} (a {@link ShiftedClock}, say, to make tokens that have expired). */
    public static TestServer start(Path dataDir, Function<ServerConfig, ServerConfig> customize, java.time.Clock clock) {
        ServerConfig config = customize.apply(defaults(dataDir));
        LeftInstances.watch(dataDir);
        try {
            TestServer started = new TestServer(SlipstreamServer.start(config, clock), dataDir);
            LeftInstances.opened(started);
            return started;
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * A server over the in-memory store and a lifelike fake executor (four nodes of 8 GPUs): instances start at once,
     * run until they are stopped, and print nothing. Nothing outlives it; a restart would start empty.
     */
    public static TestServer startInMemory(Path dataDir) {
        return startInMemory(dataDir, SlipstreamServer.systemClock());
    }

    /** {@link #startInMemory(Path)} on {@code clock}. */
    public static TestServer startInMemory(Path dataDir, java.time.Clock clock) {
        return startOnFakeNodes(defaults(dataDir).withStore(new InMemoryPlugins.MemorySettings()), dataDir, clock);
    }

    /**
     * The fake executor's four nodes of 8 GPUs, as {@link #startInMemory}, over the embedded H2 store of the data
     * directory: for what the database stores do their own way (usage rolled up as segments close).
     */
    public static TestServer startOnH2(Path dataDir, java.time.Clock clock) {
        return startOnFakeNodes(defaults(dataDir), dataDir, clock);
    }

    private static TestServer startOnFakeNodes(ServerConfig store, Path dataDir, java.time.Clock clock) {
        ServerConfig config = store.withExecutor(new InMemoryPlugins.FakeSettings());
        var made = new java.util.concurrent.atomic.AtomicReference<io.slipstream.executor.testing.FakeExecutor>();
        try {
            return new TestServer(SlipstreamServer.start(config, clock, InMemoryPlugins.plugins(made)), dataDir, made.get());
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static ServerConfig defaults(Path dataDir) {
        return ConfigReader.defaults(dataDir).withPort(0).withLimits(io.slipstream.server.config.RunLimits.DEFAULTS.withGracePeriod(Duration.ofSeconds(5)));
    }

    /** The fake executor of a server {@link #startInMemory started in memory}: a test ends its instances as it likes. */
    public io.slipstream.executor.testing.FakeExecutor fakeExecutor() {
        if (fake == null) {
            throw new IllegalStateException("a server with the real executor has no fake one");
        }
        return fake;
    }

    public SlipstreamServer server() {
        return server;
    }

    public String adminToken() {
        return adminToken;
    }

    public Path dataDir() {
        return dataDir;
    }

    /** A response: status, body as text, and body as JSON when it is JSON. */
    public record Response(int status, String text, String contentType, java.net.http.HttpHeaders headers) {
        public JsonNode json() {
            return Json.mapper().readTree(text);
        }
    }

    public Response call(String method, String path, String token, String body, String contentType) {
        return call(method, path, token, body, contentType, java.util.Map.of());
    }

    public Response call(String method, String path, String token, String body, String contentType, java.util.Map<String, String> headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.url() + path)).timeout(Duration.ofSeconds(60));
        headers.forEach(request::header);
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        if (body != null) {
            request.header("Content-Type", contentType);
            request.method(method, HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        } else {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return send(request);
    }

    private Response send(HttpRequest.Builder request) {
        try {
            HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            return new Response(response.statusCode(), response.body(), response.headers().firstValue("Content-Type").orElse(""),
                    response.headers());
        } catch (IOException e) {
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** A call with a body of raw bytes, which need not be text in any encoding. */
    public Response callBytes(String method, String path, String token, byte[] body, String contentType) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.url() + path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", contentType)
                .method(method, HttpRequest.BodyPublishers.ofByteArray(body));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return send(request);
    }

    /**
     * The status of a GET of {@code target} sent as is, byte for byte, on a socket: for request targets that a URI
     * refuses to hold (a broken escape like {@code %ZZ}, bytes that are not UTF-8).
     */
    public int rawGet(String target, String token) {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", server.port())) {
            socket.setSoTimeout(60_000);
            String request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token + "\r\nConnection: close\r\n\r\n";
            socket.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            socket.getOutputStream().flush();
            String statusLine = new java.io.BufferedReader(new java.io.InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1))
                    .readLine();
            if (statusLine == null || !statusLine.startsWith("HTTP/1.1 ")) {
                throw new AssertionError("no HTTP response to GET " + target + ": " + statusLine);
            }
            return Integer.parseInt(statusLine.substring(9, 12));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    public Response get(String path, String token) {
        return call("GET", path, token, null, null);
    }

    public Response post(String path, String token, String body) {
        return call("POST", path, token, body, body.stripLeading().startsWith("{") || body.stripLeading().startsWith("[") ? "application/json" : "application/yaml");
    }

    /** Creates a user's token (through the API, as an admin would) and returns its secret. */
    public String tokenFor(String user) {
        Response response = post("/api/v1/tokens", adminToken, Json.mapper().writeValueAsString(Map.of("user", user)));
        if (response.status() != 201) {
            throw new AssertionError("token creation failed: " + response.text());
        }
        return response.json().get("token").asString();
    }

    /** Polls a run until {@code done} holds for it, with a deadline. */
    public JsonNode awaitRun(String token, String runId, java.util.function.Predicate<JsonNode> done) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        JsonNode run = null;
        while (System.nanoTime() < deadline) {
            run = get("/api/v1/runs/" + runId, token).json();
            if (done.test(run)) {
                return run;
            }
            try {
                Thread.sleep(20); // polling with a deadline
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
        throw new AssertionError("run " + runId + " never reached the expected state; last seen: " + run);
    }

    public JsonNode awaitState(String token, String runId, String state) {
        return awaitRun(token, runId, run -> run.get("state").asString().equals(state));
    }

    @Override
    public void close() {
        server.close();
        LeftInstances.closed(this); // a no-op for one started in memory: it was never watched
    }
}
