package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.InstanceReport;
import java.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns what the watch sees of a pod into its instance's reports, each once: ready when its startup probe passes, its
 * exit, a failed probe, an image that cannot start, a pod the kubelet rejected or someone else deleted. Only the pods
 * of instances this executor launched or adopted are reported (a pod of the same name with another uid is not the one
 * tracked, nor is the pod of a launch that a restart in place replaced); the others wait for adoption. Called on the
 * watch's thread, and by adoption.
 */
final class PodReports implements PodWatch.Events {
    private static final Logger LOG = LoggerFactory.getLogger(PodReports.class);

    private final TrackedInstances instances;
    private final AttemptMetadata metadata;
    private final PodLogs logs;
    private final PodDeletion deletion;
    private final Clock clock;

    PodReports(TrackedInstances instances, AttemptMetadata metadata, PodLogs logs, PodDeletion deletion, Clock clock) {
        this.instances = instances;
        this.metadata = metadata;
        this.logs = logs;
        this.deletion = deletion;
        this.clock = clock;
    }

    /** A pod changed (or is gone): what it says becomes a report, once. */
    @Override
    public void changed(Pod pod, boolean deleted) {
        try {
            if (!deleted && pod.getStatus() != null && pod.getStatus().getPodIP() != null) {
                metadata.complete(pod);
            }
            InstanceId id = PodHandles.idOf(pod);
            TrackedInstance instance = id == null ? null : instances.get(id);
            if (instance == null || instance.uid != null && !instance.uid.equals(pod.getMetadata().getUid())) {
                return; // not launched or adopted by this control plane (yet): adoption reports it
            }
            if (!instance.pod.equals(pod.getMetadata().getName())) {
                return; // a launch before a restart in place (its end was reported): never the new launch's end
            }
            if (deleted) {
                gone(instance, pod);
                return;
            }
            PodStatus status = PodStatus.of(pod);
            if (status instanceof PodStatus.Running running) {
                if (instance.probe && running.started() && instance.markReady()) {
                    instances.report(new InstanceReport.Ready(instance.id, clock.instant()));
                }
            } else if (status instanceof PodStatus.Ended ended) {
                ended(instance, pod, ended);
            } else if (status instanceof PodStatus.CannotStart cannot) {
                LOG.info("pod {} cannot start: {}", instance.pod, cannot.reason());
                if (instances.finish(instance, new InstanceReport.Exited(instance.id, cannot.exitCode(), false, cannot.reason(), clock.instant()))) {
                    deletion.delete(instance.namespace, instance.pod, 0L, null); // stop the pull retries
                }
            } else if (status instanceof PodStatus.Rejected rejected) {
                instances.finish(instance, new InstanceReport.Lost(instance.id, "the kubelet rejected or evicted its pod: " + rejected.reason(),
                        clock.instant()));
            }
        } catch (RuntimeException e) {
            LOG.warn("cannot follow pod {}: {}", pod.getMetadata().getName(), e.getMessage(), e);
        }
    }

    private void ended(TrackedInstance instance, Pod pod, PodStatus.Ended ended) {
        boolean probeFailed = instance.endedOnFailedProbe(ended);
        if (probeFailed) {
            Integer threshold = pod.getSpec().getContainers().stream().filter(c -> c.getStartupProbe() != null)
                    .map(c -> c.getStartupProbe().getFailureThreshold()).findFirst().orElse(null);
            instances.report(new InstanceReport.ProbeFailed(instance.id, "its startup probe failed " + (threshold == null ? "" : threshold + " time(s) ")
                    + "in a row: the kubelet stopped the container", clock.instant()));
        }
        logs.copyLastLines(instance); // before the report: whoever reads the log after it sees all of it
        if (instance.terminatingGrace != null) {
            return; // confirmed once the pod is gone
        }
        String reason = ended.reason() != null ? ended.reason() : probeFailed ? "StartupProbeFailed: its startup probe never passed" : null;
        instances.finish(instance, new InstanceReport.Exited(instance.id, ended.exitCode(), false, ended.cause(), reason, clock.instant()));
    }

    private void gone(TrackedInstance instance, Pod pod) {
        PodStatus status = PodStatus.of(pod);
        PodStatus.Ended ended = status instanceof PodStatus.Ended e ? e : instance.lastEnded;
        logs.copyLastLines(instance);
        if (instance.terminatingGrace != null) {
            instances.finish(instance, new InstanceReport.Exited(instance.id, ended == null ? 137 : ended.exitCode(), true,
                    ended == null ? null : ended.cause(), null, clock.instant()));
        } else if (ended != null) {
            instances.finish(instance, new InstanceReport.Exited(instance.id, ended.exitCode(), false, ended.cause(), ended.reason(),
                    clock.instant()));
        } else {
            instances.finish(instance, new InstanceReport.Lost(instance.id, "its pod " + instance.pod + " was deleted outside Slipstream",
                    clock.instant()));
        }
    }
}
