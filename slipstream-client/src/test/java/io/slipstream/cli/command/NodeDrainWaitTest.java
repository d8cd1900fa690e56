package io.slipstream.cli.command;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.slipstream.cli.ApiClient;
import io.slipstream.cli.CliException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@code node drain --wait} against a stub server whose node reads Draining a few times, then Cordoned (or never). */
class NodeDrainWaitTest {
    private HttpServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
    }

    /** Answers GET of node-1 with each of {@code states} in turn (as {@code STATE/INSTANCES}), the last one from then on. */
    private ApiClient serverWhoseNodeReads(List<String> states) throws IOException {
        AtomicInteger polls = new AtomicInteger();
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/api/v1/nodes/node-1", exchange -> {
            String[] now = states.get(Math.min(polls.getAndIncrement(), states.size() - 1)).split("/");
            byte[] body = ("{\"name\":\"node-1\",\"state\":\"" + now[0] + "\",\"reason\":\"by admin: kernel upgrade\",\"instances\":" + now[1] + "}")
                    .getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        return new ApiClient(URI.create("http://127.0.0.1:" + server.getAddress().getPort()), "t", notice -> {
        });
    }

    @Test
    void waitsUntilNothingRunsThereAndSaysHowManyAreLeftOnTheWay() throws IOException {
        ApiClient api = serverWhoseNodeReads(List.of("Draining/2", "Draining/2", "Draining/1", "Cordoned/0"));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = NodeDrainWait.await(api, "node-1", null, new PrintWriter(out), new PrintWriter(err), pause -> {
        }, Clock.systemUTC());
        assertThat(exit).isZero();
        assertThat(err.toString()).isEqualTo("node node-1: Draining, 2 instance(s) there\nnode node-1: Draining, 1 instance(s) there\n");
        assertThat(out.toString()).isEqualTo("node node-1 is Cordoned (by admin: kernel upgrade)\n");
    }

    @Test
    void stopsWaitingAtItsTimeoutAndTheDrainGoesOn() throws IOException {
        ApiClient api = serverWhoseNodeReads(List.of("Draining/3"));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        // Each pause moves the clock on by what it would have slept: no real time passes.
        Instant[] now = {Instant.parse("2026-12-06T00:00:00Z")};
        Clock clock = new Clock() {
            @Override
            public ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return now[0];
            }
        };
        int exit = NodeDrainWait.await(api, "node-1", Duration.ofSeconds(1), new PrintWriter(out), new PrintWriter(err),
                pause -> now[0] = now[0].plus(pause), clock);
        assertThat(exit).isEqualTo(CliException.TIMED_OUT);
        assertThat(err.toString()).contains("stopped waiting after").contains("the drain goes on");
        assertThat(out.toString()).startsWith("node node-1 is Draining (by admin: kernel upgrade)\n3 instance(s) there are being stopped");
    }

    @Test
    void aTimeoutIsCheckedBeforeAnythingIsSent() {
        assertThat(Watch.timeout(false, null)).isNull();
        assertThat(Watch.timeout(true, "10m")).isEqualTo(Duration.ofMinutes(10));
        assertThatThrownBy(() -> Watch.timeout(false, "10m")).hasMessage("--timeout needs --wait");
        assertThatThrownBy(() -> Watch.timeout(true, "soon")).hasMessageStartingWith("--timeout: ");
        assertThatThrownBy(() -> Watch.timeout(true, "0s")).hasMessage("--timeout: must be longer than 0s");
    }
}
