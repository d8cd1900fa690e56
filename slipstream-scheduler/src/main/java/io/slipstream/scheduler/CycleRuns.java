package io.slipstream.scheduler;

import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * The runs one cycle may still preempt or promote: the state's reclaimable runs (in id order), less those the cycle
 * decided on. The state itself is not changed, so nothing of it is copied per cycle.
 */
final class CycleRuns implements Iterable<ActiveRun> {
    private final ClusterState state;
    /** Identity: a cycle's runs are the state's objects. */
    private final Set<ActiveRun> decided = Collections.newSetFromMap(new IdentityHashMap<>());

    CycleRuns(ClusterState state) {
        this.state = state;
    }

    /** Whether the run (or a view of it: a search may see a run without some of its instances) may still be decided on. */
    boolean contains(ActiveRun run) {
        ActiveRun kept = state.reclaimable.get(run.id());
        return kept != null && !decided.contains(kept);
    }

    /** The run (or a view of it) was preempted, shrunk or promoted this cycle. */
    void remove(ActiveRun run) {
        ActiveRun kept = state.reclaimable.get(run.id());
        decided.add(kept != null ? kept : run);
    }

    /** The elastic runs still undecided, in id order. */
    Iterable<ActiveRun> elastic() {
        return () -> undecided(state.elastic.values());
    }

    /** Every run still reclaimable, in id order. */
    @Override
    public Iterator<ActiveRun> iterator() {
        return undecided(state.reclaimable.values());
    }

    /** Those on idle capacity (NotInQuota), in id order: the subset most passes need, without walking every run. */
    Iterable<ActiveRun> borrowers() {
        return () -> undecided(state.borrowers.values());
    }

    private Iterator<ActiveRun> undecided(Collection<ActiveRun> runs) {
        Iterator<ActiveRun> all = runs.iterator();
        if (decided.isEmpty()) {
            return Collections.unmodifiableCollection(runs).iterator();
        }
        return new Iterator<>() {
            private ActiveRun next = advance();

            private ActiveRun advance() {
                while (all.hasNext()) {
                    ActiveRun run = all.next();
                    if (!decided.contains(run)) {
                        return run;
                    }
                }
                return null;
            }

            @Override
            public boolean hasNext() {
                return next != null;
            }

            @Override
            public ActiveRun next() {
                if (next == null) {
                    throw new NoSuchElementException();
                }
                ActiveRun run = next;
                next = advance();
                return run;
            }
        };
    }
}
