package io.slipstream.server.control;

import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.api.spec.QuotaSpec;
import io.slipstream.executor.NodeInfo;
import io.slipstream.scheduler.ActiveRun;
import io.slipstream.scheduler.Allocation;
import io.slipstream.scheduler.ClusterSnapshot;
import io.slipstream.scheduler.InstanceRequest;
import io.slipstream.scheduler.NodeState;
import io.slipstream.scheduler.PendingRun;
import io.slipstream.scheduler.QuotaState;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import io.slipstream.store.StoredDocument;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Turns what the store holds into the scheduler's input: nodes, quotas, runs holding resources, queued runs. */
final class SnapshotBuilder {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(SnapshotBuilder.class);
    private SnapshotBuilder() {
    }

    static ClusterSnapshot build(List<NodeInfo> nodes, List<StoredDocument> quotaDocuments, List<RunRecord> runs,
                                 Map<io.slipstream.api.run.RunId, List<InstanceRecord>> instances) {
        return build(nodes, java.util.Set.of(), quotaDocuments, runs, instances, java.util.Set.of(), ClusterTopology.NONE);
    }

    /**
     * @param downNodes nodes declared down, draining or cordoned (or held by unreadable runs): nothing new is placed on them
     * @param reclaimed queued runs whose victims are gone (the capacity they gave back is theirs)
     * @param topology  where the nodes are, and what node groups' placements ask
     */
    static ClusterSnapshot build(List<NodeInfo> nodes, java.util.Set<String> downNodes, List<StoredDocument> quotaDocuments, List<RunRecord> runs,
                                 Map<io.slipstream.api.run.RunId, List<InstanceRecord>> instances, java.util.Set<io.slipstream.api.run.RunId> reclaimed,
                                 ClusterTopology topology) {
        List<QuotaState> quotas = new ArrayList<>();
        for (StoredDocument stored : quotaDocuments) {
            if (stored.document().kind() == Kind.Quota) {
                quotas.add(quota(stored));
            }
        }
        List<ActiveRun> active = new ArrayList<>();
        List<PendingRun> pending = new ArrayList<>();
        java.util.Set<String> closed = new java.util.HashSet<>(downNodes);
        for (RunRecord run : runs) {
            List<InstanceRecord> held = instances.getOrDefault(run.id(), List.of());
            try {
                if (run.state() == RunState.QUEUED && run.cancelRequestedAt() == null) {
                    pending.add(pending(run, topology, reclaimed.contains(run.id())));
                } else if (run.state().holdsResources() && run.world() != null) {
                    elastic(run, held, topology).ifPresent(active::add);
                } else if (run.state().holdsResources()) {
                    rigid(run, held).ifPresent(active::add);
                }
            } catch (RuntimeException e) {
                // One run's data (a bug, or what a check let through) never stops every team's cycle; what it holds is
                // kept from the others, as an unreadable run's nodes are, until it is mended.
                LOG.error("run {} is left out of this cycle's scheduling: {}; the nodes its instances hold are closed to others", run.id(),
                        e.toString());
                held.stream().filter(i -> !i.state().isFinal() && i.node() != null).forEach(i -> closed.add(i.node()));
            }
        }
        List<NodeState> nodeStates = nodes.stream()
                .map(n -> new NodeState(n.name(), n.capacity(), !closed.contains(n.name()), topology.domainsOf(n))).toList();
        return new ClusterSnapshot(nodeStates, quotas, active, pending);
    }

    /**
     * A queued run as the scheduler places it; one whose minimum the core refuses (data a check let through) is placed
     * as a rigid run, and the operator told: one run's data never stops the cycle of every team.
     */
    private static PendingRun pending(RunRecord run, ClusterTopology topology, boolean reclaimed) {
        List<InstanceRequest> requests = requests(run, topology);
        try {
            return new PendingRun(run.id(), run.quotaId(), run.spec().idleResources(), run.priority(), run.createdAt(), requests, reclaimed,
                    minimums(run));
        } catch (IllegalArgumentException e) {
            LOG.error("run {}: its minReplicas cannot be kept ({}); it is scheduled as a rigid run", run.id(), e.getMessage());
            return new PendingRun(run.id(), run.quotaId(), run.spec().idleResources(), run.priority(), run.createdAt(), requests, reclaimed);
        }
    }

