package io.slipstream.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.RunId;
import io.slipstream.store.Store;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every write the embedded store acknowledged survives a {@code kill -9} of its process. H2's default background
 * commit lost whole tables this way; the store opens H2 with {@code WRITE_DELAY=0}, and this test holds it to that.
 */
class H2DurabilityTest {
    @TempDir
    Path dataDir;

    @Test
    void acknowledgedWritesSurviveKillMinus9() throws Exception {
        killAfter("1", 200);
    }

    /**
     * Commits of several threads at once, killed while they go on: H2 writes what one commit gathered and may leave a
     * concurrent commit's changes for the next write, which the kill may cut short.
     */
    @Test
    void acknowledgedConcurrentWritesSurviveKillMinus9WhileOthersAreWritten() throws Exception {
        for (int round = 0; round < 5; round++) {
            killAfter("8", 50 + 40 * round);
        }
    }

    /** Kills the writer once it acknowledged {@code acks} runs (of 10,000: it is still writing), then checks them. */
    private void killAfter(String threads, int acks) throws Exception {
        Process writer = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), H2Writer.class.getName(), dataDir.toString(), acks == 200 && threads.equals("1") ? "200" : "10000", threads)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        List<RunId> acknowledged = new ArrayList<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(writer.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while (acknowledged.size() < acks && (line = out.readLine()) != null && !line.equals("done")) {
                acknowledged.add(new RunId(line.substring("acked ".length())));
            }
        } finally {
            writer.destroyForcibly(); // SIGKILL, at once: no shutdown hook, no close
            writer.waitFor(30, TimeUnit.SECONDS);
        }
        assertThat(acknowledged).hasSize(acks);
        try (Store store = JdbcStore.openH2(dataDir)) {
            for (RunId id : acknowledged) {
                assertThat(store.getRun(id)).as("acknowledged run %s", id).isPresent();
            }
        }
    }
}
