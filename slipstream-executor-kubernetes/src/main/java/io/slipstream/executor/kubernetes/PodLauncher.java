package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.LaunchSpec;
import java.util.Map;

/**
 * Launches an instance as its pod, with what the pod needs first: its run's objects, its attempt's metadata and
 * Secret. The pod is named by instance and carries this executor's epoch (the fence policy refuses a stale one), so a
 * launch repeated, by this control plane or the one before a restart, finds the pod instead of starting it twice.
 */
final class PodLauncher {
    private final KubernetesClient client;
    private final KubernetesConfig config;
    private final Manifests manifests;
    private final KubernetesFence fence;
    private final PodWatch pods;
    private final TrackedInstances instances;
    private final RunObjects runObjects;
    private final AttemptMetadata metadata;

    PodLauncher(KubernetesClient client, KubernetesConfig config, Manifests manifests, KubernetesFence fence, PodWatch pods,
            TrackedInstances instances, RunObjects runObjects, AttemptMetadata metadata) {
        this.client = client;
        this.config = config;
        this.manifests = manifests;
        this.fence = fence;
        this.pods = pods;
        this.instances = instances;
        this.runObjects = runObjects;
        this.metadata = metadata;
    }

    /** Launches the instance (or finds it launched) and returns its pod's handle. */
    Map<String, String> launch(LaunchSpec spec) {
        InstanceId id = spec.id();
        String namespace = config.namespaceOf(spec.metadata() != null ? spec.metadata().workspace() : spec.env().get("SLIPSTREAM_WORKSPACE"));
        // The watch knows every pod of ours; one it has not seen yet shows up as a conflict on create below.
        Pod existing = pods.cached(namespace, Names.pod(id));
        if (existing != null && existing.getMetadata().getDeletionTimestamp() == null) {
            if (!spec.identity().isEmpty()) {
                // Adopted after a crash: the Secret holds the crashed server's tokens; these go where its pods read them.
                runObjects.refreshIdentity(namespace, id, spec.identity());
            }
            return instances.track(id, existing);
        }
        fence.check();
        Pod pod = manifests.pod(spec, namespace, fence.epoch());
        TrackedInstance instance = instances.remember(id, namespace, Names.pod(id));
        instance.probe = spec.probe() != null;
        instance.node = spec.node();
        try {
            if (spec.metadata() != null) {
                runObjects.ensureRunObjects(id.runId(), spec.metadata(), namespace);
                metadata.write(namespace, id.runId(), id.attempt(), spec.metadata());
            }
            String token = spec.env().get(LaunchSpec.RUN_TOKEN_ENV);
            if (token != null || !Manifests.secretData(spec).isEmpty()) {
                runObjects.ensureAttemptSecret(namespace, spec, token);
            }
            Pod created = client.pods().inNamespace(namespace).resource(pod).create();
            return instances.track(id, created);
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409) {
                Pod raced = client.pods().inNamespace(namespace).withName(Names.pod(id)).get();
                if (raced != null) {
                    return instances.track(id, raced);
                }
            }
            if (KubernetesFence.refusedByPolicy(e)) {
                throw new ExecutorException("fenced: the API server refused pod " + pod.getMetadata().getName() + " of epoch " + fence.epoch()
                        + ": " + e.getMessage(), e);
            }
            throw new ExecutorException("cannot create pod " + pod.getMetadata().getName() + " on node " + spec.node() + ": " + e.getMessage(), e);
        }
    }
}
