package io.slipstream.store.memory;

import java.util.function.Supplier;

/**
 * The tables one transaction's (or one read's) work sees, for each of its calls until the work returns: each call
 * checks that the store is reachable (a test's outage mid-transaction fails it) and that the work has not returned.
 */
final class Working implements Supplier<Tables> {
    private final Snapshots snapshots;
    private final Tables tables;
    private volatile boolean open = true;

    Working(Snapshots snapshots, Tables tables) {
        this.snapshots = snapshots;
        this.tables = tables;
    }

    @Override
    public Tables get() {
        if (!open) {
            throw new IllegalStateException("the transaction has ended: its work returned");
        }
        snapshots.requireOpen();
        return tables;
    }

    void end() {
        open = false;
    }
}
