package io.slipstream.store.jdbc.h2;

import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.model.EventType;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import io.slipstream.store.StoreDamagedException;
import io.slipstream.store.jdbc.JdbcStore;
import io.slipstream.store.jdbc.JdbcStoreFactory;
import io.slipstream.store.jdbc.JdbcStoreSettings;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Optional;
import org.h2.tools.RunScript;
import org.h2.tools.Script;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class H2IndexesTest {
    @TempDir
    Path dataDir;

    /**
     * Every index of the schema is read through itself (else its check would pass whatever it held), and a store
     * written as usual has none damaged.
     */
    @Test
    void everyIndexOfTheSchemaIsReadThroughItselfAndNoneIsDamagedInAWholeStore() throws Exception {
        try (Store store = JdbcStore.openH2(dataDir)) {
            for (int i = 0; i < 3; i++) {
                RunRecord run = RunRecord.queued(RunId.newFor("whole"), "team-a", "whole", 1, aJob("whole").spec(), Instant.now());
                RunRecord created = store.write(tx -> tx.createRun(run, RunEvent.of(run.id(), run.createdAt(), EventType.StateChanged, "QUEUED", "Submitted", null, null)));
                if (i == 0) {
                    store.write(tx -> tx.updateRun(created.moveTo(RunState.CANCELLED, "Cancelled", Instant.now())));
                }
            }
        }
        try (Connection connection = DriverManager.getConnection(EmbeddedH2.url(storeDir()) + ";IFEXISTS=TRUE;ACCESS_MODE_DATA=r", "sa", "");
             Statement statement = connection.createStatement()) {
            var indexes = H2Indexes.of(statement);
            assertThat(indexes).extracting(H2Indexes.Index::name).contains("runs_active", "runs_by_idempotency_key", "usage_segments_open");
            for (H2Indexes.Index index : indexes) {
                assertThat(plan(connection, index.read(" IS NULL"), null)).as(index.toString()).contains("/* public." + index.name() + ":");
                assertThat(plan(connection, index.read(" >= ?"), "0")).as(index.toString()).contains("/* public." + index.name() + ":");
            }
            assertThat(H2Indexes.damaged(connection)).isEmpty();
        }
    }

    /**
     * The store a {@code kill -9} left in ChaosIT before {@link OneWriterAtATime} (its runs' indexes, and one of its
     * events', name a row their table lacks): refused as it is, left byte for byte as found; rebuilt from its tables as docs/operations.md says, it is
     * served.
     */
    @Test
    void aStoreWhoseIndexesACrashDamagedIsRefusedAsItIsAndServedOnceTheyAreRebuilt() throws Exception {
        Path zip = dataDir.resolve("damaged.zip");
        try (InputStream fixture = getClass().getResourceAsStream("/damaged/indexes-after-kill.zip")) {
            Files.copy(fixture, zip);
        }
        H2Backup.extract(zip, storeDir());
        String before = sha256(EmbeddedH2.file(storeDir()));

        assertThatThrownBy(() -> openToCheck()).isInstanceOf(StoreDamagedException.class)
                .hasMessageContaining("the index runs_by_idempotency_key of the table runs holds 451 rows, the table 450")
                .hasMessageContaining("rebuild the indexes");
        assertThat(sha256(EmbeddedH2.file(storeDir()))).as("the refused store is left as it was").isEqualTo(before);

        // docs/operations.md, "A damaged index": the tables written out, and read into a new file
        Path script = dataDir.resolve("store.sql");
        Script.process(EmbeddedH2.url(storeDir()) + ";IFEXISTS=TRUE", "sa", "", script.toString(), "", "");
        Files.move(EmbeddedH2.file(storeDir()), storeDir().resolve(EmbeddedH2.FILE + ".damaged"));
        RunScript.execute(EmbeddedH2.url(storeDir()), "sa", "", script.toString(), StandardCharsets.UTF_8, false);

        Optional<Store> rebuilt = openToCheck();
        assertThat(rebuilt).isPresent();
        try (Store store = rebuilt.get()) {
            var keyed = store.runs().active().stream().filter(run -> run.origin().idempotencyKey() != null).toList();
            assertThat(keyed).hasSizeGreaterThan(100);
            for (RunRecord run : keyed) { // the damaged indexes answered some of these with a run that was not there
                assertThat(store.runs().byIdempotencyKey(run.workspace(), run.origin().idempotencyKey())).contains(run);
            }
        }
    }

    /** As the server opens it to check it, through the embedded store's files. */
    private Optional<Store> openToCheck() {
        return new JdbcStoreFactory.H2().files(JdbcStoreSettings.embedded(), () -> dataDir).orElseThrow().openToCheck();
    }

    private Path storeDir() {
        return dataDir.resolve(EmbeddedH2.DIRECTORY);
    }

    private static String plan(Connection connection, String query, String parameter) throws Exception {
        try (PreparedStatement explain = connection.prepareStatement("EXPLAIN " + query)) {
            if (parameter != null) {
                explain.setString(1, parameter);
            }
            try (ResultSet rows = explain.executeQuery()) {
                rows.next();
                return rows.getString(1);
            }
        }
    }

    private static String sha256(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }
}
