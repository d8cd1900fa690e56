package io.slipstream.scheduler;

import java.util.ArrayList;
import java.util.List;

/**
 * The undo log of a cycle's working state: the working cluster and the quota book of one {@link ClusterState} write
 * to the same journal, so that their changes are undone together, in the reverse of the order they were made. Nothing
 * is written while no {@link Tentative} is open: changes between cycles (runs added, removed, updated) are final.
 * Each entry puts back what one change overwrote (a before-image, not an inverse operation: saturating sums and
 * allocations that overlap are put back exactly too). Not thread-safe.
 */
final class Journal {
    /** Puts back what one change overwrote. */
    @FunctionalInterface
    interface Undo {
        void undo();
    }

    private final List<Undo> entries = new ArrayList<>();
    /** The innermost open tentative ({@code null}: none, nothing is written). */
    private Tentative innermost;

    /** Whether changes are written now (a tentative is open): callers skip building an entry when not. */
    boolean recording() {
        return innermost != null;
    }

    /** Writes an entry, if a tentative is open. */
    void record(Undo undo) {
        if (innermost != null) {
            entries.add(undo);
        }
    }

    /** Opens a tentative inside the innermost open one (if any): everything changed from now on can be discarded. */
    Tentative open() {
        innermost = new Tentative(this, entries.size(), innermost);
        return innermost;
    }

    /** Keeps the changes since {@code tentative} opened: they become its enclosing tentative's, or final. */
    void commit(Tentative tentative) {
        close(tentative);
        if (innermost == null) {
            entries.clear(); // nothing can undo them now
        }
    }

    /** Puts back everything changed since {@code tentative} opened, newest first. */
    void discard(Tentative tentative) {
        close(tentative);
        for (int i = entries.size() - 1; i >= tentative.start; i--) {
            entries.remove(i).undo();
        }
    }

    private void close(Tentative tentative) {
        if (tentative != innermost) {
            throw new IllegalStateException(innermost == null ? "no tentative is open" : "an inner tentative is still open: close it first");
        }
        innermost = tentative.outer;
    }

    /** Entries written and not yet committed for good or undone, for tests. */
    int size() {
        return entries.size();
    }
}
