package io.slipstream.scheduler;

import java.util.List;

/** The whole input of one scheduling cycle; immutable. */
public record ClusterSnapshot(List<NodeState> nodes, List<PendingRun> pending) {
    public ClusterSnapshot {
        nodes = List.copyOf(nodes);
        pending = List.copyOf(pending);
    }
}
