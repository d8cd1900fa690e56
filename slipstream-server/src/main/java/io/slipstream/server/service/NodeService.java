package io.slipstream.server.service;

import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.wire.NodeView;
import io.slipstream.api.wire.ResourcesView;
import io.slipstream.executor.Executor;
import io.slipstream.executor.NodeInfo;
import io.slipstream.server.api.ApiException;
import io.slipstream.server.auth.Principal;
import io.slipstream.model.InstanceRecord;
import io.slipstream.store.NodeCondition;
import io.slipstream.store.NodeDown;
import io.slipstream.store.NodeMode;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import io.slipstream.store.StoreTx;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/** The executor's nodes with what is allocated on them, derived from the live instances in the store. */
public final class NodeService {
    private final Store store;
    private final Executor executor;
    private final Runnable changed;
    private final java.time.Clock clock;

    public NodeService(Store store, Executor executor) {
        this(store, executor, () -> {
        }, java.time.Clock.systemUTC());
    }

    /** @param changed told when a node went down or up, or was cordoned, drained or uncordoned, so that the control loop acts at once */
    public NodeService(Store store, Executor executor, Runnable changed, java.time.Clock clock) {
        this.store = store;
        this.executor = executor;
        this.changed = changed;
        this.clock = clock;
    }

    /**
     * Declares a node down (admins only): nothing new is placed on it, and the instances on it are stopped at once
     * and end {@code NODE_LOST}; their runs restart elsewhere as their fault-tolerance policy allows.
     */
    public NodeView down(Principal caller, String name, String reason) {
        return change(caller, name, "declare a node down", tx -> tx.markNodeDown(new NodeDown(name, reason, clock.instant())));
    }

    /** Declares a node up again (admins only): it takes new instances. */
    public NodeView up(Principal caller, String name) {
        return change(caller, name, "declare a node up", tx -> tx.markNodeUp(name));
    }

    /**
     * Cordons a node (admins only): nothing new is placed on it; what runs there keeps running. A node down stays down,
     * one draining goes on draining, one cordoned keeps its first reason. The reason says who, and why if given.
     */
    public NodeView cordon(Principal caller, String name, String why) {
        return cordon(caller, name, NodeMode.Cordoned, why, "cordon a node");
    }

    /**
     * Drains a node (admins only): it is cordoned, and the runs with instances there are moved off as a reclaim moves
     * them (notice, grace period, queued again, a preemption and no failure), to start elsewhere. It stays cordoned
     * once they are gone, until it is uncordoned. A node down stays down.
     */
    public NodeView drain(Principal caller, String name, String why) {
        return cordon(caller, name, NodeMode.Draining, why, "drain a node");
    }

    /** Lifts a cordon or a drain (admins only): the node takes new instances. A node down stays down (up lifts that). */
    public NodeView uncordon(Principal caller, String name) {
        return change(caller, name, "uncordon a node", tx -> tx.uncordonNode(name));
    }

    private NodeView cordon(Principal caller, String name, NodeMode mode, String why, String what) {
        String reason = "by " + caller.user() + (why == null || why.isBlank() ? "" : ": " + why);
        return change(caller, name, what, tx -> tx.cordonNode(new NodeCondition(name, mode, reason, clock.instant())));
    }

    /** An admin's change of a node's condition: the node must exist (404), and the control loop acts on it at once. */
    private NodeView change(Principal caller, String name, String what, Consumer<StoreTx> write) {
        requireAdmin(caller, what);
        get(name);
        store.commit(write);
        changed.run();
        return get(name);
    }

    private static void requireAdmin(Principal caller, String what) {
        if (!caller.admin()) {
            throw ApiException.forbidden("only administrators may " + what);
        }
    }

    private Optional<RunRecord> readable(io.slipstream.api.run.RunId id) {
        try {
            return Optional.of(store.runs().get(id).orElseThrow());
        } catch (io.slipstream.store.UnreadableRecordException e) {
            return Optional.empty();
        }
    }

    public List<NodeView> list() {
        Map<String, Resources> allocated = new HashMap<>();
        Map<String, Integer> counts = new HashMap<>();
        Map<String, Optional<RunRecord>> runs = new HashMap<>();
        for (InstanceRecord instance : store.runs().instancesOfActiveRuns()) {
            if (instance.state().isFinal()) {
                continue;
            }
            Optional<RunRecord> run = runs.computeIfAbsent(instance.id().runId().value(), id -> readable(instance.id().runId()));
            // An unreadable run's instance is counted on its node; what it holds is in the spec that cannot be read.
            Resources resources = run.stream().flatMap(r -> r.spec().nodeGroups().stream())
                    .filter(g -> g.name().equals(instance.nodeGroup()))
                    .map(NodeGroupSpec::resources)
                    .findFirst()
                    .orElse(Resources.NONE);
            allocated.merge(instance.node(), resources, Resources::plus);
            counts.merge(instance.node(), 1, Integer::sum);
        }
        List<NodeView> nodes = new ArrayList<>();
        Map<String, NodeCondition> conditions = store.runs().nodeConditions();
        io.slipstream.executor.ResourceEnforcement enforcement = executor.enforcement();
        io.slipstream.server.control.ClusterTopology topology = io.slipstream.server.control.ClusterTopology.read(store);
        for (NodeInfo node : executor.nodes()) {
            Resources used = allocated.getOrDefault(node.name(), Resources.NONE);
            NodeCondition condition = conditions.get(node.name());
            int instances = counts.getOrDefault(node.name(), 0);
            nodes.add(new NodeView(node.name(), state(condition, instances), condition == null ? null : condition.reason(),
                    condition != null && condition.mode() == NodeMode.Down ? condition.since() : null, condition == null ? null : condition.since(),
                    ResourcesView.of(node.capacity()),
                    ResourcesView.of(new Resources(used.milliCpu(), used.memoryBytes(), used.gpu(), node.capacity().gpuModel())),
                    instances, node.labels(), enforcement == null ? null : enforcement.enforced(),
                    enforcement == null ? null : enforcement.summary(), topology.placeOf(node)));
        }
        return nodes;
    }

    /** What a node reads: Ready, Down, Cordoned, or Draining while instances are still there (drained, it reads Cordoned). */
    static String state(NodeCondition condition, int instances) {
        if (condition == null) {
            return "Ready";
        }
        return switch (condition.mode()) {
            case Down -> "Down";
            case Draining -> instances > 0 ? "Draining" : "Cordoned";
            case Cordoned -> "Cordoned";
        };
    }

    /** What the executor holds instances to, or {@code null} where it cannot say. */
    public io.slipstream.executor.ResourceEnforcement enforcement() {
        return executor.enforcement();
    }

    /** What keeps the executor from its work now ({@link io.slipstream.executor.Executor#problem}), or {@code null}. */
    public String executorProblem() {
        return executor.problem();
    }

    public NodeView get(String name) {
        return list().stream().filter(n -> n.name().equals(name)).findFirst()
                .orElseThrow(() -> ApiException.notFound("node " + name + " not found"));
    }
}
