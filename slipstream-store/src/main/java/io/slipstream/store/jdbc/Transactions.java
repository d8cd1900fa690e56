package io.slipstream.store.jdbc;

import io.slipstream.store.FencedException;
import io.slipstream.store.jdbc.h2.OneWriterAtATime;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.statement.SqlStatements;

/**
 * How a {@link JdbcStore}'s statements reach the database. {@link #inTransaction} binds one handle to the calling
 * thread until the work returns (committed) or throws (rolled back); every statement of that thread meanwhile joins it,
 * as the Store's contract says of a method called inside a transaction. A statement outside one gets a handle of its
 * own, in autocommit. After each commit, before it is acknowledged, {@code committed} runs (the embedded H2's
 * {@code H2NewestChunk}; nothing elsewhere); where writes are one at a time ({@link OneWriterAtATime}) the writer is
 * let go once the transaction or the statement has ended. Failures come out in the SPI's terms ({@link SqlErrors}).
 * The leader's fence is held per transaction too ({@link #requireFence}).
 */
final class Transactions {
    private final Jdbi jdbi;
    private final ThreadLocal<Handle> transaction = new ThreadLocal<>();
    /**
     * The epoch the current transaction found, with the fence's row locked ({@link #requireFence}): the writes it joins
     * check no more, as no other transaction can change the row before this one ends.
     */
    private final ThreadLocal<Long> fencedAt = new ThreadLocal<>();
    private final Runnable committed;
    /** An H2 file in this process: its writers, one at a time; {@code null} elsewhere. */
    private final OneWriterAtATime oneWriter;

    /** @param timeoutPerStatement whether each statement is given the timeout (not where the session has it: H2) */
    Transactions(DataSource dataSource, Runnable committed, OneWriterAtATime oneWriter, boolean timeoutPerStatement) {
        this.jdbi = Jdbi.create(dataSource);
        this.committed = committed;
        this.oneWriter = oneWriter;
        if (timeoutPerStatement) {
            jdbi.getConfig(SqlStatements.class).setQueryTimeout((int) ConnectionPool.STATEMENT_TIMEOUT_S);
        }
        if (oneWriter != null) {
            jdbi.getConfig(SqlStatements.class).addCustomizer(oneWriter);
        }
    }

    /** Runs {@code work} in one transaction, or in the calling thread's open one. */
    <T> T inTransaction(Supplier<T> work) {
        if (transaction.get() != null) {
            return work.get();
        }
        try {
            T result = jdbi.inTransaction(handle -> {
                transaction.set(handle);
                try {
                    return work.get();
                } finally {
                    transaction.remove();
                    fencedAt.remove();
                }
            });
            committed.run();
            return result;
        } catch (JdbiException e) {
            throw SqlErrors.translated(e);
        } finally {
            leaveWriter(); // committed or rolled back
        }
    }

    /** Statements of one call: in the calling thread's open transaction, else on a handle of their own, in autocommit. */
    <T> T withHandle(Function<Handle, T> work) {
        try {
            Handle bound = transaction.get();
            if (bound != null) {
                return work.apply(bound);
            }
            try {
                T result = jdbi.withHandle(work::apply); // autocommit: a write is committed
                committed.run();
                return result;
            } finally {
                leaveWriter();
            }
        } catch (JdbiException e) {
            throw SqlErrors.translated(e);
        }
    }

    /** Statements of one call that commit together: {@link #withHandle} inside {@link #inTransaction}. */
    <T> T atomically(Function<Handle, T> work) {
        return inTransaction(() -> withHandle(work));
    }

    /**
     * {@link io.slipstream.store.Store#requireLeader}: inside a transaction, locks the fence's row until it ends (once: the
     * statements after it check no more); outside one, checks only.
     */
    void requireFence(long epoch) {
        if (transaction.get() != null && Long.valueOf(epoch).equals(fencedAt.get())) {
            return; // this transaction holds the fence's row, locked at this epoch, until it ends
        }
        withHandle(h -> {
            boolean inTransaction = transaction.get() != null;
            Optional<Long> fence = inTransaction ? LeadershipRows.lockedFence(h) : LeadershipRows.fence(h);
            long current = fence.orElse(0L);
            if (current != epoch) {
                throw new FencedException(epoch, current);
            }
            if (inTransaction && fence.isPresent()) {
                fencedAt.set(epoch); // only a row that exists is locked
            }
            return null;
        });
    }

    /** The fence's row changes in the calling thread's transaction: a check after this reads it again. */
    void fenceChanges() {
        fencedAt.remove();
    }

    private void leaveWriter() {
        if (oneWriter != null) {
            oneWriter.leave();
        }
    }
}
