package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.InstanceReport;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The instances this executor launched or adopted, and the one way their reports go out. Safe for concurrent use: the
 * watch, the lost-node sweep and the control loop's calls all report through it.
 */
final class TrackedInstances {
    private static final Logger LOG = LoggerFactory.getLogger(TrackedInstances.class);

    private final Map<InstanceId, TrackedInstance> tracked = new ConcurrentHashMap<>();
    private volatile Consumer<InstanceReport> listener = report -> {
    };

    void setListener(Consumer<InstanceReport> listener) {
        this.listener = listener;
    }

    /** The instance if this executor launched or adopted it; null if not. */
    TrackedInstance get(InstanceId id) {
        return tracked.get(id);
    }

    /**
     * The instance's launch {@code restart}, remembered now (in {@code namespace}, as pod {@code pod}) if it was not yet;
     * it takes the place of an older launch (a restart in place), never of a newer one, which is returned instead.
     */
    TrackedInstance remember(InstanceId id, String namespace, String pod, int restart) {
        return tracked.compute(id, (key, known) -> known != null && known.restart >= restart ? known : new TrackedInstance(key, namespace, pod,
                restart));
    }

    /** Remembers the instance as the pod that runs it (unless a newer launch of it is remembered), and returns the pod's handle. */
    Map<String, String> track(InstanceId id, Pod pod) {
        int restart = PodHandles.restartOf(pod);
        TrackedInstance instance = remember(id, pod.getMetadata().getNamespace(), pod.getMetadata().getName(), restart);
        if (instance.restart == restart) {
            instance.uid = pod.getMetadata().getUid();
            instance.node = pod.getSpec().getNodeName();
            instance.probe = pod.getSpec().getContainers().stream().anyMatch(c -> c.getStartupProbe() != null);
        }
        return PodHandles.of(pod);
    }

    Collection<TrackedInstance> all() {
        return tracked.values();
    }

    void forget(RunId runId) {
        tracked.keySet().removeIf(id -> id.runId().equals(runId));
    }

    /** Records the instance's end and reports it, the first time only; returns whether it was the first. */
    boolean finish(TrackedInstance instance, InstanceReport end) {
        if (!instance.recordEnd(end)) {
            return false;
        }
        report(end);
        return true;
    }

    /** Tells the listener; its failure is the listener's, never the caller's. */
    void report(InstanceReport report) {
        try {
            listener.accept(report);
        } catch (RuntimeException e) {
            LOG.warn("the listener failed on {}: {}", report, e.getMessage(), e);
        }
    }
}
