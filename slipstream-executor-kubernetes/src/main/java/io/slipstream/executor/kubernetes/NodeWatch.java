package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.NodeInfo;
import java.math.BigDecimal;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The cluster nodes Slipstream manages (those with the configured labels), watched. A node offers what it can give
 * pods ({@code allocatable}: cpu, memory, {@code nvidia.com/gpu}) while it is Ready, schedulable and not tainted
 * against our pods; a node NotReady (or gone) for longer than the configured time is lost.
 */
final class NodeWatch implements AutoCloseable {
    /** Taints our pods tolerate (GPU nodes are commonly tainted to keep other workloads off). */
    private static final Set<String> TOLERATED_TAINTS = Set.of(Manifests.GPU_RESOURCE);

    private final KubernetesConfig config;
    private final Clock clock;
    private final SharedIndexInformer<Node> informer;
    /** When each node we saw stopped being Ready (or disappeared). */
    private final Map<String, Instant> notReadySince = new ConcurrentHashMap<>();

    NodeWatch(KubernetesClient client, KubernetesConfig config, Clock clock) {
        this.config = config;
        this.clock = clock;
        var nodes = config.nodeSelector().isEmpty() ? client.nodes() : client.nodes().withLabels(config.nodeSelector());
        this.informer = nodes.inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Node node) {
                observe(node);
            }

            @Override
            public void onUpdate(Node before, Node node) {
                observe(node);
            }

            @Override
            public void onDelete(Node node, boolean unknownFinalState) {
                notReadySince.putIfAbsent(node.getMetadata().getName(), clock.instant());
            }
        }, 0);
        try {
            informer.start().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            informer.stop();
            throw new ExecutorException("cannot list the cluster's nodes: " + e.getMessage(), e);
        }
    }

    private void observe(Node node) {
        String name = node.getMetadata().getName();
        if (isReady(node)) {
            notReadySince.remove(name);
        } else {
            notReadySince.putIfAbsent(name, clock.instant());
        }
    }

    /** The nodes instances may be placed on now, by name. */
    List<NodeInfo> nodes() {
        List<NodeInfo> nodes = new ArrayList<>();
        for (Node node : informer.getStore().list()) {
            if (isReady(node) && !Boolean.TRUE.equals(node.getSpec() == null ? null : node.getSpec().getUnschedulable()) && !isTaintedAgainstUs(node)) {
                nodes.add(toInfo(node));
            }
        }
        nodes.sort(Comparator.comparing(NodeInfo::name));
        return nodes;
    }

    /** Whether {@code name} is a managed node we know (ready or not). */
    boolean knows(String name) {
        return informer.getStore().getByKey(name) != null;
    }

    /** Refuses a name that is not one of the managed nodes (ready or not): a pod pinned to it would wait for ever. */
    void require(String name) {
        if (!knows(name)) {
            throw new ExecutorException("no node named " + name + " among the cluster nodes Slipstream manages"
                    + (config.nodeSelector().isEmpty() ? "" : " (labels " + config.nodeSelector() + ")"));
        }
    }

    /** The nodes NotReady (or gone) for longer than the configured time, with why. */
    Map<String, String> lost() {
        Instant now = clock.instant();
        Map<String, String> lost = new java.util.TreeMap<>();
        notReadySince.forEach((name, since) -> {
            Duration down = Duration.between(since, now);
            if (down.compareTo(config.notReadyTimeout()) >= 0) {
                lost.put(name, (knows(name) ? "NotReady" : "removed from the cluster") + " for " + down.toSeconds() + "s");
            }
        });
        return lost;
    }

    NodeInfo toInfo(Node node) {
        Map<String, Quantity> allocatable = node.getStatus() == null || node.getStatus().getAllocatable() == null
                ? Map.of() : node.getStatus().getAllocatable();
        long milliCpu = amount(allocatable.get("cpu")).movePointRight(3).longValue();
        long memory = amount(allocatable.get("memory")).longValue();
        int gpus = amount(allocatable.get(Manifests.GPU_RESOURCE)).intValue();
        Map<String, String> labels = node.getMetadata().getLabels() == null ? Map.of() : node.getMetadata().getLabels();
        String model = gpus == 0 ? null : modelName(labels.getOrDefault(config.gpuModelLabel(), "gpu"));
        return new NodeInfo(node.getMetadata().getName(), new Resources(milliCpu, memory, gpus, model), null, labels);
    }

    /** {@code NVIDIA-H100-80GB-HBM3} → {@code nvidia-h100-80gb-hbm3}, the way quotas and shapes name models. */
    static String modelName(String label) {
        return label.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("^-|-$", "");
    }

    private static BigDecimal amount(Quantity quantity) {
        return quantity == null ? BigDecimal.ZERO : quantity.getNumericalAmount();
    }

    static boolean isReady(Node node) {
        if (node.getStatus() == null || node.getStatus().getConditions() == null) {
            return false;
        }
        for (NodeCondition condition : node.getStatus().getConditions()) {
            if ("Ready".equals(condition.getType())) {
                return "True".equals(condition.getStatus());
            }
        }
        return false;
    }

    private static boolean isTaintedAgainstUs(Node node) {
        List<Taint> taints = node.getSpec() == null || node.getSpec().getTaints() == null ? List.of() : node.getSpec().getTaints();
        return taints.stream().anyMatch(t -> ("NoSchedule".equals(t.getEffect()) || "NoExecute".equals(t.getEffect()))
                && !TOLERATED_TAINTS.contains(t.getKey()));
    }

    @Override
    public void close() {
        informer.stop();
    }
}
