package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.slipstream.executor.ExecutorException;

/**
 * The newest leader epoch of the replicas that share a cluster, in a ConfigMap of the jobs' namespace
 * ({@value #NAME}, key {@code epoch}). {@link #fence} moves it forward with a compare-and-set on the object's resource
 * version. Every pod the executor creates carries its epoch (label {@link Names#EPOCH}); every pod it stops is first
 * stamped with it ({@link Names#STOP_EPOCH}) and then deleted with the stamped resource version as a precondition
 * ({@link PodDeletion}).
 *
 * <p>Where {@code deploy/kubernetes/fence-policy.yaml} is installed, the API server itself refuses a create or a stamp
 * whose epoch is older than this ConfigMap's: a replica that lost its lease and woke up starts and kills nothing, with
 * no window, since the server decides against the ConfigMap as it is when the request arrives. Without the policy,
 * what remains is the fallback: each create and delete first reads the ConfigMap ({@link #check}) and is refused if a
 * newer epoch took over. That check and the API call are two requests: a leader paused between them for longer than
 * the new leader needs to fence can still make one call (pods are named by instance, so that call cannot start an
 * instance twice, and the new leader's reconciliation corrects it).
 */
final class KubernetesFence {
    static final String NAME = "slipstream-leader-epoch";
    /** The ValidatingAdmissionPolicy of deploy/kubernetes/fence-policy.yaml. */
    static final String POLICY = "slipstream-leader-fence";
    private static final String KEY = "epoch";

    private final KubernetesClient client;
    private final String namespace;
    private volatile long epoch;

    KubernetesFence(KubernetesClient client, String namespace) {
        this.client = client;
        this.namespace = namespace;
    }

    void fence(long newEpoch) {
        for (int attempt = 0; attempt < 10; attempt++) {
            ConfigMap current = client.configMaps().inNamespace(namespace).withName(NAME).get();
            long stored = epochOf(current);
            if (stored > newEpoch) {
                throw new io.slipstream.executor.EpochSupersededException(newEpoch, stored, "ConfigMap " + NAME);
            }
            try {
                if (current == null) {
                    client.configMaps().inNamespace(namespace).resource(new ConfigMapBuilder().withNewMetadata().withName(NAME)
                            .addToLabels(Names.MANAGED_BY, Names.MANAGER).endMetadata().addToData(KEY, Long.toString(newEpoch)).build()).create();
                } else {
                    // update() sends the resource version read above: a concurrent fence makes it a 409, and we read again
                    client.configMaps().inNamespace(namespace).resource(new ConfigMapBuilder(current).addToData(KEY, Long.toString(newEpoch)).build())
                            .update();
                }
                epoch = newEpoch;
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409) {
                    throw new ExecutorException("cannot record the leader epoch in ConfigMap " + NAME + ": " + e.getMessage(), e);
                }
            }
        }
        throw new ExecutorException("cannot record the leader epoch in ConfigMap " + NAME + ": it kept changing");
    }

    /** The epoch this executor acts for (0 until it is fenced). */
    long epoch() {
        return epoch;
    }

    /** Refuses if a newer epoch has fenced since this executor was. */
    void check() {
        long stored;
        try {
            stored = epochOf(client.configMaps().inNamespace(namespace).withName(NAME).get());
        } catch (KubernetesClientException e) {
            throw new ExecutorException("cannot read the leader epoch in ConfigMap " + NAME + ": " + e.getMessage(), e);
        }
        if (stored > epoch) {
            throw new ExecutorException("fenced: this executor acts for epoch " + epoch + ", but epoch " + stored
                    + " has taken over (this replica lost its lease); nothing was created or deleted");
        }
    }

    /** The epoch of the leader that created a pod; 0 for a pod from before pods carried one (it is ours all the same). */
    static long epochOf(Pod pod) {
        String value = pod.getMetadata().getLabels() == null ? null : pod.getMetadata().getLabels().get(Names.EPOCH);
        try {
            return value == null ? 0 : Long.parseLong(value);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** The first of {@code pods} that a leader newer than {@code epoch} created, if any: none of them is ours to act on. */
    static java.util.Optional<Pod> ofNewerLeader(java.util.List<Pod> pods, long epoch) {
        return pods.stream().filter(pod -> epochOf(pod) > epoch).findFirst();
    }

    /** Whether the pod carries the stop stamp of a leader older than {@code epoch} and is not being deleted yet. */
    static boolean stopOfOlderLeader(Pod pod, long epoch) {
        String value = pod.getMetadata().getLabels() == null ? null : pod.getMetadata().getLabels().get(Names.STOP_EPOCH);
        if (value == null || pod.getMetadata().getDeletionTimestamp() != null) {
            return false;
        }
        try {
            return Long.parseLong(value) < epoch;
        } catch (NumberFormatException e) {
            return true;
        }
    }

    /** Whether the API server refused a request because the fence policy found its epoch stale. */
    static boolean refusedByPolicy(KubernetesClientException e) {
        return e.getCode() == 403 && e.getMessage() != null && e.getMessage().contains("ValidatingAdmissionPolicy '" + POLICY + "'");
    }

    /** The refusal of an executor that found a newer leader's work. */
    ExecutorException superseded(Pod pod) {
        return new ExecutorException("fenced: this executor acts for epoch " + epoch + ", but pod " + pod.getMetadata().getName()
                + " was created by epoch " + epochOf(pod) + " (this replica lost its lease); nothing was deleted");
    }

    private static long epochOf(ConfigMap map) {
        if (map == null || map.getData() == null || map.getData().get(KEY) == null) {
            return 0;
        }
        try {
            return Long.parseLong(map.getData().get(KEY).trim());
        } catch (NumberFormatException e) {
            throw new ExecutorException("ConfigMap " + NAME + " holds '" + map.getData().get(KEY) + "', not an epoch");
        }
    }
}
