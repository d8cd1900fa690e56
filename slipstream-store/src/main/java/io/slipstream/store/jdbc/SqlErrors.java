package io.slipstream.store.jdbc;

import io.slipstream.store.ConflictException;
import io.slipstream.store.StoreUnavailableException;
import java.sql.SQLException;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.statement.StatementException;

/** What a failed statement is in the SPI's terms: the store unreachable, a lost race (a conflict), or itself (a bug). */
final class SqlErrors {
    private SqlErrors() {
    }

    /** {@code e} as the SPI says it: {@link StoreUnavailableException} if the connection failed, a conflict for a duplicate key. */
    static RuntimeException translated(JdbiException e) {
        if (e instanceof StatementException statement) {
            return duplicateKeyAsConflict(statement);
        }
        return connectionLost(e) ? unavailable(e) : e;
    }

    static StoreUnavailableException unavailable(Exception e) {
        return new StoreUnavailableException("the store cannot be reached: " + rootMessage(e), e);
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
        return message.lines().findFirst().orElse("");
    }

    /**
     * A statement that failed because the connection did: SQL state class 08 (connection exception), 57P01-03 (the
     * server is shutting down or starting), a connection the pool could not give, 57014 a statement cancelled by its
     * timeout (the server stopped answering, or it waits on a lock that long), H2's timeouts (a lock waited for past
     * its lock timeout: under load, another transaction held the row that long). Everything else (a constraint, a
     * bug) stays what it is.
     */
    static boolean connectionLost(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof java.sql.SQLTransientConnectionException || cause instanceof java.sql.SQLNonTransientConnectionException
                    || cause instanceof java.sql.SQLRecoverableException || cause instanceof java.net.SocketException
                    || cause instanceof java.io.EOFException
                    || cause instanceof java.sql.SQLTimeoutException) { // H2: a lock waited for past its lock timeout
                return true;
            }
            if (cause instanceof SQLException sql && sql.getSQLState() != null) {
                String state = sql.getSQLState();
                if (state.startsWith("08") || state.startsWith("57P") || state.equals("57014")) {
                    return true;
                }
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return false;
    }

    /** Two writers creating the same row at once: the loser gets a conflict, like any lost compare-and-set. */
    private static RuntimeException duplicateKeyAsConflict(StatementException e) {
        if (connectionLost(e)) {
            return unavailable(e);
        }
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLException sql && "23505".equals(sql.getSQLState())) {
                return new ConflictException("it was created by someone else meanwhile: " + sql.getMessage().lines().findFirst().orElse(""));
            }
        }
        return e;
    }
}
