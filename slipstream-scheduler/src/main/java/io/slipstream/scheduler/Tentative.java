package io.slipstream.scheduler;

/**
 * Changes to a cycle's working cluster and quota book that are kept only if {@link #commit} is called (Volcano's
 * {@code Statement}): a search tries victims, a gang its instances, a quota its preemptions, and {@link #discard} (or
 * {@link #close} without a commit) puts back everything changed since it opened, newest first. Tentatives nest: an
 * inner one discarded leaves the outer one's changes as they are; an inner one committed hands its changes to the outer
 * one, which may still discard them. They close innermost first (an {@link IllegalStateException} says otherwise);
 * meant for try-with-resources:
 *
 * <pre>{@code
 * try (Tentative trial = state.tentative()) {
 *     ... take, release, charge ...
 *     if (fits) {
 *         trial.commit();
 *     }
 * } // discarded unless committed
 * }</pre>
 *
 * A trial that is never kept (a search that only finds out) is {@link ClusterState#tryAndUndo}.
 */
final class Tentative implements AutoCloseable {
    private final Journal journal;
    /** The journal's size when it opened: what it discards begins there. */
    final int start;
    /** The tentative it was opened in ({@code null}: none). */
    final Tentative outer;
    private boolean open = true;

    Tentative(Journal journal, int start, Tentative outer) {
        this.journal = journal;
        this.start = start;
        this.outer = outer;
    }

    /** Keeps the changes (the enclosing tentative, if any, may still discard them). */
    void commit() {
        requireOpen();
        journal.commit(this);
        open = false;
    }

    /** Puts back every change made since it opened, in reverse order. */
    void discard() {
        requireOpen();
        journal.discard(this);
        open = false;
    }

    /** Discards, unless it was committed or discarded already. */
    @Override
    public void close() {
        if (open) {
            discard();
        }
    }

    private void requireOpen() {
        if (!open) {
            throw new IllegalStateException("this tentative was committed or discarded already");
        }
    }
}
