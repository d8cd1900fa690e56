package io.slipstream.store.jdbc.h2;

import io.slipstream.store.Store;
import io.slipstream.store.StoreDamagedException;
import io.slipstream.store.StoreFiles;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * The embedded H2 store as files: where it is, whether it can be trusted, and ({@link H2Backup}) its backup. H2 does
 * not say when its file was cut or overwritten: it opens an older consistent state (whole tables gone, or runs), or
 * fails only when a damaged page is read, which may be much later. So the store is read in full at open, and the
 * tables its migrations made must be there; what H2 cannot tell (an older but whole state) the server's watermark
 * tells. The store itself is opened by the caller (the JDBC store, given the URL): this class knows the file, not it.
 */
public final class EmbeddedH2 {
    /** The store's directory in the data directory. */
    public static final String DIRECTORY = "store";
    /** The database's name: its file is {@value #NAME}.mv.db. */
    static final String NAME = "slipstream";
    static final String FILE = NAME + ".mv.db";
    /** The schema version of {@link #EXPECTED_TABLES}: a store migrated that far has them all. */
    private static final BigDecimal SCHEMA = BigDecimal.valueOf(7);
    /** The tables of the migrations (V1 to V7) and Flyway's own: a store without one of them is not whole. */
    static final Set<String> EXPECTED_TABLES = Set.of("flyway_schema_history", "documents", "workspace_members", "tokens", "runs",
            "instances", "run_events", "schedule_states", "nodes_down", "secrets", "server_keys");
    /** Tables of later migrations, by the version that made them: required of a store migrated that far. */
    private static final java.util.Map<String, BigDecimal> LATER_TABLES = java.util.Map.of("leadership", BigDecimal.valueOf(9),
            "run_labels", BigDecimal.valueOf(11),
            "usage_segments", BigDecimal.valueOf(12), "leadership_fence", BigDecimal.valueOf(14), "identity_keys", BigDecimal.valueOf(19));
    /**
     * Columns later migrations added to tables that were there before ({@code table.column}), by the version that added
     * them: required of a store migrated that far. A migration of columns alone makes no table to miss, and a store
     * whose history says it ran but whose file lacks them would pass the tables' check, then fail every write.
     */
    private static final java.util.Map<String, BigDecimal> LATER_COLUMNS = java.util.Map.ofEntries(
            java.util.Map.entry("documents.schema_version", BigDecimal.valueOf(8)), java.util.Map.entry("runs.schema_version", BigDecimal.valueOf(8)),
            java.util.Map.entry("runs.submitted_by", BigDecimal.valueOf(10)), java.util.Map.entry("runs.labels", BigDecimal.valueOf(11)),
            java.util.Map.entry("instances.restarts", BigDecimal.valueOf(13)), java.util.Map.entry("instances.end_cause", BigDecimal.valueOf(15)),
            java.util.Map.entry("instances.memory_peak_bytes", BigDecimal.valueOf(16)), java.util.Map.entry("instances.cpu_nanos", BigDecimal.valueOf(16)),
            java.util.Map.entry("usage_rollups.used_cpu_ms", BigDecimal.valueOf(16)), java.util.Map.entry("nodes_down.mode", BigDecimal.valueOf(17)),
            java.util.Map.entry("usage_rollups.waits", BigDecimal.valueOf(20)), java.util.Map.entry("usage_rollups.waited_ms", BigDecimal.valueOf(20)),
            java.util.Map.entry("usage_rollups.longest_wait_ms", BigDecimal.valueOf(20)));
    /**
     * {@code WRITE_DELAY=0} makes every commit durable at once: with H2's default, acknowledged writes were lost on
     * {@code kill -9}. {@code DB_CLOSE_ON_EXIT=FALSE}: H2's own shutdown hook closed the database under the server's,
     * which then could not record its last writes (its watermark) on a SIGTERM; the server closes it.
     * {@code QUERY_CACHE_SIZE=64}: each connection keeps its parsed statements; with H2's 8, the control loop's few
     * dozen statements were parsed again each time (a third of its time in one profile).
     */
    private static final String SETTINGS = ";MODE=PostgreSQL;DATABASE_TO_LOWER=TRUE;DEFAULT_NULL_ORDERING=HIGH;WRITE_DELAY=0;DB_CLOSE_ON_EXIT=FALSE;QUERY_CACHE_SIZE=64";
    /** H2's error codes of a file it cannot read: corrupted, an I/O error, another file format, a general (MVStore) error. */
    private static final Set<Integer> DAMAGE_CODES = Set.of(90030, 90028, 90048, 50000);

    private EmbeddedH2() {
    }

    /** The database file of the store in {@code storeDir} (a data directory's {@value #DIRECTORY}). */
    static Path file(Path storeDir) {
        return storeDir.resolve(FILE);
    }

    /** The embedded store's directory in the data directory {@code dataDir}. */
    public static Path directory(Path dataDir) {
        return dataDir.resolve(DIRECTORY);
    }

