package io.slipstream.store.memory;

import io.slipstream.store.StoreUnavailableException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The state of an {@link InMemoryStore} and its transactions. The committed state is an immutable snapshot
 * ({@link Tables}) behind one volatile reference, replaced whole on each commit. Readers never wait and never see a
 * transaction half done. Writers take one lock: {@link #inTransaction} holds it for the whole transaction and works on
 * a private copy, published if the work returns and dropped if it throws (a rollback); other threads read what was
 * committed before, and their writes wait for it (up to its lock timeout, like a database's lock
 * timeout). A transaction is never joined: inside one (or a {@link #view}) the store's other calls on that thread are
 * refused. Every call checks that the store is open and reachable (a test's outage).
 */
final class Snapshots {
    private final ReentrantLock writer = new ReentrantLock();
    private final Duration lockTimeout;
    /** Set while the thread is in a transaction or a view: to refuse the store's other calls there, never to join them. */
    private final ThreadLocal<Boolean> inside = new ThreadLocal<>();
    private volatile Tables committed = new Tables();
    private volatile boolean closed;
    private volatile boolean unreachable;
    private final AtomicLong callsUntilOutage = new AtomicLong(-1);

    Snapshots(Duration lockTimeout) {
        this.lockTimeout = lockTimeout;
    }

    /** Runs {@code change} in one transaction, on a private copy of the tables: published if it returns, dropped if it throws. */
    <T> T inTransaction(Function<Tables, T> change) {
        requireOutside();
        requireOpen();
        lock();
        inside.set(Boolean.TRUE);
        try {
            Tables working = committed.copy();
            T result = change.apply(working);
            committed = working.frozen();
            return result;
        } finally {
            inside.remove();
            writer.unlock();
        }
    }

    /** Runs {@code work} over the tables as committed now, which it sees unchanged until it returns. */
    <T> T view(Function<Tables, T> work) {
        Tables now = read();
        inside.set(Boolean.TRUE);
        try {
            return work.apply(now);
        } finally {
            inside.remove();
        }
    }

    /** The last committed state, for one read. */
    Tables read() {
        requireOutside();
        requireOpen();
        return committed;
    }

    /** Refuses a call of the store made inside one of its transactions (or views) on this thread. */
    void requireOutside() {
        if (inside.get() != null) {
            throw new IllegalStateException("the store was called inside one of its own transactions: use the transaction given to "
                    + "the work (a transaction is never joined, and a second one would wait for this one)");
        }
    }

    private void lock() {
        Duration timeout = lockTimeout;
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
