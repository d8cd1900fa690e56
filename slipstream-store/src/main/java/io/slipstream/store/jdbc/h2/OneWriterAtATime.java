package io.slipstream.store.jdbc.h2;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongConsumer;
import java.util.regex.Pattern;
import org.h2.engine.SessionLocal;
import org.h2.jdbc.JdbcConnection;
import org.jdbi.v3.core.statement.Query;
import org.jdbi.v3.core.statement.StatementContext;
import org.jdbi.v3.core.statement.StatementCustomizer;

/**
 * One writing transaction at a time on an H2 database file in this process; reads never wait.
 *
 * <p>Why: H2 (2.5.252) writes a chunk of its file while other transactions change its maps, and a chunk can hold a
 * change without the undo entry that would roll it back. After a {@code kill -9}, the reopened file then kept, of a
 * transaction that never committed, its row in some indexes and not in the table: a run found by its idempotency key
 * but not by its id, so every later submission with that key failed (ChaosIT), and a row missing from one index.
 * With one writer, the chunk a commit writes is written by that writer, while no other change is under way
 * ({@code H2CrashConsistencyTest} kills writers and checks every index).
 *
 * <p>A transaction becomes the writer at its first statement that changes anything (any statement but a query, or a
 * query that locks rows: {@code FOR UPDATE}), and stays it until it has committed or rolled back ({@link #leave}).
 * A writer waits for those queued before it at most {@link #WAIT}, then fails as a store that cannot be reached (503,
 * to be tried again), as a database's lock timeout does; while it waits it holds a connection of the pool. It is one
 * per database file, not per store.
 *
 * <p>Not covered: H2 may also write a chunk on a reader's thread, when a query copies large text values into its
 * result (temporary LOB maps) and the changes not yet written exceed its auto-commit buffer (about 19 MB here); with
 * commits written in groups of milliseconds ({@link H2GroupCommit}, which also writes one before a quarter of that
 * buffer is used) it stays far below, and H2 has no setting to turn this off.
 */
public final class OneWriterAtATime implements StatementCustomizer {
    /**
     * How long a writer waits for those queued before it: well within what a lease renewal (a write) may wait and
     * still renew in time (a 10 s lease, renewed every third of it), about H2's own lock timeout (2 s). The control
     * loop's and the API's write transactions take milliseconds.
     */
    public static final Duration WAIT = Duration.ofSeconds(3);
    private static final ConcurrentHashMap<String, OneWriterAtATime> BY_DATABASE = new ConcurrentHashMap<>();
    private static final Pattern LOCKS_ROWS = Pattern.compile("\\bFOR\\s+UPDATE\\b", Pattern.CASE_INSENSITIVE);

    /** Fair: a lease renewal waits behind the writers queued before it, never for ever newer ones. */
    private final ReentrantLock writer = new ReentrantLock(true);
    /**
     * Where writers queue before they queue for {@link #writer}, but for those {@link #prioritize prioritized}: so at
     * most one of the others waits for the writer at a time, and a prioritized one waits for it and the one writing
     * at most, however many queue here. Fair too.
     */
    private final ReentrantLock queue = new ReentrantLock(true);
    /** Whether the calling thread's writes go before those queued ({@link #prioritize}). */
    private final ThreadLocal<Boolean> prioritized = ThreadLocal.withInitial(() -> false);
    private final String database;
    /** Writing sessions begun, written under the writer lock. */
    private volatile long sessions;
    private volatile LongConsumer beforeLeave = session -> { };

    private OneWriterAtATime(String database) {
        this.database = database;
    }

    /** The writer of the H2 database that {@code dataSource} (H2 connections in this process) connects to. */
    public static OneWriterAtATime of(javax.sql.DataSource dataSource) {
        try (Connection connection = dataSource.getConnection()) {
            SessionLocal session = (SessionLocal) connection.unwrap(JdbcConnection.class).getSession();
            String path = session.getDatabase().getDatabasePath();
            return BY_DATABASE.computeIfAbsent(path, OneWriterAtATime::new);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot reach the H2 database just opened: " + e.getMessage(), e);
        }
    }

    @Override
    public void beforeExecution(PreparedStatement statement, StatementContext context) throws SQLException {
        if (context.getJdbiStatementType() != Query.class || LOCKS_ROWS.matcher(context.getRenderedSql()).find()) {
            enter();
        }
    }

    /**
     * Makes the calling thread's transaction the writer, if it is not yet.
     *
     * @throws SQLTimeoutException if another writer held on past {@link #WAIT}, or the wait was interrupted
     */
    void enter() throws SQLTimeoutException {
        if (writer.isHeldByCurrentThread()) {
            return;
        }
        try {
            long deadline = System.nanoTime() + WAIT.toNanos();
            boolean first = prioritized.get();
            if (!first && !queue.tryLock(WAIT.toNanos(), TimeUnit.NANOSECONDS)) {
                throw timedOut();
            }
            try {
                if (!writer.tryLock(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                    throw timedOut();
                }
            } finally {
                if (!first) {
                    queue.unlock();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLTimeoutException("interrupted while waiting for the write transaction before this one on " + database);
        }
        sessions++;
    }

    private SQLTimeoutException timedOut() {
        return new SQLTimeoutException("waited " + WAIT.toSeconds() + " s for the write transaction before this one on " + database + " to end");
    }

    /**
     * Until the returned scope is closed, the calling thread's writes wait for the writer and for at most one other
     * queued before them, not for every one queued: the control loop's, whose cycle writes each run's step in a
     * transaction of its own, one after another, while requests queue many at once.
     */
    public Priority prioritize() {
        boolean outer = prioritized.get();
        prioritized.set(true);
        return () -> prioritized.set(outer);
    }

    /** A scope of {@link #prioritize}: closing it ends the priority, on the thread that opened it. */
    @FunctionalInterface
    public interface Priority extends AutoCloseable {
        @Override
        void close();
    }

    /**
     * Makes the calling thread the writer if it becomes free within {@code wait} (a group write of commits already made,
     * which looks again at whether it is still needed between tries).
     *
     * @return its writing session's number (every session numbered before it has ended), or 0 if the writer stayed taken
     */
    long tryEnter(Duration wait) {
        if (writer.isHeldByCurrentThread()) {
            return sessions;
        }
        boolean interrupted = Thread.interrupted(); // asked to stop: the commit it waits for is made, and is written first
        try {
            if (!writer.tryLock(wait.toNanos(), TimeUnit.NANOSECONDS)) {
                return 0;
            }
        } catch (InterruptedException e) {
            interrupted = true;
            return 0;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        return ++sessions;
    }

    /**
     * Once the calling thread's transaction has committed or rolled back: the next writer may begin.
     *
     * @return the number of the calling thread's writing session (writers are numbered as they begin: 1, 2, ...), or 0
     *         if it was not the writer (its transaction changed nothing)
     */
    public long leave() {
        if (writer.isHeldByCurrentThread()) {
            long mine = sessions;
            try {
                beforeLeave.accept(mine);
            } finally {
                writer.unlock();
            }
            return mine;
        }
        return 0;
    }

    /** Runs {@code hook} as each writer leaves, given its session, while it is still the writer ({@link H2GroupCommit}). */
    void beforeLeave(LongConsumer hook) {
        beforeLeave = hook;
    }

    /** Whether other transactions wait to become the writer (called by the writer). */
    boolean othersWaiting() {
        return writer.hasQueuedThreads() || queue.hasQueuedThreads();
    }
}
