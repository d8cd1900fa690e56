package io.slipstream.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProgressTest {
    @TempDir
    Path dir;

    /** A clock the test moves. */
    static final class MovingClock extends Clock {
        Instant now = Instant.parse("2026-11-29T10:00:00Z");

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
            return now;
        }
    }

    @Test
    void reportsAreWrittenAtMostOnceASecond() throws Exception {
        MovingClock clock = new MovingClock();
        Path file = dir.resolve("progress.json");
        Progress progress = new Progress(file, clock);

        progress.report(1, Map.of("loss", 2.5, "nan", Double.NaN));
        progress.report(2, Map.of("loss", 2.0));
        assertThat(Json.mapper().readTree(Files.readString(file)).path("step").asLong()).isEqualTo(1);

        clock.now = clock.now.plus(Duration.ofSeconds(1));
        progress.report(3, Map.of("loss", 1.5));
        var node = Json.mapper().readTree(Files.readString(file));
        assertThat(node.path("step").asLong()).isEqualTo(3);
        assertThat(node.path("metrics").path("loss").asDouble()).isEqualTo(1.5);
        assertThat(node.path("time").asString()).isEqualTo("2026-11-29T10:00:01Z");
        assertThat(node.has("checkpointStep")).isFalse();
    }

    @Test
    void withoutAFileReportsGoToTheApiWithTheRunsToken() throws Exception {
        java.util.concurrent.BlockingQueue<String[]> received = new java.util.concurrent.LinkedBlockingQueue<>();
        com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            received.add(new String[] {exchange.getRequestMethod() + " " + exchange.getRequestURI(),
                    exchange.getRequestHeaders().getFirst("Authorization"), new String(exchange.getRequestBody().readAllBytes(),
                    java.nio.charset.StandardCharsets.UTF_8)});
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });
        server.start();
        try {
            Slipstream slipstream = new Slipstream(Map.of("SLIPSTREAM_RUN_ID", "train-x1", "SLIPSTREAM_RANK", "2",
                    "SLIPSTREAM_SERVER", "http://127.0.0.1:" + server.getAddress().getPort() + "/", "SLIPSTREAM_RUN_TOKEN", "ss_secret"),
                    new MovingClock());
            slipstream.progress().checkpointed(40);
            String[] request = received.poll(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(request).isNotNull();
            assertThat(request[0]).isEqualTo("POST /api/v1/runs/train-x1/instances/2/progress");
            assertThat(request[1]).isEqualTo("Bearer ss_secret");
            var node = Json.mapper().readTree(request[2]);
            assertThat(node.path("step").asLong()).isEqualTo(40);
            assertThat(node.path("checkpointStep").asLong()).isEqualTo(40);
            assertThat(node.path("checkpointTime").asString()).isEqualTo("2026-11-29T10:00:00Z");
        } finally {
            server.stop(0);
        }
    }

    @Test
    void aServerThatCannotBeReachedDoesNotFailTheWorkload() {
        Slipstream slipstream = new Slipstream(Map.of("SLIPSTREAM_RUN_ID", "train-x1", "SLIPSTREAM_SERVER", "http://127.0.0.1:1",
                "SLIPSTREAM_RUN_TOKEN", "ss_secret"), new MovingClock());
        slipstream.progress().checkpointed(1);
        slipstream.progress().report(2, Map.of());
    }

    @Test
    void outsideSlipstreamReportsGoNowhere() {
        new Progress(null, new MovingClock()).report(1, Map.of());
        new Progress(null, new MovingClock()).checkpointed(1);
    }
}
