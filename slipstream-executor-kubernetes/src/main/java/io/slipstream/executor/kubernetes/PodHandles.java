package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import java.util.LinkedHashMap;
import java.util.Map;

/** What the control plane keeps of a pod (its handle), and which instance a pod runs, read from its labels. */
final class PodHandles {
    private PodHandles() {
    }

    /** The handle of a pod: its namespace, name and uid. */
    static Map<String, String> of(Pod pod) {
        Map<String, String> handle = new LinkedHashMap<>();
        handle.put("namespace", pod.getMetadata().getNamespace());
        handle.put("pod", pod.getMetadata().getName());
        handle.put("uid", pod.getMetadata().getUid() == null ? "" : pod.getMetadata().getUid());
        return Map.copyOf(handle);
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
