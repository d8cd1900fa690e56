package io.slipstream.store.jdbc;

import io.slipstream.api.run.RunId;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;

/**
 * The runs whose rows (of one table) transactions of this process wrote, each told once its transaction ended
 * (committed or not: a mark costs only a read), until a read that keeps rows between reads takes them
 * ({@link ActiveRunRows}, {@link HeldInstances}). A read that fails gives them back. Beyond {@link #MAX} marks (no read
 * took them for long) they are all forgotten and the next read reads everything again.
 */
final class WriteMarks {
    static final int MAX = 100_000;

    private final Set<RunId> marked = new HashSet<>();
    private boolean all;

    /** What a read took: the runs to read again, or {@code all}. */
    record Taken(Set<RunId> runs, boolean all) {
    }

    synchronized void add(Collection<RunId> runs) {
        if (all || runs.isEmpty()) {
            return; // all: the next read reads every run's
        }
        marked.addAll(runs);
        if (marked.size() > MAX) {
            all = true;
            marked.clear();
        }
    }

    /** The next read reads everything again. */
    synchronized void forgetAll() {
        all = true;
        marked.clear();
    }

    synchronized Taken take() {
        Taken taken = new Taken(Set.copyOf(marked), all);
        marked.clear();
        all = false;
        return taken;
    }

    /** A read that took {@code taken} failed: the next must still read those again. */
    synchronized void giveBack(Taken taken) {
        all |= taken.all();
        if (!all) {
            add(taken.runs());
        }
    }
}
