package io.slipstream.server.control;

import io.slipstream.api.run.RunId;
import java.util.HashSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs whose decision (admission, preemption, promotion) met a conflict. A conflict is decided again at once (the
 * loop wakes up); a second one in a row is logged and waits for the tick, so that a conflict that keeps coming back
 * (a bug, or a store that refuses the write) cannot spin the loop, and says what it is.
 */
final class RepeatedConflicts {
    private static final Logger LOG = LoggerFactory.getLogger(RepeatedConflicts.class);

    private final Runnable wakeUp;
    private Set<RunId> lastCycle = Set.of();
    private final Set<RunId> thisCycle = new HashSet<>();

    RepeatedConflicts(Runnable wakeUp) {
        this.wakeUp = wakeUp;
    }

    /** Starts a cycle's scheduling (what a failed one noted is forgotten, as if it had not run). */
    void begin() {
        thisCycle.clear();
    }

    /** {@code what} names the decision that conflicted ("admission", "preempt", ...). */
    void conflicted(RunId run, String what, String why) {
        thisCycle.add(run);
        if (lastCycle.contains(run)) {
            LOG.warn("run {}: its {} conflicted again ({}); deciding again next tick", run, what, why);
        } else {
            wakeUp.run(); // cancelled or changed meanwhile: decide again
        }
    }

    /** Ends the cycle's scheduling: what conflicted in it is what the next one compares with. */
    void endCycle() {
        lastCycle = Set.copyOf(thisCycle);
        thisCycle.clear();
    }
}
