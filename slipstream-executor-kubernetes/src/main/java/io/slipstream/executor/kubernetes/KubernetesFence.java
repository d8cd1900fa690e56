package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.slipstream.executor.ExecutorException;

/**
 * The newest leader epoch of the replicas that share a cluster, in a ConfigMap of the jobs' namespace
 * ({@value #NAME}). {@link #fence} moves it forward with a compare-and-set on the object's resource version; every
 * pod creation and deletion first reads it ({@link #check}) and is refused if a newer epoch took over: a replica that
 * lost its lease and woke up starts and kills nothing. (The check and the API call are two requests: a leader paused
 * between them for longer than the new leader needs to fence can still make one call; pods are named by instance,
 * so that call cannot start an instance twice, and the new leader's reconciliation corrects it.)
 */
final class KubernetesFence {
    static final String NAME = "slipstream-leader-epoch";
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
