package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.Executor;
import java.util.LinkedHashMap;
import java.util.Map;

/** What the control plane keeps of a pod (its handle), and which instance a pod runs, read from its labels. */
final class PodHandles {
    private PodHandles() {
    }

    /** The handle of a pod: its namespace, name and uid, and its restart in place where it is one. */
    static Map<String, String> of(Pod pod) {
        Map<String, String> handle = new LinkedHashMap<>();
        handle.put("namespace", pod.getMetadata().getNamespace());
        handle.put("pod", pod.getMetadata().getName());
        handle.put("uid", pod.getMetadata().getUid() == null ? "" : pod.getMetadata().getUid());
        int restart = restartOf(pod);
        if (restart != 0) {
            handle.put(Executor.RESTART_KEY, Integer.toString(restart));
        }
        return Map.copyOf(handle);
    }

    /** Which restart in place of its instance a pod runs (no label: 0; a label that is no number: -1, no launch of ours). */
    static int restartOf(Pod pod) {
        var labels = pod.getMetadata().getLabels();
        String value = labels == null ? null : labels.get(Names.RESTART);
        return Executor.restartOf(value == null ? Map.of() : Map.of(Executor.RESTART_KEY, value));
    }

    /** The namespace of a handle's pod (handles from before namespaces were per workspace have the default one). */
    static String namespace(Map<String, String> handle, KubernetesConfig config) {
        return handle.getOrDefault("namespace", config.namespace());
    }

    /** The instance a pod of ours runs; null for a pod whose labels do not say. */
    static InstanceId idOf(Pod pod) {
        var labels = pod.getMetadata().getLabels();
        var annotations = pod.getMetadata().getAnnotations();
        String runId = annotations == null ? null : annotations.get(Names.RUN_ID_ANNOTATION);
        if (runId == null || labels == null || labels.get(Names.ATTEMPT) == null || labels.get(Names.RANK) == null) {
            return null;
        }
        try {
            return new InstanceId(new RunId(runId), Integer.parseInt(labels.get(Names.ATTEMPT)), Integer.parseInt(labels.get(Names.RANK)));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
