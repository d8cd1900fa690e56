package io.slipstream.store.jdbc.h2;

import io.slipstream.store.Store;
import io.slipstream.store.StoreUnavailableException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import javax.sql.DataSource;
import org.h2.engine.SessionLocal;
import org.h2.jdbc.JdbcConnection;
import org.h2.mvstore.MVStore;

/**
 * Group commit for the embedded H2 file: the commits of many transactions written in one chunk, each acknowledged only
 * once that chunk is in the file. With H2's {@code WRITE_DELAY=0} every commit wrote a chunk of its own (the changed
 * pages of every index it touched, and the header: {@link H2NewestChunk}), two thirds of a submission's CPU; and as
 * {@link OneWriterAtATime} lets one transaction write at a time, no two commits ever shared one.
 *
 * <p>How: H2 is told not to write at commit ({@code MVStore.setAutoCommitDelay(-1)}: no delay, no background writer
 * either; H2 then writes only when a transaction's changes outgrow its buffer, as before). A transaction commits in
 * memory and, as it leaves the writer, writes the chunk only if no other transaction waits to write (or the group is
 * large, or its oldest commit has waited 3 ms); else the next writer to leave decides again. So the chunk is always
 * written by the writer, with no transaction half done ({@link OneWriterAtATime}'s reason), holding every commit made
 * so far; the header is pointed at it, and every commit it holds is answered ({@link #afterCall} waits until then).
 * A commit is visible a moment before it is in the file (as it was before, between H2's commit and its write; see
 * {@link #afterCall}).
 *
 * <p>A connection opened with the URL's {@code WRITE_DELAY=0} sets H2 back to writing at each commit (the pool opens
 * them): safe, and undone at the next group write.
 */
public final class H2GroupCommit {
    /** H2's auto-commit delay for "never by time": H2 writes when told to, or when unwritten changes grow too large. */
    private static final int NO_DELAY_AND_NO_WRITER = -1;
    /** A writer that leaves with others waiting writes the group anyway once it is this large... */
    private static final int MOST_SESSIONS = 128;
    /** ...or once its oldest commit has waited this long. */
    private static final long LONGEST_WAIT_NANOS = 3_000_000;
    /**
     * How long a commit waits for a leaving writer to write it before it becomes the writer to write it itself: the
     * writers after it may have given up waiting (a writer waits 3 s) or be one long transaction.
     */
    private static final long FALLBACK_NANOS = 50_000_000;

    private final MVStore store;
    private final OneWriterAtATime writer;
    private final H2NewestChunk newestChunk;
    /** Every change of the writing sessions numbered up to this ({@link OneWriterAtATime#leave}) is in the file. */
    private volatile long durable;
    /** The newest session that left unwritten and whose caller waits for it (not deferred); the writer's alone. */
    private long awaited;
    /** When the oldest session not yet written left (0: none waits); the writer's alone. */
    private long waitingSince;
    private final Object written = new Object();
    private final ReentrantLock writing = new ReentrantLock();
    /** Whether the calling thread's writes are not waited for ({@link #defer}). */
    private final ThreadLocal<Boolean> deferring = ThreadLocal.withInitial(() -> false);
    /** The newest session committed and not waited for ({@link #defer}): {@link #awaitDurable} waits for it. */
    private final AtomicLong deferredUpTo = new AtomicLong();

    private H2GroupCommit(MVStore store, OneWriterAtATime writer, H2NewestChunk newestChunk) {
        this.store = store;
        this.writer = writer;
        this.newestChunk = newestChunk;
        store.setAutoCommitDelay(NO_DELAY_AND_NO_WRITER);
        writer.beforeLeave(this::leaving);
    }

    /** Group commit for the H2 database behind {@code dataSource}, whose writers are {@code writer}'s. */
    public static H2GroupCommit of(DataSource dataSource, OneWriterAtATime writer) {
        try (Connection connection = dataSource.getConnection()) {
            SessionLocal session = (SessionLocal) connection.unwrap(JdbcConnection.class).getSession();
            return new H2GroupCommit(session.getDatabase().getStore().getMvStore(), writer, H2NewestChunk.of(dataSource));
        } catch (SQLException e) {
            throw new IllegalStateException("cannot reach the H2 database just opened: " + e.getMessage(), e);
        }
    }

