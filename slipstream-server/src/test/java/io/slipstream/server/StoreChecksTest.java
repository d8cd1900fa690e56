package io.slipstream.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.OptionalLong;
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
