package io.slipstream.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.RunId;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The decisions of the start's store checks, as tables. */
class StoreChecksTest {
    private static final Path DATA = Path.of("/data");

    @ParameterizedTest(name = "store {0}, recorded {1}: refused {2}")
    @CsvSource(nullValues = "-", value = {
            "0, -, false",   // a data directory from before watermarks, or a new one
            "5, -, false",
            "5, 5, false",   // stopped cleanly: the last value recorded is the store's
            "6, 5, false",   // the record lags the store (a crash between commit and record)
            "4, 5, true",    // the store lost writes the data directory saw
            "0, 5, true",    // a store without the counter where the data directory saw one
    })
    void aStoreBelowTheRecordedWatermarkIsRefused(long stored, Long recorded, boolean refused) {
        String problem = StoreWatermark.problem(stored, recorded == null ? OptionalLong.empty() : OptionalLong.of(recorded),
                DATA.resolve(StoreWatermark.FILE), "/data/store/slipstream.mv.db");
        if (refused) {
            assertThat(problem).contains("/data/store/slipstream.mv.db").contains("truncated or replaced by an older copy")
                    .contains("slipstream store restore FILE --data-dir /data").contains("--accept-older-store");
        } else {
            assertThat(problem).isNull();
        }
    }

    @Test
    void theRunDirectoriesTheStoreDoesNotKnowAreFoundNewestFirst(@TempDir Path dir) throws Exception {
        Path instances = dir.resolve("instances");
        List<String> runs = List.of("a-00000001", "b-00000002", "c-00000003", "d-00000004");
        for (int i = 0; i < runs.size(); i++) {
            Files.createDirectories(instances.resolve(runs.get(i)));
            Files.setLastModifiedTime(instances.resolve(runs.get(i)), FileTime.fromMillis(1_000_000L * (i + 1)));
        }
        Files.createDirectories(instances.resolve(".trash").resolve("e-00000005")); // retention's: not a run directory
        Set<String> known = Set.of("a-00000001", "c-00000003");
        Predicate<RunId> knows = id -> known.contains(id.value());
        assertThat(StoreHistory.unknownRuns(instances, knows, 10)).containsExactly("d-00000004", "b-00000002");
        assertThat(StoreHistory.unknownRuns(instances, knows, 1)).as("the newest only").containsExactly("d-00000004");
        assertThat(StoreHistory.unknownRuns(dir.resolve("none"), knows, 10)).isEmpty();
        assertThat(StoreHistory.problem(List.of(), "/s", instances)).isNull();
        assertThat(StoreHistory.problem(List.of("d-00000004", "b-00000002"), "/s", instances))
                .contains("does not know 2 run(s) that ran here (d-00000004, b-00000002, in " + instances + ")")
                .contains("--accept-older-store");
    }

    @ParameterizedTest(name = "exists {0}, size {1}, history {2}: {3}")
    @CsvSource(nullValues = "-", value = {
            "false, 0,    false, -",          // a first start: H2 makes the store
            "true,  0,    false, -",
            "true,  4096, true,  -",
            "false, 0,    true,  is missing",
            "true,  0,    true,  is empty (0 bytes)",
    })
    void aMissingOrEmptyStoreFileIsRefusedWhereTheDataDirectoryHasHistory(boolean exists, long size, boolean history, String says) {
        Path file = DATA.resolve("store").resolve("slipstream.mv.db");
        String problem = EmbeddedStoreFile.problem(file, exists, size, history, DATA);
        if (says == null) {
            assertThat(problem).isNull();
        } else {
            assertThat(problem).contains(file.toString()).contains(says).contains("Nothing was created in its place")
                    .contains("slipstream store restore FILE --data-dir /data");
        }
    }
}
