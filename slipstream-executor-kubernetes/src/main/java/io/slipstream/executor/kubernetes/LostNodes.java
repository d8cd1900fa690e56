package io.slipstream.executor.kubernetes;

import io.slipstream.executor.InstanceReport;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every second, instances on nodes NotReady (or gone) for too long are reported lost, and their pods force-deleted:
 * their kubelet cannot confirm an end.
 */
final class LostNodes implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LostNodes.class);

    private final NodeWatch nodes;
    private final TrackedInstances instances;
    private final PodDeletion deletion;
    private final Clock clock;
    private final ScheduledExecutorService timer;

    LostNodes(NodeWatch nodes, TrackedInstances instances, PodDeletion deletion, Clock clock) {
        this.nodes = nodes;
        this.instances = instances;
        this.deletion = deletion;
        this.clock = clock;
        this.timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "kubernetes-executor-nodes");
            thread.setDaemon(true);
            return thread;
        });
        timer.scheduleWithFixedDelay(this::sweep, 1, 1, TimeUnit.SECONDS);
    }

    private void sweep() {
        try {
            Map<String, String> lost = nodes.lost();
            if (lost.isEmpty()) {
                return;
            }
            for (TrackedInstance instance : instances.all()) {
                String why = instance.node == null ? null : lost.get(instance.node);
                if (why == null || instance.end != null) {
                    continue;
                }
                if (instances.finish(instance, new InstanceReport.Lost(instance.id, "NodeLost: node " + instance.node + " is " + why, true,
                        clock.instant()))) {
                    deletion.delete(instance.namespace, instance.pod, 0L, null);
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("cannot check for lost nodes: {}", e.getMessage());
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
