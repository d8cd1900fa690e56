package io.slipstream.store;

import java.util.function.Function;

/**
 * The store as a control loop that leads at {@code epoch} sees it: every write transaction first holds the fence and
 * checks the epoch ({@link StoreTx#requireLeader}), so a leader that lost its lease (paused past it, cut off, slow)
 * writes nothing once another replica took over: {@link FencedException}. Reads and the leases are the store's own.
 * Works over any {@link Store}; it does not own the store ({@link #close} leaves it open).
 */
public final class FencedStore implements Store {
    private final Store delegate;
    private final long epoch;

    public FencedStore(Store delegate, long epoch) {
        this.delegate = delegate;
        this.epoch = epoch;
    }

    public long epoch() {
        return epoch;
    }

    @Override
    public <T> T write(Function<StoreTx, T> work) {
        return delegate.write(tx -> {
            tx.requireLeader(epoch);
            return work.apply(tx);
        });
    }

    @Override
    public <T> T read(Function<StoreReads, T> work) {
        return delegate.read(work);
    }

    @Override
    public RunReads runs() {
        return delegate.runs();
    }

    @Override
    public DocumentReads documents() {
        return delegate.documents();
    }

    @Override
    public CredentialReads credentials() {
        return delegate.credentials();
    }

    @Override
    public UsageReads usage() {
        return delegate.usage();
    }

    @Override
    public Leases leases() {
        return delegate.leases();
    }

    @Override
    public void ping() {
        delegate.ping();
    }

    @Override
    public Deferral deferDurability() {
        return delegate.deferDurability();
    }

    @Override
    public void awaitDurable() {
        delegate.awaitDurable();
    }

    @Override
    public void close() {
        // the store belongs to whoever opened it
    }
}