    /** An elastic run as {@link ElasticRuns} sees it; one it cannot read so (a bug) holds its live instances as a rigid run does. */
    private static java.util.Optional<ActiveRun> elastic(RunRecord run, List<InstanceRecord> instances, ClusterTopology topology) {
        try {
            return ElasticRuns.active(run, instances, topology);
        } catch (IllegalArgumentException | IllegalStateException e) {
            LOG.error("run {}: its world cannot be scheduled ({}); it holds its live instances and is neither grown nor shrunk", run.id(),
                    e.getMessage());
            return rigid(run, instances);
        }
    }

    /** A run holding what its live instances hold. */
    private static java.util.Optional<ActiveRun> rigid(RunRecord run, List<InstanceRecord> instances) {
        List<Allocation> allocations = allocations(run, instances);
        if (allocations.isEmpty()) {
            return java.util.Optional.empty();
        }
        // Work a preemption would lose counts from this attempt's start or its last checkpoint, whichever is later.
        java.time.Instant attemptStart = instances.stream().map(InstanceRecord::startedAt).filter(java.util.Objects::nonNull)
                .min(java.util.Comparator.naturalOrder()).orElse(run.createdAt());
        java.time.Instant checkpoint = run.faults().checkpointAt();
        return java.util.Optional.of(new ActiveRun(run.id(), run.quotaId(), run.spec().idleResources(), run.priority(), attemptStart,
                checkpoint != null && checkpoint.isAfter(attemptStart) ? checkpoint : null,
                run.realTimeResources() != null ? run.realTimeResources() : RealTimeResources.NotInQuota,
                allocations, run.state() == RunState.TERMINATING, run.reclaimFor()));
    }

    static QuotaState quota(StoredDocument stored) {
        return QuotaState.of(stored.document().workspace(), stored.document().name(), (QuotaSpec) stored.document().spec());
    }

    /** The run's instances, each anywhere (what a feasibility check asks: could the nodes ever hold them). */
    static List<InstanceRequest> requests(RunRecord run) {
        return requests(run, null);
    }

    /** The run's instances as the scheduler places them: by {@code topology}, their groups' placement ({@code null}: anywhere). */
    static List<InstanceRequest> requests(RunRecord run, ClusterTopology topology) {
        List<InstanceRequest> requests = new ArrayList<>();
        int rank = 0;
        for (NodeGroupSpec group : run.spec().nodeGroups()) {
            io.slipstream.scheduler.Locality locality = topology == null ? null : topology.localityOf(group.placement());
            for (int i = 0; i < group.replicas(); i++) {
                requests.add(new InstanceRequest(rank++, group.name(), group.resources(), locality));
            }
        }
        return requests;
    }

    /** The minimum of each elastic node group (none: a rigid run). */
    static Map<String, Integer> minimums(RunRecord run) {
        Map<String, Integer> minimums = new java.util.TreeMap<>();
        run.spec().nodeGroups().stream().filter(NodeGroupSpec::elastic).forEach(g -> minimums.put(g.name(), g.minimum()));
        return minimums;
    }

    /** What the run's live instances hold: every instance not yet ended keeps its share of its node. */
    private static List<Allocation> allocations(RunRecord run, List<InstanceRecord> instances) {
        List<Allocation> allocations = new ArrayList<>();
        for (InstanceRecord instance : instances) {
            if (instance.state() == InstanceState.PENDING || instance.state() == InstanceState.RUNNING) {
                NodeGroupSpec group = run.spec().nodeGroups().stream().filter(g -> g.name().equals(instance.nodeGroup())).findFirst().orElseThrow();
                allocations.add(new Allocation(instance.id().rank(), instance.node(), group.resources(), instance.gpus()));
            }
        }
        return allocations;
    }
}
