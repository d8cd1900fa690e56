package io.slipstream.scheduler;

import java.util.List;

/** The whole input of one scheduling cycle; immutable. */
public record ClusterSnapshot(List<NodeState> nodes, List<QuotaState> quotas, List<ActiveRun> active, List<PendingRun> pending) {
    public ClusterSnapshot {
        nodes = List.copyOf(nodes);
        quotas = List.copyOf(quotas);
        active = List.copyOf(active);
        pending = List.copyOf(pending);
    }
}
