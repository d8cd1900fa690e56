package io.slipstream.server.control;

import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Kind;
import io.slipstream.executor.NodeInfo;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import io.slipstream.scheduler.ClusterSnapshot;
import io.slipstream.store.Store;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The scheduler's view of the cluster as the store holds it now, for readers outside the control loop (the quota
 * ledger of the API): built like the loop's own snapshot, in one transaction, so that a standby answers it too.
 * Runs backing off count as queued here (they wait), and the loop's own bookkeeping (reclaims) does not matter.
 */
public record LiveSnapshot(ClusterSnapshot snapshot, Map<RunId, RunRecord> runs) {
    public static LiveSnapshot read(Store store, List<NodeInfo> nodes) {
        return store.read(reads -> {
            Set<String> closed = reads.runs().nodeConditions().keySet(); // down, draining or cordoned: as the loop's snapshot
            List<RunRecord> active = reads.runs().active();
            Map<RunId, List<InstanceRecord>> instances = reads.runs().instancesOfActiveRuns().stream()
                    .collect(Collectors.groupingBy(i -> i.id().runId(), LinkedHashMap::new, Collectors.toList()));
            Map<RunId, RunRecord> byId = new LinkedHashMap<>();
            active.forEach(run -> byId.put(run.id(), run));
            return new LiveSnapshot(SnapshotBuilder.build(nodes, closed, reads.documents().list(Kind.Quota, null), active, instances, Set.of(),
                    ClusterTopology.NONE), byId);
        });
    }
}
