package io.slipstream.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.codec.Json;
import io.slipstream.server.support.TestServer;
import io.slipstream.store.StoreDamagedException;
import io.slipstream.testing.NoProcessLeftBehind;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A damaged store is never served silently: each way of damaging the embedded H2 file of a data directory with 30 runs
 * is refused at start, with a message naming the file, what is wrong and what to do; nothing is created in its place
 * and no new admin token is made.
 */
@ExtendWith(NoProcessLeftBehind.class)
class DamagedStoreTest {
    private static final int RUNS = 30;
    private static final String RAW = ";MODE=PostgreSQL;DATABASE_TO_LOWER=TRUE;IFEXISTS=TRUE";

    @TempDir
    static Path seeded;

    @TempDir
    Path dataDir;

    /** The store file of the data directory after its first 15 runs: a whole, older copy. */
    private static Path olderCopy;
    private static String adminToken;

    @BeforeAll
    static void seed() throws IOException {
        Path template = seeded.resolve("data");
        try (TestServer server = TestServer.start(template)) {
            adminToken = server.adminToken();
            server.post("/api/v1/apply", adminToken, "apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: w}\n");
            submitAndFinish(server, 0, RUNS / 2);
        }
        olderCopy = seeded.resolve("older.mv.db");
        Files.copy(storeFile(template), olderCopy);
        try (TestServer server = TestServer.start(template)) {
            submitAndFinish(server, RUNS / 2, RUNS);
        }
    }

    /** Runs whose specs are large enough (2 KB each, with a marker) to fill many pages of the store. */
    private static void submitAndFinish(TestServer server, int from, int to) {
        List<String> ids = new ArrayList<>();
        for (int i = from; i < to; i++) {
            String job = """
                    {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "j%d", "workspace": "w"},
                     "spec": {"nodeGroups": [{"name": "main", "resources": {"cpu": 1, "memory": "1Gi"}, "command": ["true", %s]}]}}}
                    """.formatted(i, Json.mapper().writeValueAsString(marker(i).repeat(250)));
            var response = server.post("/api/v1/runs", server.adminToken(), job);
            assertThat(response.status()).as(response.text()).isEqualTo(201);
            ids.add(response.json().get("id").asString());
        }
        ids.forEach(id -> server.awaitState(server.adminToken(), id, "SUCCEEDED"));
    }

