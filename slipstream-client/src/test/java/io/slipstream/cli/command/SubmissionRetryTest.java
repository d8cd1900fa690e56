package io.slipstream.cli.command;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.slipstream.cli.ApiClient;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A submission whose commit succeeded but whose answer was lost with the store's connection is answered
 * 503 STORE_UNAVAILABLE (the server cannot know it committed). The CLI sends it again once the store is back: that
 * repeat must not start a second run, also when the user gave no --idempotency-key.
 */
class SubmissionRetryTest {
    private HttpServer server;
    /** The runs the fake server created, by the key they were created under (a fresh one for a request without). */
    private final Map<String, String> runsByKey = new ConcurrentHashMap<>();
    private final List<String> keysSent = new CopyOnWriteArrayList<>();
    private final AtomicInteger created = new AtomicInteger();

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
    }

    /** A server whose first submission commits and then loses its answer (503), like a store connection cut at commit. */
    private ApiClient serverThatLosesTheFirstAnswer() throws IOException {
        AtomicInteger requests = new AtomicInteger();
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/api/v1/runs", exchange -> {
            String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
            keysSent.add(String.valueOf(key));
            boolean replay = key != null && runsByKey.containsKey(key);
            String id = replay ? runsByKey.get(key) : "job-" + created.incrementAndGet();
            runsByKey.putIfAbsent(key == null ? "none-" + id : key, id);
            boolean lost = requests.incrementAndGet() == 1;
            String json = lost
                    ? "{\"status\":503,\"code\":\"STORE_UNAVAILABLE\",\"message\":\"the store cannot be reached now; try again shortly\"}"
                    : "{\"id\":\"" + id + "\",\"job\":\"job\",\"workspace\":\"team\",\"jobVersion\":1,\"state\":\"QUEUED\"}";
            byte[] body = json.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            if (lost) {
                exchange.getResponseHeaders().add("Retry-After", "1");
            }
            exchange.sendResponseHeaders(lost ? 503 : replay ? 200 : 201, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        return new ApiClient(URI.create("http://127.0.0.1:" + server.getAddress().getPort()), "t", notice -> {
        });
    }

    @Test
    void aSubmissionSentAgainAfterAStoreOutageStartsOneRun() throws IOException {
        ApiClient api = serverThatLosesTheFirstAnswer();
        RunOptions options = new RunOptions();
        var run = options.start(api, "team", "job", new PrintWriter(new StringWriter()));
        assertThat(keysSent).as("sent twice: once lost, once answered").hasSize(2);
        assertThat(created).as("runs the server started for one 'slipstream submit'").hasValue(1);
        assertThat(run.id()).isEqualTo("job-1");
        assertThat(keysSent.get(0)).as("the repeat carries the first request's key").isEqualTo(keysSent.get(1)).isNotEqualTo("null");
    }

    @Test
    void theUsersOwnKeyIsKept() throws IOException {
        ApiClient api = serverThatLosesTheFirstAnswer();
        RunOptions options = new RunOptions();
        options.idempotencyKey = "nightly-2026-12-01";
        options.start(api, "team", "job", new PrintWriter(new StringWriter()));
        assertThat(keysSent).containsExactly("nightly-2026-12-01", "nightly-2026-12-01");
        assertThat(created).hasValue(1);
    }
}
