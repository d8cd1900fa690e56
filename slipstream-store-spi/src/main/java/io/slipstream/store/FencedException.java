package io.slipstream.store;

/**
 * A write of a control loop that no longer leads: another holder took the lease (a newer epoch) since this one
 * won it. Nothing was written; the old leader must stop acting at once.
 */
public final class FencedException extends RuntimeException {
    private final long epoch;
    private final long current;

    public FencedException(long epoch, long current) {
        super("fenced: this control loop leads at epoch " + epoch + " but the store's leader is at epoch " + current
                + " (another replica took over); nothing was written", null, false, false);
        this.epoch = epoch;
        this.current = current;
    }

    public long epoch() {
        return epoch;
    }

    public long current() {
        return current;
    }
}
