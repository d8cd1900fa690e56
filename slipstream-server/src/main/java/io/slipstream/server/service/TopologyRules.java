package io.slipstream.server.service;

import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.store.StoreReads;
import io.slipstream.store.StoredDocument;
import java.util.List;

/** What applying a Topology or a job's placement must agree with: one topology per cluster, and levels it has. */
final class TopologyRules {
    private TopologyRules() {
    }

    /** The cluster has one topology: applying another (by another name) is refused, naming the one there is. */
    static void checkOne(StoreReads tx, String name, String prefix, Problems problems) {
        List<StoredDocument> all = tx.documents().list(Kind.Topology, null);
        for (StoredDocument other : all) {
            if (!other.document().name().equals(name)) {
                problems.add(prefix + "metadata.name", "the cluster has one topology, '" + other.document().name()
                        + "': change that one, or delete it first");
                return;
            }
        }
    }

    /** Every level a node group's placement names is a level of the cluster's topology. */
    static void checkPlacements(StoreReads tx, JobSpec job, String prefix, Problems problems) {
        io.slipstream.server.control.ClusterTopology topology = io.slipstream.server.control.ClusterTopology.read(tx);
        for (int i = 0; i < job.nodeGroups().size(); i++) {
            NodeGroupSpec group = job.nodeGroups().get(i);
            if (group.placement() == null || topology.levels().contains(group.placement().level())) {
                continue;
            }
            problems.add(prefix + "spec.nodeGroups[" + i + "].placement.level", topology.levels().isEmpty()
                    ? "the cluster has no topology: an admin applies a Topology naming its levels first (docs/topology.md)"
                    : "'" + group.placement().level() + "' is not a level of the cluster's topology (" + String.join(", ", topology.levels()) + ")");
        }
    }
}