    /** The JDBC URL of the store in {@code storeDir}, with the settings that keep its commits (user {@code sa}, no password). */
    public static String url(Path storeDir) {
        return "jdbc:h2:file:" + storeDir.toAbsolutePath().resolve(NAME) + SETTINGS;
    }

    /**
     * Opens the store in {@code storeDir} with {@code open} (given its {@link #url}: it opens and migrates it) and checks
     * that its tables are there; {@link #openToCheck} reads it whole, before.
     *
     * @throws StoreDamagedException if H2 cannot read the file, or it is not whole
     */
    public static <S extends Store> S open(Path storeDir, Function<String, S> open) {
        S store;
        try {
            store = open.apply(url(storeDir));
        } catch (RuntimeException e) {
            String damage = damage(e);
            if (damage == null && e instanceof org.flywaydb.core.api.FlywayException && String.valueOf(e.getMessage()).contains("no schema history table")) {
                damage = "it has tables but not the history of its migrations";
            }
            if (damage == null) {
                throw e;
            }
            throw damaged(storeDir, "H2 cannot read it (" + damage + ")");
        }
        try (Connection connection = DriverManager.getConnection(url(storeDir) + ";IFEXISTS=TRUE", "sa", "");
             Statement statement = connection.createStatement()) {
            requireTables(storeDir, tables(statement));
        } catch (SQLException e) {
            store.close();
            throw damaged(storeDir, "H2 cannot read it (" + firstLine(e) + ")");
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
        return store;
    }

    /**
     * Opens the store in {@code storeDir} to read only, as it is, having read it whole (every row, and every index
     * against its table): empty if it has no file or an older schema (see {@link StoreFiles#openToCheck}).
     *
     * @param openReadOnly opens a store at a URL to read, as it is (no migration)
     */
    static Optional<Store> openToCheck(Path storeDir, Function<String, Store> openReadOnly) {
        if (!Files.exists(file(storeDir), LinkOption.NOFOLLOW_LINKS)) {
            return Optional.empty();
        }
        String url = url(storeDir) + ";IFEXISTS=TRUE;ACCESS_MODE_DATA=r";
        try (Connection connection = DriverManager.getConnection(url, "sa", "")) {
            try (Statement statement = connection.createStatement()) {
                List<String> tables = tables(statement);
                if (!tables.contains("flyway_schema_history")) {
                    if (!tables.isEmpty()) {
                        throw damaged(storeDir, "it has tables (" + String.join(", ", new TreeSet<>(tables))
                                + ") but not the history of its migrations: it was overwritten, and H2 fell back to an older state");
                    }
                    return Optional.empty(); // new: checked once migrated
                }
                BigDecimal version = schemaVersion(statement);
                if (version.compareTo(SCHEMA) < 0) {
                    return Optional.empty(); // from an earlier version: checked once migrated
                }
                requireTables(storeDir, tables);
                LATER_TABLES.forEach((table, since) -> {
                    if (version.compareTo(since) >= 0 && !tables.contains(table)) {
                        throw damaged(storeDir, "it lacks the table " + table + " that its migration " + since
                                + " made: it was cut short or overwritten, and H2 fell back to an older state");
                    }
                });
                Set<String> columns = columns(statement);
                new TreeMap<>(LATER_COLUMNS).forEach((column, since) -> {
                    if (version.compareTo(since) >= 0 && !columns.contains(column)) {
                        throw damaged(storeDir, "it lacks the column " + column + " that its migration " + since
                                + " added: it was cut short or overwritten, and H2 fell back to an older state");
                    }
                });
                for (String table : tables) {
                    readAll(statement, table);
                }
                requireWholeIndexes(storeDir, connection);
                return Optional.of(openReadOnly.apply(url)); // while this connection keeps the database open
            } catch (SQLException | StoreDamagedException e) {
                closeImmediately(connection); // H2 keeps a database it could not read open, and locked, otherwise
                throw e;
            }
        } catch (SQLException e) {
            if (e.getErrorCode() == 90020) {
                throw new IllegalStateException(e.getMessage(), e); // in use: "Database may be already in use"
            }
            throw damaged(storeDir, "H2 cannot read it (" + firstLine(e) + ")");
        }
    }

    private static void closeImmediately(Connection connection) {
        try (Statement statement = connection.createStatement()) {
            statement.execute("SHUTDOWN IMMEDIATELY");
        } catch (SQLException ignored) {
            // closed already
        }
    }

    private static List<String> tables(Statement statement) throws SQLException {
        List<String> tables = new ArrayList<>();
        try (ResultSet rows = statement.executeQuery("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")) {
            while (rows.next()) {
                tables.add(rows.getString(1));
            }
        }
        return tables;
    }

    /** The columns of the store's tables, as {@code table.column}. */
    private static Set<String> columns(Statement statement) throws SQLException {
        Set<String> columns = new java.util.HashSet<>();
        try (ResultSet rows = statement.executeQuery("SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'")) {
            while (rows.next()) {
                columns.add(rows.getString(1) + "." + rows.getString(2));
            }
        }
        return columns;
    }

    private static void requireTables(Path storeDir, List<String> tables) {
        Set<String> missing = new TreeSet<>(EXPECTED_TABLES);
        missing.removeAll(tables);
        if (!missing.isEmpty()) {
            throw damaged(storeDir, "it lacks the tables " + String.join(", ", missing)
                    + " that its migrations make: it was cut short or overwritten, and H2 fell back to an older state");
        }
    }

    /** The version of the newest migration applied, as Flyway records it ({@code 7}, {@code 7.1}). */
    private static BigDecimal schemaVersion(Statement statement) throws SQLException {
        BigDecimal newest = BigDecimal.ZERO;
        try (ResultSet rows = statement.executeQuery("SELECT \"version\" FROM \"flyway_schema_history\" WHERE \"success\" AND \"version\" IS NOT NULL")) {
            while (rows.next()) {
                try {
                    BigDecimal version = new BigDecimal(rows.getString(1).replace('_', '.'));
                    newest = version.max(newest);
                } catch (NumberFormatException e) {
                    // a version Flyway would not write: not ours to judge
                }
            }
        }
        return newest;
    }

    /** Each index holds exactly its table's rows ({@link H2Indexes}); the rows themselves are whole then, only indexes are not. */
    private static void requireWholeIndexes(Path storeDir, Connection connection) throws SQLException {
        List<String> damaged = H2Indexes.damaged(connection);
        if (!damaged.isEmpty()) {
            throw damaged(storeDir, String.join("; ", damaged) + ". A crash left in them a change that never committed (H2 2.5.252,"
                    + " under a build before one writer at a time); the tables are whole: rebuild the indexes from them as"
                    + " docs/operations.md says (\"A damaged index\"), or restore a backup");
        }
    }

    private static void readAll(Statement statement, String table) throws SQLException {
        try (ResultSet rows = statement.executeQuery("SELECT * FROM \"" + table.replace("\"", "\"\"") + "\"")) {
            int columns = rows.getMetaData().getColumnCount();
            while (rows.next()) {
                for (int column = 1; column <= columns; column++) {
                    rows.getObject(column); // TEXT values live in pages of their own: read them too
                }
            }
        }
    }

    /** What an exception says of a file H2 cannot read, or {@code null} if it is about something else. */
    static String damage(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLException sql && DAMAGE_CODES.contains(sql.getErrorCode())) {
                return firstLine(sql);
            }
            if (cause.getClass().getName().equals("org.h2.mvstore.MVStoreException")) {
                return firstLine(cause);
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return null;
    }

    static String firstLine(Throwable e) {
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        String line = message.lines().findFirst().orElse(message);
        return line.length() > 300 ? line.substring(0, 300) + "..." : line;
    }

    private static StoreDamagedException damaged(Path storeDir, String what) {
        return new StoreDamagedException("the store " + file(storeDir) + " is damaged: " + what + ". It was not served. Restore it"
                + " from a backup (slipstream store restore FILE --data-dir DIR, see docs/operations.md, \"A damaged store\"); keep this"
                + " file for inspection (H2's recovery tool: java -cp h2.jar org.h2.tools.Recover).");
    }

    /** Whether another process has the store in {@code storeDir} open: H2 locks its file, and says so to whoever else opens it. */
    static boolean inUse(Path storeDir) {
        if (!Files.exists(file(storeDir), LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        try (Connection connection = DriverManager.getConnection("jdbc:h2:file:" + storeDir.toAbsolutePath().resolve(NAME)
                + ";IFEXISTS=TRUE;ACCESS_MODE_DATA=r", "sa", "")) {
            return false;
        } catch (SQLException e) {
            // DATABASE_ALREADY_OPEN ("Database may be already in use: Locked by another process"); other errors: a damaged store
            return e.getErrorCode() == 90020 || String.valueOf(e.getMessage()).contains("Locked by another process");
        }
    }

    /** The embedded store in {@code storeDir} as {@link StoreFiles}; {@code openReadOnly} as {@link #openToCheck} takes it. */
    public static StoreFiles files(Path storeDir, Function<String, Store> openReadOnly) {
        Path dir = storeDir.toAbsolutePath().normalize();
        return new StoreFiles() {
            @Override
            public Path directory() {
                return dir;
            }

            @Override
            public Path file() {
                return EmbeddedH2.file(dir);
            }

            @Override
            public Optional<Store> openToCheck() {
                return EmbeddedH2.openToCheck(dir, openReadOnly);
            }

            @Override
            public boolean inUse() {
                return EmbeddedH2.inUse(dir);
            }

            @Override
            public void backup(Path target) {
                H2Backup.backup(dir, target);
            }

            @Override
            public void extract(Path backup) {
                H2Backup.extract(backup, dir);
            }
        };
    }
}
