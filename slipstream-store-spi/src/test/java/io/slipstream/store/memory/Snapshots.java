package io.slipstream.store.memory;

import io.slipstream.store.StoreUnavailableException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The state of an {@link InMemoryStore} and its transactions. The committed state is an immutable snapshot
 * ({@link Tables}) behind one volatile reference, replaced whole on each commit. Readers never wait and never see a
 * transaction half done. Writers take one lock: a single write copies the tables it changes and publishes them;
 * {@link #inTransaction} holds the lock for the whole transaction and works on a private copy, published if the work
 * returns and dropped if it throws (a rollback). Inside a transaction, the calling thread reads its own writes; other
 * threads read what was committed before, and their writes wait for it (up to {@link InMemoryStore#LOCK_TIMEOUT},
 * like a database's lock timeout). Every call checks that the store is open and reachable (a test's outage).
 */
final class Snapshots {
    private final ReentrantLock writer = new ReentrantLock();
    private final ThreadLocal<Tables> transaction = new ThreadLocal<>();
    private volatile Tables committed = new Tables();
    private volatile boolean closed;
    private volatile boolean unreachable;
    private final AtomicLong callsUntilOutage = new AtomicLong(-1);

    /** Runs {@code work} in one transaction, or in the calling thread's open one. */
    <T> T inTransaction(Supplier<T> work) {
        if (transaction.get() != null) {
            return work.get();
        }
        requireOpen();
        lock();
        try {
            Tables working = committed.copy();
            transaction.set(working);
            T result;
            try {
                result = work.get();
            } finally {
                transaction.remove();
            }
            committed = working.frozen();
            return result;
        } finally {
            writer.unlock();
        }
    }

    /** The state this thread reads: its open transaction's, or the last committed one. */
    Tables read() {
        requireOpen();
        Tables open = transaction.get();
        return open != null ? open : committed;
    }

    /** One write: joins this thread's transaction, or commits on its own (all of it, or nothing if it throws). */
    <T> T write(Function<Tables, T> change) {
        requireOpen();
        Tables open = transaction.get();
        if (open != null) {
            return change.apply(open);
        }
        lock();
        try {
            Tables working = committed.copy();
            T result = change.apply(working);
            committed = working.frozen();
            return result;
        } finally {
            writer.unlock();
        }
    }

    private void lock() {
        requireOpen();
        Duration timeout = InMemoryStore.LOCK_TIMEOUT;
        try {
            if (!writer.tryLock(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new StoreUnavailableException("the in-memory store waited " + timeout.toSeconds() + " s for another thread's transaction", null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the in-memory store", e);
        }
    }

    /** Fails as a closed store, or as an unreachable one while a test's outage lasts (counting this call). */
    void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the in-memory store is closed");
        }
        if (!unreachable && callsUntilOutage.get() >= 0 && callsUntilOutage.getAndDecrement() == 0) {
            unreachable = true;
        }
        if (unreachable) {
            throw new StoreUnavailableException("the in-memory store is unreachable (a test's outage)", null);
        }
    }

    void close() {
        closed = true;
    }

    /** {@link InMemoryStore#simulateOutage}. */
    void outage(boolean on) {
        callsUntilOutage.set(-1);
        unreachable = on;
    }

    /** {@link InMemoryStore#simulateOutageAfter}. */
    void outageAfter(int calls) {
        unreachable = false;
        callsUntilOutage.set(calls);
    }
}
