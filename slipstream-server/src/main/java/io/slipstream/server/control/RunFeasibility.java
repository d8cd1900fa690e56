package io.slipstream.server.control;

import io.slipstream.api.run.WaitReason;
import io.slipstream.executor.NodeInfo;
import io.slipstream.model.RunRecord;
import io.slipstream.scheduler.ClusterSnapshot;
import io.slipstream.scheduler.ClusterState;
import io.slipstream.scheduler.CycleResult;
import io.slipstream.scheduler.Decision;
import io.slipstream.scheduler.InstanceRequest;
import io.slipstream.scheduler.NodeState;
import io.slipstream.scheduler.PendingRun;
import io.slipstream.scheduler.QuotaState;
import io.slipstream.scheduler.Scheduler;
import io.slipstream.store.StoredDocument;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Whether a new run could start at all: the scheduler's own decision for it on an idle cluster (every node up,
 * nothing else running or queued, the quotas as they are). A run it would not admit even then can never start until
 * nodes or quotas change; the reason is the scheduler's, so it cannot disagree with what the queue will say.
 */
public final class RunFeasibility {
    private RunFeasibility() {
    }

    /**
     * Why the run could not start even on an idle cluster ({@code empty}: it could). An instance no node could ever hold
     * is said first, whatever its quota says: growing the quota would never let it run.
     */
    public static Optional<Decision.Wait> onAnIdleCluster(RunRecord run, List<NodeInfo> nodes, List<StoredDocument> quotas) {
        return onAnIdleCluster(run, nodes, quotas, null);
    }

    /**
     * As above, on the cluster's topology: a group that must be in one domain no domain could ever hold never starts.
     * {@code topology} {@code null}: the run asks nothing of it (whatever idle cluster there is serves).
     */
    public static Optional<Decision.Wait> onAnIdleCluster(RunRecord run, List<NodeInfo> nodes, List<StoredDocument> quotas, ClusterTopology topology) {
        for (InstanceRequest instance : SnapshotBuilder.requests(run)) {
            if (nodes.stream().noneMatch(node -> node.capacity().covers(instance.resources()))) {
                return Optional.of(new Decision.Wait(run.id(), WaitReason.NoNodeFits, "no node can ever hold its instance " + instance.nodeGroup()
                        + " (" + instance.resources() + ")", 0));
            }
        }
        PendingRun pending = new PendingRun(run.id(), run.quotaId(), run.spec().idleResources(), run.priority(), run.createdAt(),
                SnapshotBuilder.requests(run, topology == null ? ClusterTopology.NONE : topology), false);
        CycleResult result;
        synchronized (RunFeasibility.class) { // one idle cluster, not thread-safe: a check is a short cycle
            result = new Scheduler().schedule(idleCluster(nodes, quotas, topology), List.of(pending), run.createdAt());
        }
        return result.waiting().stream().filter(wait -> wait.runId().equals(run.id())).findFirst();
    }

    /**
     * The idle cluster of these nodes and quotas, made again only when they change: made for every submission, from
     * thousands of nodes, it was a third of a submission's time and held the store's transaction meanwhile. A cycle
     * leaves the state it runs on as it found it ({@link ClusterState}), so one serves every check. Compared by what
     * the quotas say, not by their versions: two stores in one process (tests) number theirs alike. Guarded by the class.
     */
    private static IdleCluster idle;

    private record IdleCluster(List<NodeInfo> nodes, List<QuotaState> quotas, List<String> levels, ClusterState state) {
    }

    private static ClusterState idleCluster(List<NodeInfo> nodes, List<StoredDocument> quotaDocuments, ClusterTopology topology) {
        ClusterSnapshot snapshot = SnapshotBuilder.build(List.of(), Set.of(), quotaDocuments, List.of(), Map.of(), Set.of(), ClusterTopology.NONE);
        List<QuotaState> quotas = snapshot.quotas();
        // The executor hands the same node list until its nodes change: compared by identity first.
        // A topology is compared by its levels' labels: where the nodes are follows from those and the nodes' labels.
        List<String> levels = topology == null ? null : topology.labels();
        if (idle == null || !(idle.nodes == nodes || idle.nodes.equals(nodes)) || !idle.quotas.equals(quotas)
                || levels != null && !idle.levels.equals(levels)) {
            ClusterTopology placing = topology == null ? ClusterTopology.NONE : topology;
            levels = placing.labels();
            List<NodeState> states = SnapshotBuilder.build(nodes, Set.of(), List.of(), List.of(), Map.of(), Set.of(), placing).nodes();
            idle = new IdleCluster(nodes, quotas, levels, new ClusterState(states, quotas));
        }
        return idle.state;
    }

    /** Whether a run that waits for this reason on an idle cluster can never start on these nodes, whatever quotas do. */
    public static boolean neverOnTheseNodes(Decision.Wait wait) {
        return wait.reason() == WaitReason.NoNodeFits;
    }
}
