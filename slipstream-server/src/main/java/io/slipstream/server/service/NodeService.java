package io.slipstream.server.service;

import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.wire.NodeView;
import io.slipstream.api.wire.ResourcesView;
import io.slipstream.executor.Executor;
import io.slipstream.executor.NodeInfo;
import io.slipstream.server.api.ApiException;
import io.slipstream.store.InstanceRecord;
import io.slipstream.store.RunRecord;
import io.slipstream.store.Store;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** The executor's nodes with what is allocated on them, derived from the live instances in the store. */
public final class NodeService {
    private final Store store;
    private final Executor executor;

    public NodeService(Store store, Executor executor) {
        this.store = store;
        this.executor = executor;
    }

    public List<NodeView> list() {
        Map<String, Resources> allocated = new HashMap<>();
        Map<String, Integer> counts = new HashMap<>();
        Map<String, RunRecord> runs = new HashMap<>();
        for (InstanceRecord instance : store.instancesOfActiveRuns()) {
            if (instance.state().isFinal()) {
                continue;
            }
            RunRecord run = runs.computeIfAbsent(instance.id().runId().value(), id -> store.getRun(instance.id().runId()).orElseThrow());
            Resources resources = run.spec().nodeGroups().stream()
                    .filter(g -> g.name().equals(instance.nodeGroup()))
                    .map(NodeGroupSpec::resources)
                    .findFirst()
                    .orElse(Resources.NONE);
            allocated.merge(instance.node(), resources, Resources::plus);
            counts.merge(instance.node(), 1, Integer::sum);
        }
        List<NodeView> nodes = new ArrayList<>();
        for (NodeInfo node : executor.nodes()) {
            Resources used = allocated.getOrDefault(node.name(), Resources.NONE);
            nodes.add(new NodeView(node.name(), "Ready", ResourcesView.of(node.capacity()),
                    ResourcesView.of(new Resources(used.milliCpu(), used.memoryBytes(), used.gpu(), node.capacity().gpuModel())),
                    counts.getOrDefault(node.name(), 0), node.labels()));
        }
        return nodes;
    }

    public NodeView get(String name) {
        return list().stream().filter(n -> n.name().equals(name)).findFirst()
                .orElseThrow(() -> ApiException.notFound("node " + name + " not found"));
    }
}
