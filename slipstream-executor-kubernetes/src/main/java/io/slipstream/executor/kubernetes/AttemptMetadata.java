package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.slipstream.api.codec.Json;
import io.slipstream.api.run.ClusterMetadata;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.ExecutorException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Each attempt's metadata config map, with the addresses of its pods: an address is known only once a pod runs, so
 * the map is written at launch with what is known and completed as the watch sees pods get theirs (their init
 * containers wait for that). The map itself is the record: a restarted control plane reads it back.
 */
final class AttemptMetadata {
    private static final Logger LOG = LoggerFactory.getLogger(AttemptMetadata.class);

    private final KubernetesClient client;
    private final Manifests manifests;
    private final PodWatch pods;
    private final TrackedInstances instances;
    /** Attempts whose metadata does not yet list every started instance's address. */
    private final Set<String> incomplete = ConcurrentHashMap.newKeySet();
    /** What this executor last wrote to each metadata config map: an unchanged one is neither read nor written again. */
    private final Map<String, Map<String, String>> written = new ConcurrentHashMap<>();

    AttemptMetadata(KubernetesClient client, Manifests manifests, PodWatch pods, TrackedInstances instances) {
        this.client = client;
        this.manifests = manifests;
        this.pods = pods;
        this.instances = instances;
    }

    /**
     * Writes an attempt's metadata with the addresses of the pods that have one, and marks it complete once every
     * instance started so far has one. One writer at a time: the launching thread and the watch both write.
     */
    synchronized void write(String namespace, RunId runId, int attempt, ClusterMetadata metadata) {
        // By instance name: an elastic world's ranks are dense (slot 2 may be rank 1), a pod's rank label is its slot.
        Map<String, String> ips = new HashMap<>();
        currentLaunches(namespace, runId, attempt).forEach((slot, pod) -> {
            String name = pod.getMetadata().getAnnotations() == null ? null : pod.getMetadata().getAnnotations().get(Names.INSTANCE_ANNOTATION);
            if (name != null && pod.getStatus() != null && pod.getStatus().getPodIP() != null && !pod.getStatus().getPodIP().isBlank()) {
                ips.put(name, pod.getStatus().getPodIP());
            }
        });
        List<ClusterMetadata.Instance> instances = new ArrayList<>();
        boolean complete = true;
        for (ClusterMetadata.Instance instance : metadata.instances()) {
            String ip = ips.getOrDefault(instance.name(), instance.ip());
            instances.add(new ClusterMetadata.Instance(instance.name(), instance.nodeGroup(), instance.rank(), instance.groupRank(), instance.node(),
                    instance.hostname(), instance.fqdn(), ip, instance.ports(), instance.started(), instance.topology()));
            complete &= !instance.started() || ip != null && !ip.isBlank();
        }
        // Inside the pods, storage is where it is mounted.
        List<ClusterMetadata.Storage> storage = metadata.storage().stream()
                .map(st -> new ClusterMetadata.Storage(st.name(), st.scope(), st.mountPath(), st.mountPath())).toList();
        ClusterMetadata filled = new ClusterMetadata(metadata.version(), metadata.runId(), metadata.workspace(), metadata.job(), metadata.attempt(),
                metadata.worldSize(), metadata.startupOrder(), metadata.master(), instances, storage);
        String json;
        try {
            json = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(filled);
        } catch (RuntimeException e) {
            throw new ExecutorException("cannot write the metadata of run " + runId + ": " + e.getMessage(), e);
        }
        ConfigMap wanted = manifests.metadata(runId, attempt, namespace, filled, json, complete);
        String name = Names.metadata(runId, attempt);
        String key = namespace + "/" + name;
        if (!wanted.getData().equals(written.get(key))) {
            ConfigMap current = client.configMaps().inNamespace(namespace).withName(name).get();
            if (current == null) {
                RunObjects.createIfAbsent(client, wanted);
            } else if (!wanted.getData().equals(current.getData())) {
                current.setData(wanted.getData());
                client.configMaps().inNamespace(namespace).resource(current).update();
            }
            written.put(key, wanted.getData());
        }
        if (complete) {
            incomplete.remove(key);
        } else {
            incomplete.add(key);
        }
    }

    /**
     * Per rank, the pod of its newest launch: a rank restarted in place has the pod of the launch before until it is
     * deleted, whose address is stale. A launch whose pod is not seen yet has none (its rank is tracked as newer).
     */
    private Map<Integer, Pod> currentLaunches(String namespace, RunId runId, int attempt) {
        Map<Integer, Pod> newest = new HashMap<>();
        for (Pod pod : pods.cached(namespace)) {
            var labels = pod.getMetadata().getLabels();
            if (Names.runKey(runId).equals(labels.get(Names.RUN)) && Integer.toString(attempt).equals(labels.get(Names.ATTEMPT))) {
                newest.merge(Integer.parseInt(labels.get(Names.RANK)), pod, (a, b) -> PodHandles.restartOf(a) >= PodHandles.restartOf(b) ? a : b);
            }
        }
        newest.entrySet().removeIf(entry -> {
            TrackedInstance tracked = instances.get(new InstanceId(runId, attempt, entry.getKey()));
            return tracked != null && tracked.restart > PodHandles.restartOf(entry.getValue());
        });
        return newest;
    }

    /** Fills in the addresses pods got since the metadata was written (the metadata itself is read from the cluster). */
    void complete(Pod pod) {
        var labels = pod.getMetadata().getLabels();
        String runId = pod.getMetadata().getAnnotations() == null ? null : pod.getMetadata().getAnnotations().get(Names.RUN_ID_ANNOTATION);
        if (runId == null || labels.get(Names.ATTEMPT) == null) {
            return;
        }
        int attempt = Integer.parseInt(labels.get(Names.ATTEMPT));
        String namespace = pod.getMetadata().getNamespace();
        String name = Names.metadata(new RunId(runId), attempt);
        String key = namespace + "/" + name;
        // A pod still pending may wait for metadata that a control plane before a restart left incomplete.
        boolean pending = pod.getStatus() != null && "Pending".equals(pod.getStatus().getPhase());
        if (!incomplete.contains(key) && !pending) {
            return;
        }
        try {
            Map<String, String> data = written.get(key);
            if (data == null) {
                ConfigMap current = client.configMaps().inNamespace(namespace).withName(name).get(); // written before a restart
                data = current == null ? null : current.getData();
            }
            if (data == null || data.get(Manifests.METADATA_KEY) == null) {
                return;
            }
            if (data.containsKey(Manifests.COMPLETE_KEY)) {
                incomplete.remove(key);
                return;
            }
            ClusterMetadata metadata = Json.mapper().readValue(data.get(Manifests.METADATA_KEY), ClusterMetadata.class);
            write(namespace, new RunId(runId), attempt, metadata);
        } catch (RuntimeException e) {
            LOG.warn("cannot complete the metadata {}: {}", key, e.getMessage());
        }
    }

    /** Forgets what it knows of a run's config maps (the maps themselves go with the run's other objects). */
    void forget(RunId runId) {
        // Exactly this run's config maps (another run's key may start with this one's).
        Pattern names = Pattern.compile(Pattern.quote("ss-" + Names.runKey(runId) + "-") + "\\d+-metadata");
        Predicate<String> ofRun = key -> names.matcher(key.substring(key.indexOf('/') + 1)).matches();
        incomplete.removeIf(ofRun);
        written.keySet().removeIf(ofRun);
    }
}
