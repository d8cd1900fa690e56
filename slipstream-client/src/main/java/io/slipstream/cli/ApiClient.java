package io.slipstream.cli;

import io.slipstream.api.codec.Json;
import io.slipstream.api.wire.ErrorView;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectReader;

/**
 * The CLI's HTTP client of the API. Errors become {@link CliException}s with the documented exit codes. While the
 * server's store cannot be reached (503 {@code STORE_UNAVAILABLE}), a request is sent again after the server's
 * Retry-After, for up to {@link #STORE_RETRY_FOR}, and the user is told once: such a request changed nothing (or, a
 * commit whose answer was lost, carries an idempotency key), so sending it again is safe.
 */
public final class ApiClient {
    /** How long a command waits for the store to come back before it gives up. */
    static final Duration STORE_RETRY_FOR = Duration.ofMinutes(2);
    private static final String STORE_UNAVAILABLE = "STORE_UNAVAILABLE";

    /**
     * HTTP/1.1, which the server speaks: the JDK's default offers an upgrade to HTTP/2 on every request, which the
     * server ignores (and with that client Jetty was seen answering a request twice: docs/api.md).
     */
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
    private final URI server;
    private final String token;
    private final java.util.function.Consumer<String> notices;

    public ApiClient(URI server, String token) {
        this(server, token, System.err::println);
    }

    /** @param notices where what the user should know while waiting goes (a line each) */
    public ApiClient(URI server, String token, java.util.function.Consumer<String> notices) {
        this.server = server;
        this.token = token;
        this.notices = notices;
    }

    public URI server() {
        return server;
    }

