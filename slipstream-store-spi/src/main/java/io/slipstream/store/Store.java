package io.slipstream.store;

import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Everything Slipstream persists, as facets: what is read ({@link StoreReads}: {@link #runs}, {@link #documents},
 * {@link #credentials}, {@link #usage}, each read on its own), what is written ({@link #write}: one transaction, its
 * writes and the reads they need on a {@link StoreTx}), and the leadership ({@link #leases}: each call a transaction of
 * its own). Every change of a versioned record is compare-and-set: it names the version it read and fails with
 * {@link ConflictException} if the stored one differs. Implementations MUST be safe for concurrent use.
 *
 * <p>A transaction is explicit: only its {@link StoreTx} is in it. Inside {@link #write}'s or {@link #read}'s work the
 * store itself is not used, on that thread: each of its calls fails with {@link IllegalStateException} (it would
 * neither see the transaction's writes nor commit with them, and where writes are one at a time it would wait for the
 * transaction it is in); and a {@link StoreTx} is not used once its work has returned.
 *
 * <p>Stored records are data, read by plain binding (see {@code StoredFormat}). One that cannot be read never stops
 * the others: a lookup of it throws {@link UnreadableRecordException} naming it, and a list leaves it out (logging it
 * once at ERROR), except {@link RunReads#rows}, which returns it as a {@link RunRow.Unreadable}.
 */
public interface Store extends StoreReads, AutoCloseable {

    /**
     * Checks that the store answers now; {@link StoreUnavailableException} if it does not (within a moment: callers
     * use it for readiness). Every other method throws the same when the store cannot be reached.
     */
    void ping();

    /**
     * Runs {@code work} in one transaction: all its writes happen, or none do (it throws: they are rolled back and the
     * failure comes out as it was thrown). Its reads see its own writes; other threads see them once it has committed.
     */
    <T> T write(Function<StoreTx, T> work);

    /** {@link #write}, for work that answers nothing. */
    default void commit(Consumer<StoreTx> work) {
        write(tx -> {
            work.accept(tx);
            return null;
        });
    }

    /** Runs {@code work}'s reads in one transaction, which writes nothing: what the store holds at one moment, where the store can tell. */
    <T> T read(Function<StoreReads, T> work);

    /**
     * Until the returned scope is closed, each write on the calling thread returns once committed (every reader sees
     * it) without waiting until it is durable; {@link #awaitDurable} and the scope's {@link Deferral#close} return
     * once it is. For a writer that answers no one and acts on nothing outside the store in between: the control loop
     * within a cycle, whose runs' steps are each a transaction, and which before it tells an executor to act, and at
     * the end of its cycle, waits until what it wrote is durable. A crash may lose those writes, never one that was
     * waited for, and never a later one without them: a store makes its commits durable in the order they were made.
     * Where writers take turns, its writes may go before those queued (each step would otherwise wait behind every
     * request). Writes on other threads are unchanged. A store whose commits cost no more to wait for ignores it (the
     * default).
     */
    default Deferral deferDurability() {
        return () -> { };
    }

    /**
     * Returns once every write committed so far is durable (those of a {@link #deferDurability} scope, on any thread);
     * at once where there are none. {@link StoreUnavailableException} if the store could not make them durable.
     */
    default void awaitDurable() {
    }

    /** A scope of {@link #deferDurability}: closing it ends it, on the thread that opened it, and awaits its writes. */
    @FunctionalInterface
    interface Deferral extends AutoCloseable {
        @Override
        void close();
    }

    /** The leadership of the control loop: each call is a transaction of its own. */
    Leases leases();

    @Override
    void close();
}
