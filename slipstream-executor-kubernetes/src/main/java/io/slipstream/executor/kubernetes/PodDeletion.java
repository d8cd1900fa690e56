package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Deletable;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.extension.ExtensibleResource;
import io.slipstream.api.codec.Json;
import io.slipstream.executor.ExecutorException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Deletes a Slipstream pod under the leader fence: first stamps it with this executor's epoch (label
 * {@link Names#STOP_EPOCH}, and the preemption notice if there is one, in one merge patch), then deletes it with the
 * resource version the stamp gave it as a precondition, so that the delete acts only on the pod as stamped. Where the
 * fence policy is installed the API server refuses a stale leader's stamp, and so its delete; where it is not, the
 * fence's {@link KubernetesFence#check check} before the stamp is what remains.
 */
final class PodDeletion {
    /** A pod's status changes (the kubelet's) between stamp and delete make the precondition fail: stamp again. */
    private static final int ATTEMPTS = 5;

    private final KubernetesClient client;
    private final KubernetesFence fence;

    PodDeletion(KubernetesClient client, KubernetesFence fence) {
        this.client = client;
        this.fence = fence;
    }

    /**
     * Stamps and deletes the pod; false if it was gone already.
     *
     * @param grace the grace period in seconds, null for the pod's own
     * @param notice the preemption notice (JSON) to annotate the pod with, null for none
     * @throws ExecutorException if a newer leader has fenced (this executor's stamp was refused)
     * @throws KubernetesClientException if the API server cannot be asked (the caller asks again later)
     */
    boolean delete(String namespace, String pod, Long grace, String notice) {
        for (int attempt = 1; ; attempt++) {
            fence.check(); // every attempt: without the policy, this is what stands between a stale leader and its stamp
            // A new token each time: a repeat of a stamp this executor made while it led is judged against the fence too.
            String patch = stamp(fence.epoch(), java.util.UUID.randomUUID().toString(), notice);
            Pod stamped;
            try {
                stamped = client.pods().inNamespace(namespace).withName(pod).patch(PatchContext.of(PatchType.JSON_MERGE), patch);
            } catch (KubernetesClientException e) {
                if (e.getCode() == 404) {
                    return false;
                }
                if (KubernetesFence.refusedByPolicy(e)) {
                    throw new ExecutorException("fenced: the API server refused to let epoch " + fence.epoch() + " stop pod " + pod + ": "
                            + e.getMessage(), e);
                }
                throw e;
            }
            try {
                return !locked(namespace, pod, stamped.getMetadata().getResourceVersion(), grace).delete().isEmpty();
            } catch (KubernetesClientException e) {
                if (e.getCode() == 404) {
                    return false;
                }
                if (e.getCode() != 409 || attempt == ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    /**
     * Voids a stop an older leader stamped on the pod and may still be deleting: a change of the pod (label
     * {@link Names#ADOPTED_EPOCH}, leaving the stamp as it is, which the policy allows) gives it a new resource version,
     * so that the older leader's delete, whose precondition is the stamped one, fails. Gone already: nothing to do.
     */
    void voidOlderStop(String namespace, String pod) {
        String patch = Json.mapper().writeValueAsString(Map.of("metadata", Map.of("labels", Map.of(Names.ADOPTED_EPOCH, Long.toString(fence.epoch())))));
        try {
            client.pods().inNamespace(namespace).withName(pod).patch(PatchContext.of(PatchType.JSON_MERGE), patch);
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404) {
                throw e;
            }
        }
    }

    /** The merge patch that stamps the pod (the notice with it: a stale leader's notice is refused with its stamp). */
    static String stamp(long epoch, String token, String notice) {
        Map<String, Object> metadata = new LinkedHashMap<>();
        metadata.put("labels", Map.of(Names.STOP_EPOCH, Long.toString(epoch)));
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(Names.STOP_TOKEN, token);
        if (notice != null) {
            annotations.put(Names.NOTICE_ANNOTATION, notice);
        }
        metadata.put("annotations", annotations);
        return Json.mapper().writeValueAsString(Map.of("metadata", metadata));
    }

    /**
     * A delete with the resource version as its precondition. fabric8's typed API offers the lock or a grace period,
     * not both; its resources are {@link ExtensibleResource}s, which offer both.
     */
    @SuppressWarnings("unchecked")
    private Deletable locked(String namespace, String pod, String resourceVersion, Long grace) {
        var locked = (ExtensibleResource<Pod>) client.pods().inNamespace(namespace).withName(pod).lockResourceVersion(resourceVersion);
        return grace == null ? locked : locked.withGracePeriod(grace);
    }
}
