package io.slipstream.cli.command;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.slipstream.cli.ApiClient;
import java.io.BufferedReader;
import java.io.OutputStream;
import java.io.StringReader;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** --watch waits on the server's watch stream, and polls every interval where the server has none (404). */
class StreamPauseTest {
    private HttpServer server;
    private final List<Duration> slept = new ArrayList<>();
    private final Watch.Pause recording = slept::add;

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
    }

    private ApiClient serve(int status, String body, AtomicInteger opened) throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/api/v1/watch", exchange -> {
            opened.incrementAndGet();
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", status == 200 ? "text/event-stream" : "application/json");
            exchange.sendResponseHeaders(status, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        server.start();
        return new ApiClient(URI.create("http://127.0.0.1:" + server.getAddress().getPort()), "ss_test");
    }

    @Test
    void aServerWithoutTheStreamIsPolledEveryInterval() throws Exception {
        AtomicInteger opened = new AtomicInteger();
        ApiClient api = serve(404, "{\"status\":404,\"code\":\"NOT_FOUND\",\"message\":\"no such route\"}", opened);
        try (StreamPause pause = new StreamPause(api, Map.of("workspace", "team-a"), recording)) {
            pause.sleep(Duration.ofSeconds(2));
            pause.sleep(Duration.ofSeconds(2));
        }
        assertThat(slept).containsExactly(Duration.ofSeconds(2), Duration.ofSeconds(2));
        assertThat(opened).as("asked once, then polled").hasValue(1);
    }

    @Test
    void eachEventEndsAPauseAndAnEndedStreamIsOpenedAgain() throws Exception {
        AtomicInteger opened = new AtomicInteger();
        ApiClient api = serve(200, "event: ready\ndata: {\"runs\": 1}\n\n: heartbeat\n\nevent: run\nid: r\ndata: {}\n\nevent: end\ndata: {}\n\n", opened);
        try (StreamPause pause = new StreamPause(api, Map.of("run", "r"), recording)) {
            pause.sleep(Duration.ofSeconds(2)); // ready
            pause.sleep(Duration.ofSeconds(2)); // run
            pause.sleep(Duration.ofSeconds(2)); // end: closed, no wait
            assertThat(slept).isEmpty();
            pause.sleep(Duration.ofSeconds(2)); // opened again: ready
        }
        assertThat(opened).hasValue(2);
        assertThat(slept).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "a typed event|event: run\\ndata: {}\\n\\n|run",
            "comments are skipped|: heartbeat\\n\\nevent: ready\\ndata: {}\\n\\n|ready",
            "the stream's end|: heartbeat\\n\\n|"})
    void nextEventIsTheTypeOfTheNextCompleteEvent(String name, String text, String type) throws Exception {
        assertThat(StreamPause.nextEvent(new BufferedReader(new StringReader(text.replace("\\n", "\n"))))).isEqualTo(type);
    }
}
