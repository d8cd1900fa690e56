package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.slipstream.api.codec.Json;
import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.Executor;
import io.slipstream.executor.InstanceReport;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stops an instance: its pod is deleted under the fence ({@link PodDeletion}: stamped with the epoch, then deleted with
 * the stamped resource version as a precondition), with the grace period and the preemption notice. Kubernetes sends
 * SIGTERM, and SIGKILL once the grace period is over; the watch reports the end once the pod is gone. A stop of an
 * instance that has ended reports its end again (reports are at least once).
 */
final class Termination {
    private static final Logger LOG = LoggerFactory.getLogger(Termination.class);

    private final KubernetesConfig config;
    private final TrackedInstances instances;
    private final PodDeletion deletion;
    private final Clock clock;

    Termination(KubernetesConfig config, TrackedInstances instances, PodDeletion deletion, Clock clock) {
        this.config = config;
        this.instances = instances;
        this.deletion = deletion;
        this.clock = clock;
    }

    void terminate(InstanceId id, Map<String, String> handle, Duration gracePeriod, String reason) {
        int restart = Executor.restartOf(handle);
        if (restart < 0) {
            instances.report(new InstanceReport.Lost(id, "its handle names no launch of it (restart " + handle.get(Executor.RESTART_KEY) + ")",
                    clock.instant()));
            return;
        }
        TrackedInstance instance = instances.remember(id, PodHandles.namespace(handle, config), Names.pod(id, restart), restart);
        if (instance.restart > restart) {
            // A launch before a restart in place: it ended before the restart was made. Its end, said again, would be
            // taken for the newest launch's.
            LOG.info("not stopping {} as of restart {}: it was restarted in place since (restart {})", id, restart, instance.restart);
            return;
        }
        // Kubernetes counts whole seconds: a grace under one is one, so that only a zero grace kills at once.
        long graceSeconds = gracePeriod.toSeconds() == 0 && !gracePeriod.isZero() ? 1 : gracePeriod.toSeconds();
        InstanceReport end = instance.stopping(graceSeconds);
        if (end != null) {
            instances.report(end); // already over: say so again
            return;
        }
        try {
            String notice = gracePeriod.isZero() ? null
                    : Json.mapper().writeValueAsString(Map.of("reason", reason, "deadline", clock.instant().plus(gracePeriod).toString()));
            if (!deletion.delete(instance.namespace, instance.pod, instance.terminatingGrace, notice)) {
                instances.finish(instance, new InstanceReport.Exited(id, 137, true, clock.instant()));
            }
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                instances.finish(instance, new InstanceReport.Exited(id, 137, true, clock.instant()));
                return;
            }
            LOG.warn("cannot delete pod {}: {}", instance.pod, e.getMessage()); // the control loop asks again
        }
    }
}
