package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.slipstream.api.run.EndCause;
import java.util.Set;

/**
 * What a pod's status says about its instance, reduced to what the control plane acts on. Pure, so that every
 * mapping (OOMKilled, image pull errors, kubelet rejections) is tested without a cluster.
 */
sealed interface PodStatus {
    /** Waiting to start: being pulled, waiting for the metadata, or with a startup probe not yet passed. */
    record Starting() implements PodStatus {
    }

    /** The main container runs; {@code started}: its startup probe passed (or it has none). */
    record Running(boolean started) implements PodStatus {
    }

    /**
     * The main container ended with {@code exitCode}; {@code cause} is its typed end cause where Kubernetes gives one
     * ({@code OOMKilled}), {@code reason} its text where Kubernetes says more than the code (a container that could not
     * run), else {@code null}.
     */
    record Ended(int exitCode, EndCause cause, String reason, boolean neverStarted) implements PodStatus {
    }

    /** The instance cannot start and never will (an image that cannot be pulled, a bad container config). */
    record CannotStart(int exitCode, String reason) implements PodStatus {
    }

    /** The kubelet refused or evicted the pod: its exit code is not known. */
    record Rejected(String reason) implements PodStatus {
    }

    /**
     * Waiting reasons that a retry does not fix: the instance fails with the reason instead of hanging. A first
     * {@code ErrImagePull} is not among them: it may be a blip, and turns into {@code ImagePullBackOff} if it is not.
     */
    Set<String> IMAGE_ERRORS = Set.of("ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull", "RegistryUnavailable");
    Set<String> CONFIG_ERRORS = Set.of("CreateContainerConfigError", "CreateContainerError", "RunContainerError");

    /** The status of {@code pod}'s main container. */
    static PodStatus of(Pod pod) {
        var status = pod.getStatus();
        ContainerStatus main = status == null || status.getContainerStatuses() == null ? null : status.getContainerStatuses().stream()
                .filter(c -> Manifests.MAIN_CONTAINER.equals(c.getName())).findFirst().orElse(null);
        if (status != null && status.getInitContainerStatuses() != null) {
            for (ContainerStatus init : status.getInitContainerStatuses()) {
                var waiting = init.getState() == null ? null : init.getState().getWaiting();
                if (waiting != null && waiting.getReason() != null && cannotStart(waiting.getReason())) {
                    return new CannotStart(127, "InitContainerFailed: " + init.getName() + ": " + waiting.getReason() + ": "
                            + message(waiting.getMessage()));
                }
            }
        }
        if (main != null && main.getState() != null) {
            var state = main.getState();
            if (state.getTerminated() != null) {
                var terminated = state.getTerminated();
                int code = terminated.getExitCode() == null ? 137 : terminated.getExitCode();
                String reason = terminated.getReason();
                boolean neverStarted = Boolean.FALSE.equals(main.getStarted());
                // The kubelet's OOMKilled is the cause restart rules match, worded by the control plane as on any executor.
                EndCause cause = "OOMKilled".equals(reason) ? EndCause.OOMKilled : null;
                String explained = "ContainerCannotRun".equals(reason) || "StartError".equals(reason) ? reason + ": " + message(terminated.getMessage())
                        : null;
                return new Ended(code, cause, explained, neverStarted);
            }
            if (state.getWaiting() != null) {
                String reason = state.getWaiting().getReason();
                if (reason != null && IMAGE_ERRORS.contains(reason)) {
                    return new CannotStart(127, "ImagePullFailed: " + reason + ": " + message(state.getWaiting().getMessage()));
                }
                if (reason != null && CONFIG_ERRORS.contains(reason)) {
                    return new CannotStart(126, reason + ": " + message(state.getWaiting().getMessage()));
                }
                return new Starting();
            }
            if (state.getRunning() != null) {
                return new Running(!Boolean.FALSE.equals(main.getStarted()));
            }
        }
        if (status != null && "Failed".equals(status.getPhase())) {
            return new Rejected((status.getReason() == null ? "Failed" : status.getReason()) + ": " + message(status.getMessage()));
        }
        return new Starting();
    }

    private static boolean cannotStart(String reason) {
        return IMAGE_ERRORS.contains(reason) || CONFIG_ERRORS.contains(reason);
    }

    private static String message(String message) {
        return message == null || message.isBlank() ? "(no message)" : message.strip();
    }
}