    /** Reads JSON leniently: a newer server may add fields this CLI does not know yet. */
    public static <T> T read(JsonNode node, Class<T> type) {
        ObjectReader reader = Json.mapper().readerFor(type).without(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        return reader.readValue(node);
    }

    public JsonNode get(String path, Map<String, String> query) {
        return send(request(path, query).GET().build());
    }

    public JsonNode get(String path) {
        return get(path, Map.of());
    }

    public JsonNode post(String path, byte[] body, String contentType) {
        return send(request(path, Map.of()).header("Content-Type", contentType).POST(HttpRequest.BodyPublishers.ofByteArray(body)).build());
    }

    public JsonNode postJson(String path, Object body) {
        return post(path, Json.mapper().writeValueAsBytes(body), "application/json");
    }

    /**
     * Posts with an {@code Idempotency-Key}: the server answers a repeat with what the first request did, so a request
     * whose response was lost (the connection broke, the server restarted) is safely sent again, a few times.
     */
    public JsonNode postJsonIdempotently(String path, Object body, String idempotencyKey) {
        return postIdempotently(path, body, idempotencyKey).body();
    }

    /** The answer to an idempotent post; {@code replayed}: the server answered with what an earlier request with the key did. */
    public record Posted(JsonNode body, boolean replayed) {
    }

    public Posted postIdempotently(String path, Object body, String idempotencyKey) {
        byte[] bytes = Json.mapper().writeValueAsBytes(body);
        IOException last = null;
        for (int attempt = 0; attempt < 4; attempt++) {
            HttpRequest request = request(path, Map.of()).header("Content-Type", "application/json").header("Idempotency-Key", idempotencyKey)
                    .POST(HttpRequest.BodyPublishers.ofByteArray(bytes)).build();
            try {
                HttpResponse<byte[]> response = exchange(request);
                return new Posted(bodyOf(response), response.headers().firstValue("Idempotent-Replayed").map("true"::equals).orElse(false));
            } catch (IOException e) {
                last = e;
                pause(250L << attempt);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CliException(CliException.UNREACHABLE, "interrupted");
            }
        }
        throw unreachable(last);
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public void delete(String path) {
        send(request(path, Map.of()).DELETE().build());
    }

    /** Opens a streaming response (logs); the caller closes the stream. */
    public InputStream stream(String path, Map<String, String> query) {
        return open(path, query, false);
    }

    /** As {@link #stream}, but {@code null} where the server answers 404 (an older server without the route). */
    public InputStream streamIfServed(String path, Map<String, String> query) {
        return open(path, query, true);
    }

    private InputStream open(String path, Map<String, String> query, boolean nullIfNotFound) {
        HttpRequest request = request(path, query).GET().build();
        try {
            StoreWait wait = new StoreWait();
            while (true) {
                HttpResponse<InputStream> response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
                if (response.statusCode() < 400) {
                    return response.body();
                }
                if (response.statusCode() == 404 && nullIfNotFound) {
                    response.body().close();
                    return null;
                }
                byte[] body;
                try (InputStream in = response.body()) {
                    body = in.readAllBytes();
                }
                wait.orThrow(response.statusCode(), response.headers(), body);
            }
        } catch (IOException e) {
            throw unreachable(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException(CliException.UNREACHABLE, "interrupted");
        }
    }

    /**
     * Posts without a body and writes the answer to {@code target}: whole or not at all (a temporary file beside it,
     * renamed once every byte the server announced has come). Returns the number of bytes written.
     */
    public long postForFile(String path, java.nio.file.Path target) {
        HttpRequest request = request(path, Map.of()).POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofHours(2)).build();
        java.nio.file.Path temporary = target.resolveSibling("." + target.getFileName() + ".part");
        try {
            HttpResponse<InputStream> response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
            try (InputStream in = response.body()) {
                if (response.statusCode() >= 400) {
                    throw failure(response.statusCode(), in.readAllBytes());
                }
                long written;
                try {
                    try (var out = java.nio.file.Files.newOutputStream(temporary)) {
                        written = in.transferTo(out);
                    }
                    long announced = response.headers().firstValueAsLong("Content-Length").orElse(written);
                    if (written != announced) {
                        throw new IOException("the server sent " + written + " of " + announced + " bytes");
                    }
                    try (var channel = java.nio.channels.FileChannel.open(temporary, java.nio.file.StandardOpenOption.WRITE)) {
                        channel.force(true);
                    }
                    java.nio.file.Files.move(temporary, target, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                            java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                } catch (IOException e) {
                    throw new CliException(CliException.RUN_FAILED, "nothing was written to " + target + ": " + e.getMessage());
                }
                return written;
            }
        } catch (IOException e) {
            throw unreachable(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException(CliException.UNREACHABLE, "interrupted");
        } finally {
            try {
                java.nio.file.Files.deleteIfExists(temporary);
            } catch (IOException ignored) {
                // a leftover .part file is named as one
            }
        }
    }

    private HttpRequest.Builder request(String path, Map<String, String> query) {
        Map<String, String> present = new LinkedHashMap<>();
        query.forEach((k, v) -> {
            if (v != null) {
                present.put(k, v);
            }
        });
        String queryString = present.isEmpty() ? "" : "?" + present.entrySet().stream()
                .map(e -> URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8) + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        HttpRequest.Builder builder = HttpRequest.newBuilder(server.resolve(path + queryString)).timeout(Duration.ofMinutes(2));
        if (token != null) {
            builder.header("Authorization", "Bearer " + token);
        }
        return builder;
    }

    /** Sends until an answer other than the store being unavailable comes (or {@link #STORE_RETRY_FOR} passed). */
    private JsonNode sendOnce(HttpRequest request) throws IOException, InterruptedException {
        return bodyOf(exchange(request));
    }

    /** The first answer below 400, waiting out a store outage; throws the failure otherwise. */
    private HttpResponse<byte[]> exchange(HttpRequest request) throws IOException, InterruptedException {
        StoreWait wait = new StoreWait();
        while (true) {
            HttpResponse<byte[]> response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
            if (response.statusCode() < 400) {
                warnings(response.headers());
                return response;
            }
            wait.orThrow(response.statusCode(), response.headers(), response.body());
        }
    }

    /** Prints the server's warnings ({@code Warning: 299 slipstream "text"}), as kubectl does. */
    private void warnings(java.net.http.HttpHeaders headers) {
        for (String value : headers.allValues("Warning")) {
            int open = value.indexOf('"');
            String text = open >= 0 && value.endsWith("\"") && value.length() > open + 1 ? value.substring(open + 1, value.length() - 1) : value;
            notices.accept("Warning: " + text.replace("\\\"", "\"").replace("\\\\", "\\"));
        }
    }

    private static JsonNode bodyOf(HttpResponse<byte[]> response) {
        if (response.statusCode() == 204 || response.body().length == 0) {
            return Json.mapper().nullNode();
        }
        return Json.mapper().readTree(response.body());
    }

    /** One request's wait for the store: tells the user once, waits as the server asks, gives up in the end. */
    private final class StoreWait {
        private final long deadline = System.nanoTime() + STORE_RETRY_FOR.toNanos();
        private boolean told;

        /** Returns after a pause if the request is to be sent again; throws the failure otherwise. */
        void orThrow(int status, java.net.http.HttpHeaders headers, byte[] body) throws InterruptedException {
            CliException failure = failure(status, body);
            if (status != 503 || !STORE_UNAVAILABLE.equals(codeOf(body))) {
                throw failure;
            }
            if (System.nanoTime() > deadline) {
                throw new CliException(CliException.UNREACHABLE, "the server's store is still unavailable after "
                        + STORE_RETRY_FOR.toMinutes() + " min: " + failure.getMessage());
            }
            if (!told) {
                notices.accept("store unavailable, retrying (" + server + " answered: " + failure.getMessage() + ")");
                told = true;
            }
            Thread.sleep(retryAfterMillis(headers));
        }
    }

    /** The server's Retry-After in seconds, kept between 1 and 10 (a missing or odd value: 2). */
    static long retryAfterMillis(java.net.http.HttpHeaders headers) {
        long seconds;
        try {
            seconds = Long.parseLong(headers.firstValue("Retry-After").orElse("2").trim());
        } catch (NumberFormatException e) {
            seconds = 2;
        }
        return Math.max(1, Math.min(10, seconds)) * 1000;
    }

    private static String codeOf(byte[] body) {
        try {
            JsonNode code = Json.mapper().readTree(body).get("code");
            return code == null ? null : code.asString();
        } catch (RuntimeException e) {
            return null;
        }
    }

    private JsonNode send(HttpRequest request) {
        try {
            return sendOnce(request);
        } catch (IOException e) {
            throw unreachable(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException(CliException.UNREACHABLE, "interrupted");
        }
    }

    private CliException unreachable(IOException e) {
        String why = e instanceof ConnectException || e instanceof HttpConnectTimeoutException
                ? "is it running? start it with: " + Hints.command() + " server"
                : e.getMessage();
        return new CliException(CliException.UNREACHABLE, "cannot reach the Slipstream server at " + server + ": " + why);
    }

    private static CliException failure(int status, byte[] body) {
        ErrorView error;
        try {
            error = read(Json.mapper().readTree(body), ErrorView.class);
        } catch (RuntimeException e) {
            error = new ErrorView(status, "HTTP_" + status, new String(body, StandardCharsets.UTF_8), null);
        }
        int exitCode = status >= 500 ? CliException.RUN_FAILED : CliException.REJECTED;
        String message = status == 401 ? error.message() + " (pass --token, set SLIPSTREAM_TOKEN, or run where the server's data dir is)"
                : error.message();
        return new CliException(exitCode, message, error.problems());
    }
}