    /** Whether H2 on its own opens a copy of {@code file} and finds all the runs in it. */
    /** Whether H2 alone still reads the runs table from the file, however many runs it finds there. */
    private static boolean readsRuns(Path file) throws IOException {
        Path copy = Files.createTempDirectory("damaged-store");
        try {
            Files.copy(file, copy.resolve("slipstream.mv.db"));
            try (Connection db = DriverManager.getConnection("jdbc:h2:file:" + copy.resolve("slipstream") + RAW, "sa", "")) {
                return count(db, "SELECT COUNT(*) FROM runs") >= 0;
            } catch (Exception cannotRead) {
                return false;
            }
        } finally {
            try (Stream<Path> files = Files.walk(copy)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static String marker(int run) {
        return "MARK%03d-".formatted(run);
    }

    private static Path storeFile(Path dataDir) {
        return dataDir.resolve("store").resolve("slipstream.mv.db");
    }

    /** Ways a store file is damaged while its server is stopped, and what the refusal must say. */
    enum Damage {
        /**
         * Cut to half, and again while H2 alone still reads the runs from it: a file compacted at a clean stop may
         * have only free space in its second half (then nothing was lost, and nothing is to be refused), and a cut that
         * leaves an older version of the chunks readable (fewer runs) is an older copy, which the watermark tells
         * ({@code anOlderCopy...}): which of the two a cut gives depends on where H2's commits put the chunks.
         */
        TRUNCATED_TO_HALF("is damaged") {
            @Override
            void apply(Path file) throws IOException {
                do {
                    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
                        raf.setLength(raf.length() / 2);
                    }
                } while (Files.size(file) > 4096 && readsRuns(file));
            }
        },
        TRUNCATED_TO_ZERO("is empty (0 bytes)") {
            @Override
            void apply(Path file) throws IOException {
                try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
                    raf.setLength(0);
                }
            }
        },
        DELETED("is missing") {
            @Override
            void apply(Path file) throws IOException {
                Files.delete(file);
            }
        },
        /** 4 KiB of random bytes over every copy of one run's record, live or not: whatever H2 reads of it is garbage. */
        RANDOM_BYTES_OVER_A_RECORD("is damaged") {
            @Override
            void apply(Path file) throws IOException {
                byte[] content = Files.readAllBytes(file);
                byte[] marker = marker(RUNS - 1).getBytes(StandardCharsets.US_ASCII);
                int hits = 0;
                try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
                    for (int at = 0; at + marker.length < content.length; at++) {
                        if (Arrays.equals(content, at, at + marker.length, marker, 0, marker.length)) {
                            byte[] noise = new byte[4096];
                            new Random(at).nextBytes(noise);
                            raf.seek(at);
                            raf.write(noise);
                            hits++;
                            at += noise.length;
                        }
                    }
                }
                assertThat(hits).as("the run's record is in the file").isPositive();
            }
        },
        REPLACED_BY_AN_OLDER_COPY("holds fewer writes than this data directory has seen") {
            @Override
            void apply(Path file) throws IOException {
                Files.copy(olderCopy, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        };

        final String says;

        Damage(String says) {
            this.says = says;
        }

        abstract void apply(Path file) throws IOException;
    }

    @ParameterizedTest
    @EnumSource(Damage.class)
    void aDamagedStoreIsRefusedAtStartAndNothingTakesItsPlace(Damage damage) throws IOException {
        copyTree(seeded.resolve("data"), dataDir);
        Path file = storeFile(dataDir);
        damage.apply(file);
        boolean existed = Files.exists(file);
        byte[] damaged = existed ? Files.readAllBytes(file) : null;

        // And again: a refused start changes nothing. (A file H2 panicked reading stays locked in the JVM that read it:
        // a second start in this one would read "in use"; a server is one process per start. Random bytes make it panic,
        // and so may a cut, depending on where its chunks were.)
        int starts = damage == Damage.RANDOM_BYTES_OVER_A_RECORD || damage == Damage.TRUNCATED_TO_HALF ? 1 : 2;
        for (int start = 0; start < starts; start++) {
            assertThatThrownBy(() -> TestServer.start(dataDir)).isInstanceOf(StoreDamagedException.class)
                    .hasMessageContaining(file.toString()).hasMessageContaining(damage.says)
                    .hasMessageContaining("slipstream store restore")
                    .satisfies(e -> assertThat(e.getMessage()).as("one line, for the operator").doesNotContain("\n"));
        }
        assertThat(Files.exists(file)).as("no store is created in its place").isEqualTo(existed);
        if (existed) {
            assertThat(Files.readAllBytes(file)).as("the file is left exactly as it was found, for a restore or inspection").isEqualTo(damaged);
        }
        assertThat(Files.readString(dataDir.resolve(SlipstreamServer.ADMIN_TOKEN_FILE)).strip()).as("no new admin token").isEqualTo(adminToken);
    }

    @Test
    void anOlderCopyOpensSilentlyWithFewerRunsInH2ItselfSoTheWatermarkIsWhatTellsIt() throws Exception {
        copyTree(seeded.resolve("data"), dataDir);
        Damage.REPLACED_BY_AN_OLDER_COPY.apply(storeFile(dataDir));
        try (Connection db = DriverManager.getConnection("jdbc:h2:file:" + dataDir.resolve("store").resolve("slipstream") + RAW, "sa", "")) {
            assertThat(count(db, "SELECT COUNT(*) FROM runs")).as("H2 says nothing").isEqualTo(RUNS / 2);
        }
        assertThatThrownBy(() -> TestServer.start(dataDir)).hasMessageContaining("it was truncated or replaced by an older copy");

        // The documented override (--accept-older-store): knowingly accept the older store, once.
        StoreWatermark.acceptOlderStore(dataDir);
        try (TestServer server = TestServer.start(dataDir)) {
            assertThat(server.adminToken()).isEqualTo(adminToken);
            assertThat(server.get("/api/v1/runs?limit=1000", adminToken).json().get("items")).hasSize(RUNS / 2);
        }
        try (Stream<Path> runs = Files.list(dataDir.resolve("instances"))) {
            assertThat(runs.filter(run -> !run.getFileName().toString().startsWith("."))).as("the runs it lost are set aside").hasSize(RUNS / 2);
        }
        try (TestServer server = TestServer.start(dataDir)) {
            assertThat(server.get("/api/v1/runs?limit=1000", adminToken).json().get("items")).as("and it starts again").hasSize(RUNS / 2);
        }
    }

    @Test
    void aStoreThatLostItsNewestRunsIsRefusedEvenWhereTheWatermarkLagsBehind() throws Exception {
        copyTree(seeded.resolve("data"), dataDir);
        Damage.REPLACED_BY_AN_OLDER_COPY.apply(storeFile(dataDir));
        // As if the store lost only what it wrote after the watermark was last recorded.
        try (Connection db = DriverManager.getConnection("jdbc:h2:file:" + dataDir.resolve("store").resolve("slipstream") + RAW, "sa", "")) {
            try (ResultSet rows = db.createStatement().executeQuery("SELECT key_id FROM server_keys WHERE purpose = '" + StoreWatermark.PURPOSE + "'")) {
                rows.next();
                StoreWatermark.record(dataDir, Long.parseLong(rows.getString(1)));
            }
        }
        assertThatThrownBy(() -> TestServer.start(dataDir)).isInstanceOf(StoreDamagedException.class)
                .hasMessageContaining(storeFile(dataDir).toString())
                .hasMessageContaining("does not know " + RUNS / 2 + " run(s) that ran here")
                .hasMessageContaining("truncated or replaced by an older copy");
    }

    @Test
    void aStoreWithoutATableItsMigrationsMadeIsRefused() throws Exception {
        copyTree(seeded.resolve("data"), dataDir);
        try (Connection db = DriverManager.getConnection("jdbc:h2:file:" + dataDir.resolve("store").resolve("slipstream") + RAW, "sa", "")) {
            db.createStatement().execute("DROP TABLE nodes_down");
        }
        assertThatThrownBy(() -> TestServer.start(dataDir)).isInstanceOf(StoreDamagedException.class)
                .hasMessageContaining(storeFile(dataDir).toString()).hasMessageContaining("lacks the tables nodes_down");
    }

    /** V20 added columns only: a store whose history says it ran but whose file lacks them is refused before any write fails. */
    @Test
    void aStoreWithoutAColumnItsMigrationsAddedIsRefused() throws Exception {
        copyTree(seeded.resolve("data"), dataDir);
        try (Connection db = DriverManager.getConnection("jdbc:h2:file:" + dataDir.resolve("store").resolve("slipstream") + RAW, "sa", "")) {
            db.createStatement().execute("ALTER TABLE usage_rollups DROP COLUMN waited_ms");
        }
        assertThatThrownBy(() -> TestServer.start(dataDir)).isInstanceOf(StoreDamagedException.class)
                .hasMessageContaining(storeFile(dataDir).toString()).hasMessageContaining("lacks the column usage_rollups.waited_ms")
                .hasMessageContaining("migration 20");
    }

    @Test
    void anUndamagedStoreStartsWithEveryRun() throws IOException {
        copyTree(seeded.resolve("data"), dataDir);
        long recorded = StoreWatermark.recorded(dataDir.resolve(StoreWatermark.FILE)).orElseThrow();
        try (TestServer server = TestServer.start(dataDir)) {
            assertThat(server.get("/api/v1/runs?limit=1000", adminToken).json().get("items")).hasSize(RUNS);
            assertThat(StoreWatermark.recorded(dataDir.resolve(StoreWatermark.FILE)).orElseThrow()).as("advanced at start").isGreaterThan(recorded);
        }
    }

    private static long count(Connection db, String sql) throws SQLException {
        try (ResultSet rows = db.createStatement().executeQuery(sql)) {
            rows.next();
            return rows.getLong(1);
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> paths = Files.walk(from)) {
            for (Path path : paths.sorted(Comparator.naturalOrder()).toList()) {
                Path target = to.resolve(from.relativize(path).toString());
                if (Files.isDirectory(path)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(path, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }
}
