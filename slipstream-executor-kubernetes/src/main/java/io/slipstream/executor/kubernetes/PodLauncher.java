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
 * Secret. The pod is named by instance (and restart in place, see {@link EarlierLaunches}) and carries this executor's
 * epoch (the fence policy refuses a stale one), so a launch repeated, by this control plane or the one before a
 * restart, finds the pod instead of starting it twice.
 */
final class PodLauncher {
    private final KubernetesClient client;
    private final KubernetesConfig config;
    private final Manifests manifests;
    private final KubernetesFence fence;
    private final TrackedInstances instances;
    private final RunObjects runObjects;
    private final AttemptMetadata metadata;
    private final EarlierLaunches earlier;

    PodLauncher(KubernetesClient client, KubernetesConfig config, Manifests manifests, KubernetesFence fence, TrackedInstances instances,
            RunObjects runObjects, AttemptMetadata metadata, EarlierLaunches earlier) {
        this.client = client;
        this.config = config;
        this.manifests = manifests;
        this.fence = fence;
        this.instances = instances;
        this.runObjects = runObjects;
        this.metadata = metadata;
        this.earlier = earlier;
    }

    /**
     * Launches the instance (or finds it launched) and returns its pod's handle. A launch of a restart newer than the
     * newest pod's makes a pod of its own once that pod's launch is over, and then deletes the ended one.
     */
    Map<String, String> launch(LaunchSpec spec) {
        InstanceId id = spec.id();
        String namespace = config.namespaceOf(spec.metadata() != null ? spec.metadata().workspace() : spec.env().get("SLIPSTREAM_WORKSPACE"));
        // The watch knows every pod of ours; one it has not seen yet shows up as a conflict on create below.
        Pod newest = earlier.newest(namespace, id);
        int newestRestart = newest == null ? -1 : PodHandles.restartOf(newest);
        boolean launched = newestRestart > spec.restart() || newestRestart == spec.restart() && newest.getMetadata().getDeletionTimestamp() == null;
        if (launched) {
            if (!spec.identity().isEmpty()) {
                // Adopted after a crash: the Secret holds the crashed server's tokens; these go where its pods read them.
                runObjects.refreshIdentity(namespace, id, spec.identity());
            }
            Map<String, String> handle = instances.track(id, newest);
            earlier.retireBefore(namespace, id, newestRestart); // a crash may have come between the restart's create and the delete
            return handle;
        }
        if (newest != null && newestRestart < spec.restart()) {
            earlier.requireEnded(id, newest);
        }
        fence.check();
        Pod pod = manifests.pod(spec, namespace, fence.epoch());
        String name = pod.getMetadata().getName();
        // In place of the launch before, if this is a restart: the ended pod's late news are not this one's.
        TrackedInstance instance = instances.remember(id, namespace, name, spec.restart());
        instance.probe = spec.probe() != null;
        instance.node = spec.node();
        Map<String, String> handle;
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
            handle = instances.track(id, created);
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409) {
                Pod raced = client.pods().inNamespace(namespace).withName(name).get();
                if (raced != null) {
                    return instances.track(id, raced);
                }
            }
            if (KubernetesFence.refusedByPolicy(e)) {
                throw new ExecutorException("fenced: the API server refused pod " + name + " of epoch " + fence.epoch() + ": " + e.getMessage(), e);
            }
            throw new ExecutorException("cannot create pod " + name + " on node " + spec.node() + ": " + e.getMessage(), e);
        }
        if (spec.restart() > 0) {
            earlier.retireBefore(namespace, id, spec.restart());
        }
        return handle;
    }
}