    /**
     * Run by each writer as it leaves, still the writer (its transaction committed or rolled back, none other under
     * way): it writes the group when no one waits to write after it (no later writer would), or when the group has
     * grown large or waited long enough; else the next writer to leave decides again.
     */
    private void leaving(long session) {
        if (durable >= session) {
            return;
        }
        long now = System.nanoTime();
        if (waitingSince == 0) {
            waitingSince = now;
        }
        if (!deferring.get()) {
            awaited = session;
        }
        // A deferred commit alone is no reason to write (the next writer, or the deferring one's await, writes it), unless
        // a caller waits for an earlier one: no writer after it may come for 50 ms.
        boolean alone = !writer.othersWaiting() && (!deferring.get() || awaited > durable);
        if (alone || session - durable >= MOST_SESSIONS || now - waitingSince >= LONGEST_WAIT_NANOS
                || store.getUnsavedMemory() > store.getAutoCommitMemory() / 4) { // before H2 writes on a reader's thread
            writeGroup(session);
        }
    }

    /** Writes every commit made so far, as the writer (after the schema's migrations: the header points at their chunk). */
    public void writeNow() {
        long own;
        do {
            own = writer.tryEnter(Duration.ofMillis(100)); // at open the writer is not taken for long
        } while (own == 0);
        try {
            writeGroup(own);
        } finally {
            writer.leave();
        }
    }

    /** Writes every commit made so far in one chunk; by the writer, whose session is {@code covered} (every earlier one has ended). */
    private void writeGroup(long covered) {
        // H2's file channel closes when a thread interrupted writes to it, and the store with it: not on this thread.
        boolean interrupted = Thread.interrupted();
        try {
            store.setAutoCommitDelay(NO_DELAY_AND_NO_WRITER); // a connection opened with the URL's WRITE_DELAY=0 set it back
            store.commit();
            newestChunk.afterCommit();
        } catch (RuntimeException e) {
            throw new StoreUnavailableException("the store could not write its file: " + e.getMessage(), e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        durable = covered;
        waitingSince = 0;
        synchronized (written) {
            written.notifyAll();
        }
    }

    /**
     * Until the returned scope is closed, the calling thread's commits are not waited for ({@link #afterCall} returns at
     * once) nor written as it leaves alone (only once its oldest unwritten commit is 3 ms old), and its writes go before
     * those queued ({@link OneWriterAtATime#prioritize}); closing it waits for them ({@link #awaitDurable}).
     */
    public Store.Deferral defer() {
        boolean outer = deferring.get();
        deferring.set(true);
        OneWriterAtATime.Priority first = writer.prioritize(); // one writer a step, each behind one request at most
        return () -> {
            first.close();
            deferring.set(outer);
            awaitDurable();
        };
    }

    /** Returns once every commit made so far without being waited for ({@link #defer}) is in the file. */
    public void awaitDurable() {
        awaitWritten(deferredUpTo.get(), false); // no writer leaving would write a deferred commit: write it now
    }

    /**
     * After each call of the store (a transaction, or a statement in autocommit): if it wrote, returns once what it
     * wrote is in the file. A read does not wait, though what it sees may not be in the file yet: an answer that
     * acknowledges a write from what a read found (a repeated submission answered with the run its idempotency key
     * finds) reads as a writer does ({@code FOR UPDATE}), so that what it found is written before it answers.
     *
     * @param session the call's writing session ({@link OneWriterAtATime#leave}); 0: it wrote nothing
     * @throws StoreUnavailableException if the chunk holding it could not be written (nothing is acknowledged then)
     */
    public void afterCall(long session) {
        if (session != 0 && deferring.get()) {
            deferredUpTo.accumulateAndGet(session, Math::max);
            return;
        }
        awaitWritten(session, true);
    }

    /** @param leftToWriters whether a writer leaving may write it first (a commit not deferred: its writer decided so) */
    private void awaitWritten(long session, boolean leftToWriters) {
        if (session == 0 || durable >= session) {
            return; // a read; or written as its writer left, or by a later one
        }
        long deadline = System.nanoTime() + (leftToWriters ? FALLBACK_NANOS : 0);
        synchronized (written) {
            long left;
            while (durable < session && (left = deadline - System.nanoTime()) > 0) {
                try {
                    written.wait(left / 1_000_000, (int) (left % 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        if (durable >= session) {
            return;
        }
        // No writer wrote it in time: become the writer and write it, looking again each millisecond whether another
        // writer has. No timeout: the commit is made, and failing it would have a client repeat what is done; a
        // store that cannot write fails instead.
        writing.lock();
        try {
            while (durable < session) {
                long own = writer.tryEnter(Duration.ofMillis(1));
                if (own != 0) {
                    try {
                        if (durable < session) {
                            writeGroup(own);
                        }
                    } finally {
                        writer.leave();
                    }
                }
            }
        } finally {
            writing.unlock();
        }
    }
}
