package io.slipstream.server.service;

import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.server.control.ClusterTopology;
import io.slipstream.store.StoreReads;

/** What a job's placement must agree with: levels the cluster's topology has (there is one: its name is {@code default}). */
final class TopologyRules {
    private TopologyRules() {
    }

    /** Every level a node group's placement names is a level of the cluster's topology, as {@code tx} sees it. */
    static void checkPlacements(StoreReads tx, JobSpec job, String prefix, Problems problems) {
        if (ClusterTopology.placed(job)) { // a job that names no level needs no read of the topology
            ClusterTopology.read(tx).placementProblems(job).forEach((field, why) -> problems.add(prefix + "spec." + field, why));
        }
    }
}
