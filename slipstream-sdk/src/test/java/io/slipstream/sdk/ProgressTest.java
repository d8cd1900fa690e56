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
    void outsideSlipstreamReportsGoNowhere() {
        new Progress(null, new MovingClock()).report(1, Map.of());
        new Progress(null, new MovingClock()).checkpointed(1);
    }
}
