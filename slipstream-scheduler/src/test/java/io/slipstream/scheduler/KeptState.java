package io.slipstream.scheduler;

import io.slipstream.api.run.RunId;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link ClusterState} kept between a test's cycles, as the simulator keeps one: only the runs that changed since the
 * last cycle are added, removed or updated (found by comparing the active runs with what was given last time).
 */
final class KeptState {
    private final ClusterState state;
    private final Map<RunId, ActiveRun> given = new HashMap<>();

    KeptState(List<NodeState> nodes, List<QuotaState> quotas) {
        this.state = new ClusterState(nodes, quotas);
    }

    /** The state with these active runs, after only the changes since the last call. */
    ClusterState with(Collection<ActiveRun> active) {
        Map<RunId, ActiveRun> now = new HashMap<>();
        active.forEach(run -> now.put(run.id(), run));
        for (RunId gone : new ArrayList<>(given.keySet())) {
            if (!now.containsKey(gone)) {
                state.remove(gone);
                given.remove(gone);
            }
        }
        for (ActiveRun run : active) {
            ActiveRun before = given.put(run.id(), run);
            if (before == null) {
                state.add(run);
            } else if (!before.equals(run)) {
                state.update(run);
            }
        }
        return state;
    }
}
