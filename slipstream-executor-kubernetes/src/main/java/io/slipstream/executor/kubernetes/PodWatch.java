package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.ExecutorException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A watch of the managed pods of each namespace instances go to: it tells what changed as it changes, and answers what
 * it has seen without asking the API server. Started once, after what its events reach exists.
 */
final class PodWatch implements AutoCloseable {
    /** The index of pods by instance: every launch of an instance (restarts in place) is found without a scan. */
    private static final String LAUNCHES = "launches";

    /** What becomes of a pod's change; {@code deleted} when the pod is gone. */
    interface Events {
        void changed(Pod pod, boolean deleted);
    }

    private final KubernetesClient client;
    private final List<String> namespaces;
    private final Map<String, SharedIndexInformer<Pod>> informers = new LinkedHashMap<>();

    PodWatch(KubernetesClient client, List<String> namespaces) {
        this.client = client;
        this.namespaces = List.copyOf(namespaces);
    }

    /** Watches every namespace, each listed before this returns; what it saw so far is stopped if one cannot be. */
    void start(Events events) {
        for (String namespace : namespaces) {
            SharedIndexInformer<Pod> informer = client.pods().inNamespace(namespace).withLabel(Names.MANAGED_BY, Names.MANAGER)
                    .runnableInformer(0);
            informer.addIndexers(Map.of(LAUNCHES, PodWatch::instanceKey));
            informer.addEventHandler(new ResourceEventHandler<>() {
                @Override
                public void onAdd(Pod pod) {
                    events.changed(pod, false);
                }

                @Override
                public void onUpdate(Pod before, Pod pod) {
                    events.changed(pod, false);
                }

                @Override
                public void onDelete(Pod pod, boolean unknownFinalState) {
                    events.changed(pod, true);
                }
            });
            informers.put(namespace, informer);
            try {
                informer.start().toCompletableFuture().get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new ExecutorException("cannot watch the pods of namespace " + namespace + ": " + e.getMessage(), e);
            }
        }
    }

    /** The namespaces watched. */
    Set<String> namespaces() {
        return informers.keySet();
    }

    /** The pod as the watch last saw it; null if it has not seen it (yet), or does not watch its namespace. */
    Pod cached(String namespace, String name) {
        SharedIndexInformer<Pod> informer = informers.get(namespace);
        return informer == null ? null : informer.getStore().getByKey(namespace + "/" + name);
    }

    /** The pods of every launch of the instance the watch has seen (one per restart in place), in no order. */
    List<Pod> launches(String namespace, InstanceId id) {
        SharedIndexInformer<Pod> informer = informers.get(namespace);
        return informer == null ? List.of() : informer.getIndexer().byIndex(LAUNCHES, Names.pod(id));
    }

    /** A pod's instance, as the name of its first launch's pod (none for a pod whose labels do not say). */
    private static List<String> instanceKey(Pod pod) {
        InstanceId id = PodHandles.idOf(pod);
        return id == null ? List.of() : List.of(Names.pod(id));
    }

    /** Every pod of the namespace the watch has seen. */
    List<Pod> cached(String namespace) {
        return informers.get(namespace).getStore().list();
    }

    @Override
    public void close() {
        informers.values().forEach(SharedIndexInformer::stop);
    }
}
