package io.slipstream.store.jdbc.h2;

import io.slipstream.store.StoreUnavailableException;
import java.sql.Connection;
import java.sql.SQLException;
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
 * memory, lets the writer go, and then waits in {@link #afterCall} until a chunk holds its commit: the first waiter
 * becomes the writer again (so no transaction is half done while the chunk is written: {@link OneWriterAtATime}'s
 * reason), writes one chunk with every commit made so far, points the header at it, and so answers every waiter whose
 * commit came before. The others meanwhile commit the next group. A commit is visible a moment before it is in the
 * file (as it was before, between H2's commit and its write; see {@link #afterCall}).
 *
 * <p>A connection opened with the URL's {@code WRITE_DELAY=0} sets H2 back to writing at each commit (the pool opens
 * them): safe, and undone at the next group write.
 */
public final class H2GroupCommit {
    /** H2's auto-commit delay for "never by time": H2 writes when told to, or when unwritten changes grow too large. */
    private static final int NO_DELAY_AND_NO_WRITER = -1;

    private final MVStore store;
    private final OneWriterAtATime writer;
    private final H2NewestChunk newestChunk;
    /** Every change of the writing sessions numbered up to this ({@link OneWriterAtATime#leave}) is in the file. */
    private volatile long durable;
    private final ReentrantLock writing = new ReentrantLock();

    private H2GroupCommit(MVStore store, OneWriterAtATime writer, H2NewestChunk newestChunk) {
        this.store = store;
        this.writer = writer;
        this.newestChunk = newestChunk;
        store.setAutoCommitDelay(NO_DELAY_AND_NO_WRITER);
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
     * After each call of the store (a transaction, or a statement in autocommit): if it wrote, returns once what it
     * wrote is in the file. A read does not wait, though what it sees may not be in the file yet: an answer that
     * acknowledges a write from what a read found (a repeated submission answered with the run its idempotency key
     * finds) reads as a writer does ({@code FOR UPDATE}), so that what it found is written before it answers.
     *
     * @param session the call's writing session ({@link OneWriterAtATime#leave}); 0: it wrote nothing
     */
    public void afterCall(long session) {
        if (session == 0 || durable >= session) {
            return; // a read; or a write that began after this call's commit took it along
        }
        writing.lock();
        try {
            if (durable >= session) {
                return;
            }
            // No timeout: the commits to write are made, and failing them would have clients repeat what is done. A
            // store that cannot write fails below instead (H2 stops: each waiter gets the failure, none an answer).
            long covered = writer.enterUninterruptibly(); // this write's own session: every one before it has ended
            try {
                store.setAutoCommitDelay(NO_DELAY_AND_NO_WRITER);
                store.commit();
                newestChunk.afterCommit();
                durable = covered;
            } catch (RuntimeException e) {
                throw new StoreUnavailableException("the store could not write its file: " + e.getMessage(), e);
            } finally {
                writer.leave();
            }
        } finally {
            writing.unlock();
        }
    }
}
