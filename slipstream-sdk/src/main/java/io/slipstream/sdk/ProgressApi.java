package io.slipstream.sdk;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Sends progress reports to the Slipstream API with the run's own token, where no progress file is given (Kubernetes:
 * the control plane cannot read files in pods). A report that cannot be delivered is dropped, with one line on stderr
 * the first time: progress is advice to the platform, never a reason for a workload to fail.
 */
final class ProgressApi {
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final URI uri;
    private final String token;
    /** HTTP/1.1, which the server speaks (not the JDK's default offer of an upgrade to HTTP/2 on every request). */
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(TIMEOUT).build();
    private boolean warned;

    /** The API of {@code server} for instance {@code rank} of run {@code runId}. */
    ProgressApi(String server, String runId, int rank, String token) {
        String base = server.endsWith("/") ? server.substring(0, server.length() - 1) : server;
        this.uri = URI.create(base + "/api/v1/runs/" + runId + "/instances/" + rank + "/progress");
        this.token = token;
    }

    /** Where a workload's environment says to report, or {@code null} when it says nothing of the API. */
    static ProgressApi of(Environment env) {
        String server = env.get("SLIPSTREAM_SERVER");
        String token = env.get("SLIPSTREAM_RUN_TOKEN");
        String run = env.get("SLIPSTREAM_RUN_ID");
        if (server == null || token == null || run == null) {
            return null;
        }
        return new ProgressApi(server, run, env.integer("SLIPSTREAM_RANK", 0), token);
    }

    void send(String json) {
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(TIMEOUT)
                .header("Authorization", "Bearer " + token)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8))
                .build();
        try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            if (response.statusCode() >= 300) {
                warnOnce("the server refused a progress report (" + response.statusCode() + "): " + response.body());
            }
        } catch (IOException e) {
            warnOnce("cannot reach the server to report progress: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private synchronized void warnOnce(String message) {
        if (!warned) {
            warned = true;
            System.err.println("slipstream sdk: " + message + " (further failures are not shown)");
        }
    }
}
