package io.slipstream.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckpointsTest {
    @TempDir
    Path dir;

    private Slipstream slipstream() {
        return new Slipstream(Map.of("SLIPSTREAM_CHECKPOINT_DIR", dir.resolve("ckpt").toString(), "SLIPSTREAM_PROGRESS_FILE",
                dir.resolve("progress.json").toString()), Clock.fixed(Instant.parse("2026-11-29T10:00:00Z"), ZoneOffset.UTC));
    }

    @Test
    void theNewestCompleteCheckpointIsFoundAndOnlyTheLastFewAreKept() throws Exception {
        Checkpoints checkpoints = slipstream().checkpoints(2);
        assertThat(checkpoints.latest()).isEmpty();
        for (long step = 100; step <= 400; step += 100) {
            checkpoints.save(step, ("weights at " + step).getBytes(StandardCharsets.UTF_8));
        }
        assertThat(checkpoints.latest()).hasValueSatisfying(c -> {
            assertThat(c.step()).isEqualTo(400);
            assertThat(new String(c.data(), StandardCharsets.UTF_8)).isEqualTo("weights at 400");
        });
        try (var files = Files.list(dir.resolve("ckpt"))) {
            assertThat(files.map(p -> p.getFileName().toString()).sorted())
                    .containsExactly(Checkpoints.fileName(300), Checkpoints.fileName(400));
        }
    }

    @Test
    void aDamagedOrHalfWrittenCheckpointIsSkipped() throws Exception {
        Checkpoints checkpoints = slipstream().checkpoints(5);
        checkpoints.save(10, new byte[] {1, 2, 3});
        checkpoints.save(20, new byte[] {4, 5, 6});
        Path newest = dir.resolve("ckpt").resolve(Checkpoints.fileName(20));
        byte[] torn = Files.readAllBytes(newest);
        torn[torn.length - 10] ^= 0x5a; // a bit flipped on disk
        Files.write(newest, torn);
        Files.write(dir.resolve("ckpt").resolve("." + Checkpoints.fileName(30) + ".tmp"), new byte[] {9}); // a crash mid-save
        Files.write(dir.resolve("ckpt").resolve(Checkpoints.fileName(40)), new byte[] {1, 2}); // truncated

        assertThat(checkpoints.latest()).hasValueSatisfying(c -> {
            assertThat(c.step()).isEqualTo(10);
            assertThat(c.data()).containsExactly(1, 2, 3);
        });
    }

    @Test
    void aSaveIsReportedAsProgressAtOnce() throws Exception {
        Slipstream slipstream = slipstream();
        slipstream.progress().report(7, Map.of("loss", 0.5));
        slipstream.checkpoints(1).save(8, new byte[0]); // within the same second: still written

        var progress = Json.mapper().readTree(Files.readString(dir.resolve("progress.json")));
        assertThat(progress.path("step").asLong()).isEqualTo(8);
        assertThat(progress.path("checkpointStep").asLong()).isEqualTo(8);
        assertThat(progress.path("checkpointTime").asString()).isEqualTo("2026-11-29T10:00:00Z");
    }
}
