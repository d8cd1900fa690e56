package io.slipstream.scheduler;

import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.List;

/**
 * A quota's borrowers, in no particular order, and the first of them by id; grouped by what each holds (a quota's
 * borrowers hold few different amounts) and the least any holds, per resource. Grouped as they are indexed, while
 * each is being read anyway: preemption for fairness searches by group, and grouping them in a walk of its own,
 * each borrower's amount read again from memory, was most of that step's time. {@link ClusterState} keeps one per
 * quota ({@link ClusterState#borrowersByQuota}); {@link FairPreemption} reads them.
 */
final class QuotaBorrowers {
    /** More amounts than this make no groups: {@link #byAmount} is then {@code null}. */
    static final int GROUPS = 32;
    final List<Borrowed> runs = new ArrayList<>();
    RunId first;
    /** The amounts held, in the order first seen, and who holds each, in the order indexed. */
    List<Resources> amounts = new ArrayList<>();
    List<List<Borrowed>> byAmount = new ArrayList<>();
    private int last = -1;
    long leastGpu = Long.MAX_VALUE;
    long leastMilliCpu = Long.MAX_VALUE;
    long leastMemory = Long.MAX_VALUE;

    void add(Borrowed borrowed) {
        runs.add(borrowed);
        if (first == null || borrowed.run().id().compareTo(first) < 0) {
            first = borrowed.run().id();
        }
        Resources holds = borrowed.holds();
        leastGpu = Math.min(leastGpu, holds.gpu());
        leastMilliCpu = Math.min(leastMilliCpu, holds.milliCpu());
        leastMemory = Math.min(leastMemory, holds.memoryBytes());
        if (byAmount != null) {
            // A walk of the few amounts seen, the last one first: cheaper than hashing each amount.
            int kind = last >= 0 && amounts.get(last).equals(holds) ? last : amounts.indexOf(holds);
            if (kind < 0) {
                if (amounts.size() == GROUPS) {
                    amounts = null;
                    byAmount = null;
                    return;
                }
                kind = amounts.size();
                amounts.add(holds);
                byAmount.add(new ArrayList<>());
            }
            byAmount.get(kind).add(borrowed);
            last = kind;
        }
    }

    /**
     * A borrower and what it holds, all its instances together, with what orders victims copied out of the run
     * ({@link VictimSearch#VICTIM_ORDER}) when first compared: a search orders a side's borrowers by them, and reading
     * each run (and its instants) again from memory was most of that. Copied when first needed, not when indexed: most
     * borrowers of a cycle are never compared, and reading every borrower's instants made building the state a tenth
     * slower.
     */
    static final class Borrowed {
        private final ActiveRun run;
        private final Resources holds;
        private boolean copied;
        private int priority;
        private long workSeconds;
        private int workNanos;
        private long startSeconds;
        private int startNanos;

        Borrowed(ActiveRun run, Resources holds) {
            this.run = run;
            this.holds = holds;
        }

        ActiveRun run() {
            return run;
        }

        Resources holds() {
            return holds;
        }

        private void copy() {
            if (!copied) {
                priority = run.priority();
                java.time.Instant work = run.workSince();
                workSeconds = work.getEpochSecond();
                workNanos = work.getNano();
                startSeconds = run.startedAt().getEpochSecond();
                startNanos = run.startedAt().getNano();
                copied = true;
            }
        }

        /** {@link VictimSearch#VICTIM_ORDER}, on the copies. */
        static int inVictimOrder(Borrowed a, Borrowed b) {
            a.copy();
            b.copy();
            if (a.priority != b.priority) {
                return a.priority < b.priority ? -1 : 1;
            }
            if (a.workSeconds != b.workSeconds || a.workNanos != b.workNanos) { // the latest first
                return a.workSeconds != b.workSeconds ? Long.compare(b.workSeconds, a.workSeconds) : Integer.compare(b.workNanos, a.workNanos);
            }
            if (a.startSeconds != b.startSeconds || a.startNanos != b.startNanos) { // the youngest first
                return a.startSeconds != b.startSeconds ? Long.compare(b.startSeconds, a.startSeconds) : Integer.compare(b.startNanos, a.startNanos);
            }
            return a.run.id().compareTo(b.run.id());
        }

        @Override
        public String toString() {
            return "Borrowed[" + run.id() + ", " + holds + "]";
        }
    }
}
