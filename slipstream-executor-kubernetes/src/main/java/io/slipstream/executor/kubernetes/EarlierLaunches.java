package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.ExecutorException;
import java.util.Comparator;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The launches of an instance before its newest, on Kubernetes: a restart in place ({@code runType: Async}) is a pod of
 * its own name ({@link Names#pod(InstanceId, int)}) on the same node, made only once the pod of the launch before has
 * ended, which is then deleted. Its log stays in the local copy, read through the handle of that launch, until the run
 * is forgotten.
 */
final class EarlierLaunches {
    private static final Logger LOG = LoggerFactory.getLogger(EarlierLaunches.class);

    private final PodWatch pods;
    private final TrackedInstances instances;
    private final PodLogs logs;
    private final PodDeletion deletion;

    EarlierLaunches(PodWatch pods, TrackedInstances instances, PodLogs logs, PodDeletion deletion) {
        this.pods = pods;
        this.instances = instances;
        this.logs = logs;
        this.deletion = deletion;
    }

    /** The pod of the instance's newest launch the watch has seen; null if none. */
    Pod newest(String namespace, InstanceId id) {
        return pods.launches(namespace, id).stream().max(Comparator.comparingInt(PodHandles::restartOf)).orElse(null);
    }

    /**
     * Refuses to restart an instance whose launch before still runs: its pod says its container is not over, and no end
     * of it was reported (the control loop restarts an instance only after its end).
     */
    void requireEnded(InstanceId id, Pod previous) {
        TrackedInstance tracked = instances.get(id);
        boolean reported = tracked != null && tracked.pod.equals(previous.getMetadata().getName()) && tracked.end != null;
        PodStatus status = PodStatus.of(previous);
        boolean over = status instanceof PodStatus.Ended || status instanceof PodStatus.CannotStart || status instanceof PodStatus.Rejected;
        if (!reported && !over) {
            throw new ExecutorException("instance " + id + " cannot restart: its last launch (restart " + PodHandles.restartOf(previous) + ", pod "
                    + previous.getMetadata().getName() + ") is still running");
        }
    }

    /**
     * Deletes the pods of the instance's launches before {@code restart} that are still there, each once its log is
     * copied (one whose log cannot be copied now stays, until the run is forgotten). Tidying only: a failure is logged,
     * and the newest launch runs on all the same.
     */
    void retireBefore(String namespace, InstanceId id, int restart) {
        List<Pod> earlier = pods.launches(namespace, id).stream()
                .filter(pod -> PodHandles.restartOf(pod) < restart && pod.getMetadata().getDeletionTimestamp() == null).toList();
        for (Pod pod : earlier) {
            String name = pod.getMetadata().getName();
            if (!logs.copyLastLines(namespace, name)) {
                continue;
            }
            try {
                deletion.delete(namespace, name, null, null);
                LOG.info("deleted pod {}: instance {} restarted in place (restart {})", name, id, restart);
            } catch (KubernetesClientException | ExecutorException e) {
                LOG.warn("cannot delete pod {} of an earlier launch of {}: {}", name, id, e.getMessage());
            }
        }
    }
}
