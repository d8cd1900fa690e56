package io.slipstream.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.server.support.TestServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A data directory is only ever served with its own store: a missing, new or other store is refused, never silent. */
class StoreIdentityTest {
    private static final String EMBEDDED = ";MODE=PostgreSQL;DATABASE_TO_LOWER=TRUE;DEFAULT_NULL_ORDERING=HIGH";

    @TempDir
    Path dataDir;

    @TempDir
    Path otherDataDir;

    private String firstStart() throws IOException {
        try (TestServer server = TestServer.start(dataDir)) {
            assertThat(dataDir.resolve(StoreIdentity.FILE)).exists();
            return server.adminToken();
        }
    }

    @Test
    void aRestartWithItsOwnStoreStarts() throws IOException {
        String admin = firstStart();
        String identity = Files.readString(dataDir.resolve(StoreIdentity.FILE));
        try (TestServer again = TestServer.start(dataDir)) {
            assertThat(again.adminToken()).isEqualTo(admin);
        }
        assertThat(Files.readString(dataDir.resolve(StoreIdentity.FILE))).isEqualTo(identity);
    }

    @Test
    void aDeletedStoreIsRefusedAndNothingIsWrittenInItsPlace() throws IOException {
        String admin = firstStart();
        deleteTree(dataDir.resolve("store"));
        // Refused before H2 opens (it would make a new file): EmbeddedStoreFile.
        assertThatThrownBy(() -> TestServer.start(dataDir)).hasMessageContaining("store" + java.io.File.separator + "slipstream.mv.db is missing")
                .hasMessageContaining("Nothing was created in its place").hasMessageContaining("slipstream store restore");
        assertThat(dataDir.resolve("store").resolve("slipstream.mv.db")).doesNotExist();
        assertThat(Files.readString(dataDir.resolve(SlipstreamServer.ADMIN_TOKEN_FILE)).strip()).as("no new admin token").isEqualTo(admin);
        assertThatThrownBy(() -> TestServer.start(dataDir)).as("and again on every start").hasMessageContaining("is missing");
    }

    @Test
    void anotherDataDirectorysStoreIsRefused() throws IOException {
        firstStart();
        try (TestServer other = TestServer.start(otherDataDir)) {
            assertThat(other.adminToken()).isNotBlank();
        }
        deleteTree(dataDir.resolve("store"));
        copyTree(otherDataDir.resolve("store"), dataDir.resolve("store"));
        assertThatThrownBy(() -> TestServer.start(dataDir)).hasMessageContaining("but the store this server opened is "
                + Files.readString(otherDataDir.resolve(StoreIdentity.FILE)).strip());
    }

    @Test
    void aDataDirectoryFromBeforeIdentitiesRecordsItsStoresButRefusesANewStore() throws Exception {
        String admin = firstStart();
        // As a data directory and store of an earlier version: neither knows an identity.
        Files.delete(dataDir.resolve(StoreIdentity.FILE));
        try (Connection db = DriverManager.getConnection("jdbc:h2:file:" + dataDir.resolve("store").resolve("slipstream") + EMBEDDED, "sa", "")) {
            db.createStatement().executeUpdate("DELETE FROM server_keys WHERE purpose = '" + StoreIdentity.PURPOSE + "'");
        }
        try (TestServer upgraded = TestServer.start(dataDir)) {
            assertThat(upgraded.adminToken()).isEqualTo(admin);
        }
        assertThat(Files.readString(dataDir.resolve(StoreIdentity.FILE)).strip()).matches("[0-9a-f-]{36}");

        // The same earlier version's data directory whose store is gone: its admin token says it has history.
        Files.delete(dataDir.resolve(StoreIdentity.FILE));
        deleteTree(dataDir.resolve("store"));
        assertThatThrownBy(() -> TestServer.start(dataDir)).hasMessageContaining("is missing, but the data directory");
    }

    @Test
    void anEmptiedStoreIsRefused() throws Exception {
        firstStart();
        try (Connection db = DriverManager.getConnection("jdbc:h2:file:" + dataDir.resolve("store").resolve("slipstream") + EMBEDDED, "sa", "")) {
            db.createStatement().executeUpdate("DELETE FROM server_keys WHERE purpose = '" + StoreIdentity.PURPOSE + "'");
        }
        assertThatThrownBy(() -> TestServer.start(dataDir)).hasMessageContaining("has no identity: it is new")
                .hasMessageContaining(dataDir.resolve(StoreIdentity.FILE).toString()).hasMessageContaining("Restore the store");
    }

    /**
     * A store file cut short after a kill can open at one of its first chunks, from before its identity and watermark
     * were written (DamagedStoreIT saw it once): it is refused as the store that lost writes it is, naming the file and
     * the restore, not as a new store.
     */
    @Test
    void aStoreThatWentBackToBeforeItsIdentityIsRefusedAsOneThatLostWrites() throws Exception {
        firstStart();
        try (Connection db = DriverManager.getConnection("jdbc:h2:file:" + dataDir.resolve("store").resolve("slipstream") + EMBEDDED, "sa", "")) {
            db.createStatement().executeUpdate("DELETE FROM server_keys WHERE purpose IN ('" + StoreIdentity.PURPOSE + "', '" + StoreWatermark.PURPOSE + "')");
        }
        assertThatThrownBy(() -> TestServer.start(dataDir))
                .hasMessageContaining("the store " + dataDir.resolve("store").resolve("slipstream.mv.db") + " holds fewer writes than this data directory has seen")
                .hasMessageContaining("slipstream store restore");
    }

    @Test
    void aDamagedIdentityFileIsNamedNotTrusted() throws IOException {
        firstStart();
        Files.writeString(dataDir.resolve(StoreIdentity.FILE), "not an id\n");
        assertThatThrownBy(() -> TestServer.start(dataDir)).hasMessageContaining("does not name a store");
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> paths = Files.walk(from)) {
            for (Path path : paths.toList()) {
                Files.copy(path, to.resolve(from.relativize(path).toString()));
            }
        }
    }
}
