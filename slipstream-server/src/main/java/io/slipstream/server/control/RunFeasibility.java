package io.slipstream.server.control;

import io.slipstream.api.run.RunId;
import io.slipstream.api.run.WaitReason;
import io.slipstream.executor.NodeInfo;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import io.slipstream.scheduler.CycleResult;
import io.slipstream.scheduler.Decision;
import io.slipstream.scheduler.InstanceRequest;
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
        for (InstanceRequest instance : SnapshotBuilder.requests(run)) {
            if (nodes.stream().noneMatch(node -> node.capacity().covers(instance.resources()))) {
                return Optional.of(new Decision.Wait(run.id(), WaitReason.NoNodeFits, "no node can ever hold its instance " + instance.nodeGroup()
                        + " (" + instance.resources() + ")", 0));
            }
        }
        Map<RunId, List<InstanceRecord>> none = Map.of();
        CycleResult result = new Scheduler().schedule(SnapshotBuilder.build(nodes, Set.of(), quotas, List.of(run), none, Set.of()), run.createdAt());
        return result.waiting().stream().filter(wait -> wait.runId().equals(run.id())).findFirst();
    }

    /** Whether a run that waits for this reason on an idle cluster can never start on these nodes, whatever quotas do. */
    public static boolean neverOnTheseNodes(Decision.Wait wait) {
        return wait.reason() == WaitReason.NoNodeFits;
    }
}
