package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * How the CLI meets a server whose store is down: it says "store unavailable, retrying" once, waits as Retry-After
 * asks, and carries on when the store is back. Other errors, a 503 of another kind among them, are not retried.
 */
class ApiClientStoreOutageTest {
    private static final String UNAVAILABLE = "{\"status\":503,\"code\":\"STORE_UNAVAILABLE\",\"message\":\"the store cannot be reached now; try again shortly\"}";

    private HttpServer server;
    private final AtomicInteger requests = new AtomicInteger();
    private final List<String> notices = new CopyOnWriteArrayList<>();

    /** Answers the first {@code outage} requests with 503 STORE_UNAVAILABLE (or {@code otherFailure}), then 200. */
    private ApiClient serverWithOutage(int outage, String failureBody) throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            boolean down = requests.incrementAndGet() <= outage;
            byte[] body = (down ? failureBody : "{\"user\":\"admin\"}").getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            if (down) {
                exchange.getResponseHeaders().add("Retry-After", "1");
            }
            exchange.sendResponseHeaders(down ? 503 : 200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        return new ApiClient(URI.create("http://127.0.0.1:" + server.getAddress().getPort()), "t", notices::add);
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
    }

    @Test
    void aStoreOutageIsWaitedOutWithOneNotice() throws IOException {
        ApiClient client = serverWithOutage(2, UNAVAILABLE);
        assertThat(client.get("/api/v1/whoami").get("user").asString()).isEqualTo("admin");
        assertThat(requests).hasValue(3);
        assertThat(notices).hasSize(1);
        assertThat(notices.get(0)).startsWith("store unavailable, retrying");
    }

    @Test
    void streamsWaitToo() throws IOException {
        ApiClient client = serverWithOutage(1, UNAVAILABLE);
        try (var in = client.stream("/api/v1/runs/x/logs", java.util.Map.of())) {
            assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).contains("admin");
        }
        assertThat(notices).hasSize(1);
    }

    @Test
    void anotherServiceUnavailableIsNotRetried() throws IOException {
        ApiClient client = serverWithOutage(1, "{\"status\":503,\"code\":\"HTTP_503\",\"message\":\"down for maintenance\"}");
        assertThatThrownBy(() -> client.get("/api/v1/whoami")).isInstanceOf(CliException.class).hasMessageContaining("maintenance");
        assertThat(requests).hasValue(1);
        assertThat(notices).isEmpty();
    }

    @Test
    void retryAfterIsKeptWithinBounds() {
        assertThat(ApiClient.retryAfterMillis(headers("0"))).isEqualTo(1000);
        assertThat(ApiClient.retryAfterMillis(headers("3"))).isEqualTo(3000);
        assertThat(ApiClient.retryAfterMillis(headers("3600"))).isEqualTo(10_000);
        assertThat(ApiClient.retryAfterMillis(headers("Wed, 21 Oct 2015 07:28:00 GMT"))).isEqualTo(2000);
    }

    private static java.net.http.HttpHeaders headers(String retryAfter) {
        return java.net.http.HttpHeaders.of(java.util.Map.of("Retry-After", List.of(retryAfter)), (a, b) -> true);
    }
}
