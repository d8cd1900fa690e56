package io.slipstream.executor;

/**
 * {@link Executor#fence} at an epoch older than one an executor was fenced at already: that executor's leader is
 * newer, or the store's epoch went back (a database restored from a dump while the executor's record was kept).
 * {@link #newest} says how far: a leader that knows it holds the store's lease moves its epoch past it.
 */
public final class EpochSupersededException extends RuntimeException {
    private final long newest;

    public EpochSupersededException(long epoch, long newest, String where) {
        super("fenced: epoch " + epoch + " is older than epoch " + newest + ", which " + where + " records", null, false, false);
        this.newest = newest;
    }

    public long newest() {
        return newest;
    }
}
