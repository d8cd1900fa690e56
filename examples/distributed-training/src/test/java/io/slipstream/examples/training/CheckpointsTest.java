package io.slipstream.examples.training;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckpointsTest {
    @TempDir
    Path dir;

    @Test
    void theNewestWholeCheckpointIsFoundAndOnlyTheLastFewAreKept() throws Exception {
        Checkpoints checkpoints = new Checkpoints(io.slipstream.sdk.Slipstream.of(java.util.Map.of("SLIPSTREAM_CHECKPOINT_DIR", dir.toString())).checkpoints(3));
        for (int step = 1; step <= 5; step++) {
            checkpoints.save(step * 100L, new double[] {step, step + 0.5});
        }
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString()).sorted().toList())
                    .containsExactly("step-0000000000000000300.ckpt", "step-0000000000000000400.ckpt", "step-0000000000000000500.ckpt");
        }
        assertThat(checkpoints.latest(2)).hasValueSatisfying(c -> {
            assertThat(c.step()).isEqualTo(500);
            assertThat(c.parameters()).containsExactly(5, 5.5);
        });
        assertThat(checkpoints.latest(3)).as("another model's checkpoints do not count").isEmpty();
    }

    @Test
    void aDamagedCheckpointIsSkipped() throws Exception {
        Checkpoints checkpoints = new Checkpoints(io.slipstream.sdk.Slipstream.of(java.util.Map.of("SLIPSTREAM_CHECKPOINT_DIR", dir.toString())).checkpoints(3));
        checkpoints.save(100, new double[] {1, 2});
        checkpoints.save(200, new double[] {3, 4});
        Path newest = dir.resolve("step-0000000000000000200.ckpt");
        byte[] bytes = Files.readAllBytes(newest);
        bytes[20] ^= 1;
        Files.write(newest, bytes);
        assertThat(checkpoints.latest(2)).hasValueSatisfying(c -> assertThat(c.step()).isEqualTo(100));
    }
}
