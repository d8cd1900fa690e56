package io.slipstream.store.jdbc.h2;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads every index of an H2 database whole and compares it with its table: an index that names a row its table lacks,
 * or lacks one of its rows, is damaged (what H2 2.5.252 left after a {@code kill -9} before {@link OneWriterAtATime}:
 * a run found by its idempotency key and not by its id). H2 checks each page it reads, not that its indexes agree.
 */
final class H2Indexes {
    /** H2 retries a row an index names but the table lacks until the lock timeout: a moment is enough here. */
    private static final int LOCK_TIMEOUT_MS = 50;

    private H2Indexes() {
    }

    /** An index and the first of its columns, by which it is read whole. */
    record Index(String table, String name, String firstColumn) {
        String read(String condition) {
            return "SELECT _ROWID_ FROM " + quote(table) + " USE INDEX (" + quote(name) + ") WHERE " + quote(firstColumn) + condition;
        }
    }

    /** The indexes of the public tables (those of primary keys and unique constraints too). */
    static List<Index> of(Statement statement) throws SQLException {
        List<Index> indexes = new ArrayList<>();
        try (ResultSet rows = statement.executeQuery("SELECT table_name, index_name, column_name FROM information_schema.index_columns"
                + " WHERE table_schema = 'public' AND ordinal_position = 1 ORDER BY table_name, index_name")) {
            while (rows.next()) {
                indexes.add(new Index(rows.getString(1), rows.getString(2), rows.getString(3)));
            }
        }
        return indexes;
    }

    /**
     * What is wrong with the indexes of the database {@code connection} is connected to, one line per damaged index;
     * empty if each holds exactly its table's rows. Sets the session's lock timeout to a moment.
     */
    static List<String> damaged(Connection connection) throws SQLException {
        List<String> damaged = new ArrayList<>();
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET LOCK_TIMEOUT " + LOCK_TIMEOUT_MS);
            Map<String, Long> rows = new LinkedHashMap<>();
            for (Index index : of(statement)) {
                long inTable = rows.computeIfAbsent(index.table(), table -> count(statement, "SELECT _ROWID_ FROM " + quote(table) + " USE INDEX ()"));
                try {
                    long inIndex = count(connection, index);
                    if (inIndex != inTable) {
                        damaged.add("the index " + index.name() + " of the table " + index.table() + " holds " + inIndex + " rows, the table "
                                + inTable);
                    }
                } catch (UncheckedSql e) {
                    damaged.add("the index " + index.name() + " of the table " + index.table() + " names a row the table lacks ("
                            + e.getCause().getMessage().lines().findFirst().orElse("") + ")");
                }
            }
        } catch (UncheckedSql e) {
            throw (SQLException) e.getCause(); // a table that cannot be read: H2's own damage, said as such by the caller
        }
        return damaged;
    }

    /** The rows the index holds: those whose first column is null, then the others from the least value up. */
    private static long count(Connection connection, Index index) {
        try (Statement statement = connection.createStatement()) {
            long count = count(statement, index.read(" IS NULL"));
            Object least;
            try (ResultSet rows = statement.executeQuery("SELECT MIN(" + quote(index.firstColumn()) + ") FROM " + quote(index.table()))) {
                rows.next();
                least = rows.getObject(1);
            }
            if (least != null) {
                try (PreparedStatement rest = connection.prepareStatement(index.read(" >= ?"))) {
                    rest.setObject(1, least);
                    try (ResultSet rows = rest.executeQuery()) {
                        count += rowsOf(rows);
                    }
                }
            }
            return count;
        } catch (SQLException e) {
            throw new UncheckedSql(e);
        }
    }

    private static long count(Statement statement, String query) {
        try (ResultSet rows = statement.executeQuery(query)) {
            return rowsOf(rows);
        } catch (SQLException e) {
            throw new UncheckedSql(e);
        }
    }

    /** Counted by reading them: H2's COUNT(*) answers from the table's row count, which counted a damaged row. */
    private static long rowsOf(ResultSet rows) throws SQLException {
        long count = 0;
        while (rows.next()) {
            count++;
        }
        return count;
    }

    static String quote(String identifier) {
        return "\"" + identifier.replace("\"", "\"\"") + "\"";
    }

    private static final class UncheckedSql extends RuntimeException {
        UncheckedSql(SQLException cause) {
            super(cause);
        }
    }
}
