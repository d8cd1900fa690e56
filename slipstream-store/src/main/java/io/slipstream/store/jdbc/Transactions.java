package io.slipstream.store.jdbc;

import io.slipstream.store.jdbc.h2.OneWriterAtATime;
import java.util.function.Function;
import java.util.function.LongConsumer;
import javax.sql.DataSource;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.statement.SqlStatements;

/**
 * How a {@link JdbcStore}'s statements reach the database. {@link #inTransaction} gives its work one handle (a
 * {@link TransactionHandle}) until it returns (committed) or throws (rolled back); {@link #withHandle} runs the
 * statements of one read on a handle of their own, in autocommit. A transaction is never joined: while a thread is in
 * one, this store's other calls on that thread are refused ({@link IllegalStateException}), as the Store's contract
 * says. Where writes are one at a time ({@link OneWriterAtATime}) the writer is let go once the transaction or the
 * statement has ended; then {@code afterCall} runs before the call returns (the embedded H2's {@code H2GroupCommit},
 * which returns once what the call wrote or could have read is in the file; nothing elsewhere). Failures come out in the SPI's terms ({@link SqlErrors}).
 */
final class Transactions {
    private final Jdbi jdbi;
    /** Set while the thread is in one of this store's transactions: to refuse the store's other calls there, never to join them. */
    private final ThreadLocal<Boolean> inside = new ThreadLocal<>();
    /** Given the call's writing session (0: none, or not counted), before its answer is returned. */
    private final LongConsumer afterCall;
    /** An H2 file in this process: its writers, one at a time; {@code null} elsewhere. */
    private final OneWriterAtATime oneWriter;

    /** @param timeoutPerStatement whether each statement is given the timeout (not where the session has it: H2) */
    Transactions(DataSource dataSource, LongConsumer afterCall, OneWriterAtATime oneWriter, boolean timeoutPerStatement) {
        this.jdbi = Jdbi.create(dataSource);
        this.afterCall = afterCall;
        this.oneWriter = oneWriter;
        if (timeoutPerStatement) {
            jdbi.getConfig(SqlStatements.class).setQueryTimeout((int) ConnectionPool.STATEMENT_TIMEOUT_S);
        }
        if (oneWriter != null) {
            jdbi.getConfig(SqlStatements.class).addCustomizer(oneWriter);
        }
    }

    /** Runs {@code work} in a transaction of its own: all its statements commit together, or none does if it throws. */
    <T> T inTransaction(Function<TransactionHandle, T> work) {
        requireOutside();
        inside.set(Boolean.TRUE);
        T result;
        long session = 0;
        RuntimeException failed = null;
        try {
            result = jdbi.inTransaction(handle -> {
                TransactionHandle open = new TransactionHandle(handle);
                try {
                    return work.apply(open);
                } finally {
                    open.end();
                }
            });
        } catch (JdbiException e) {
            throw failed = SqlErrors.translated(e);
        } catch (RuntimeException e) {
            throw failed = e;
        } finally {
            inside.remove();
            session = leave(failed); // committed or rolled back
        }
        afterCall.accept(session);
        return result;
    }

    /** The statements of one call, on a handle of their own, in autocommit. */
    <T> T withHandle(Function<Handle, T> work) {
        requireOutside();
        T result;
        long session = 0;
        RuntimeException failed = null;
        try {
            result = jdbi.withHandle(work::apply);
        } catch (JdbiException e) {
            throw failed = SqlErrors.translated(e);
        } catch (RuntimeException e) {
            throw failed = e;
        } finally {
            session = leave(failed);
        }
        afterCall.accept(session);
        return result;
    }

    /** Fails if the calling thread is inside one of this store's transactions. */
    void requireOutside() {
        if (inside.get() != null) {
            throw new IllegalStateException("the store was called inside one of its own transactions: use the transaction given to "
                    + "the work (a transaction is never joined, and a second one would wait for this one)");
        }
    }

    /**
     * Lets the writer go, if this thread was it. A failure to write the group as it leaves is the call's, unless the
     * call already failed: then it is kept with that failure, which is not hidden.
     *
     * @return the thread's writing session ({@link OneWriterAtATime#leave}); 0: it changed nothing, or writers are not counted
     */
    private long leave(RuntimeException failed) {
        if (oneWriter == null) {
            return 0;
        }
        try {
            return oneWriter.leave();
        } catch (RuntimeException e) {
            if (failed == null) {
                throw e;
            }
            failed.addSuppressed(e);
            return 0;
        }
    }

    /** The handle of one open transaction, until its work returns: each call's statements, failures in the SPI's terms. */
    static final class TransactionHandle implements Handles {
        private final Handle handle;
        private volatile boolean open = true;

        private TransactionHandle(Handle handle) {
            this.handle = handle;
        }

        @Override
        public <T> T with(Function<Handle, T> work) {
            if (!open) {
                throw new IllegalStateException("the transaction has ended: its work returned");
            }
            try {
                return work.apply(handle);
            } catch (JdbiException e) {
                throw SqlErrors.translated(e);
            }
        }

        private void end() {
            open = false;
        }
    }
}
