package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.Executor;
import io.slipstream.executor.InstanceReport;
import java.time.Clock;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a control plane finds of the instances it recorded, after a restart or a change of leader: each recorded pod
 * (that of the launch the handle names, a restart in place by its {@link Executor#RESTART_KEY}) still there (the same
 * uid) is tracked again and reported running, then as the watch sees it; one that is gone is lost. Adoption acts on
 * what it finds, so it is fenced: a pod of a newer leader stops it, a stop an older leader stamped is voided, and pods
 * of older attempts of the adopted runs, and of launches before an adopted restart in place, are deleted.
 */
final class Adoption {
    private static final Logger LOG = LoggerFactory.getLogger(Adoption.class);

    private final KubernetesClient client;
    private final KubernetesConfig config;
    private final KubernetesFence fence;
    private final PodDeletion deletion;
    private final PodWatch pods;
    private final TrackedInstances instances;
    private final PodReports reports;
    private final EarlierLaunches earlier;
    private final Clock clock;

    Adoption(KubernetesClient client, KubernetesConfig config, KubernetesFence fence, PodDeletion deletion, PodWatch pods,
            TrackedInstances instances, PodReports reports, EarlierLaunches earlier, Clock clock) {
        this.client = client;
        this.config = config;
        this.fence = fence;
        this.deletion = deletion;
        this.pods = pods;
        this.instances = instances;
        this.reports = reports;
        this.earlier = earlier;
        this.clock = clock;
    }

    /**
     * The handle of the pod of the instance's newest launch (the highest restart in place), in whichever namespace it
     * is, if there is one. Asked of the API server, not the watch: it tells whether a launch cut short by a crash made a pod.
     */
    Optional<Map<String, String>> find(InstanceId id) {
        Map<String, String> labels = Map.of(Names.RUN, Names.runKey(id.runId()), Names.ATTEMPT, Integer.toString(id.attempt()),
                Names.RANK, Integer.toString(id.rank()));
        for (String namespace : pods.namespaces()) {
            Optional<Pod> newest = client.pods().inNamespace(namespace).withLabels(labels).list().getItems().stream()
                    .filter(pod -> id.equals(PodHandles.idOf(pod))).max(java.util.Comparator.comparingInt(PodHandles::restartOf));
            if (newest.isPresent()) {
                return newest.map(PodHandles::of);
            }
        }
        return Optional.empty();
    }

    void adopt(Map<InstanceId, Map<String, String>> handles) {
        fence.check(); // adopting acts on what it finds: not for a replica that lost its lease
        Map<RunId, Integer> newestAttempt = new HashMap<>();
        Map<RunId, String> namespaceOf = new HashMap<>();
        Map<InstanceId, Integer> adoptedLaunch = new HashMap<>();
        handles.forEach((id, handle) -> {
            newestAttempt.merge(id.runId(), id.attempt(), Math::max);
            String namespace = PodHandles.namespace(handle, config);
            namespaceOf.put(id.runId(), namespace);
            int restart = Executor.restartOf(handle);
            String name = Names.pod(id, Math.max(restart, 0));
            Pod cached = pods.cached(namespace, name); // listed at start
            Pod pod = restart < 0 ? null : cached != null ? cached : client.pods().inNamespace(namespace).withName(name).get();
            if (pod == null || !pod.getMetadata().getUid().equals(handle.get("uid"))) {
                instances.report(new InstanceReport.Lost(id, "its pod " + name + " is gone", clock.instant()));
                return;
            }
            Map<String, String> adopted = instances.track(id, pod);
            instances.report(new InstanceReport.Running(id, adopted, clock.instant()));
            reports.changed(pod, false);
            adoptedLaunch.put(id, restart);
        });
        // Pods of older attempts of these runs are orphans of a restart that was under way: they must not run on. Pods
        // of older epochs are ours; one of a newer epoch means a newer leader acts on these runs: nothing here is ours
        // to delete, and this executor stops.
        Map<RunId, List<Pod>> podsOf = new LinkedHashMap<>();
        newestAttempt.keySet().forEach(runId -> podsOf.put(runId,
                client.pods().inNamespace(namespaceOf.get(runId)).withLabel(Names.RUN, Names.runKey(runId)).list().getItems()));
        Optional<Pod> newer = KubernetesFence.ofNewerLeader(podsOf.values().stream().flatMap(List::stream).toList(), fence.epoch());
        if (newer.isPresent()) {
            throw fence.superseded(newer.get());
        }
        // A stop an older leader stamped but had not deleted yet may still be on its way: change the pod, so that the
        // resourceVersion its delete carries no longer matches (and its stamp again is refused by the policy).
        podsOf.forEach((runId, runPods) -> runPods.stream().filter(pod -> KubernetesFence.stopOfOlderLeader(pod, fence.epoch()))
                .forEach(pod -> deletion.voidOlderStop(namespaceOf.get(runId), pod.getMetadata().getName())));
        podsOf.forEach((runId, runPods) -> {
            for (Pod pod : runPods) {
                String podAttempt = pod.getMetadata().getLabels().get(Names.ATTEMPT);
                if (podAttempt != null && Integer.parseInt(podAttempt) < newestAttempt.get(runId) && pod.getMetadata().getDeletionTimestamp() == null) {
                    LOG.info("deleting pod {}: left over from attempt {} of run {}", pod.getMetadata().getName(), podAttempt, runId);
                    deletion.delete(namespaceOf.get(runId), pod.getMetadata().getName(), null, null);
                }
            }
        });
        // A restart in place that a crash cut short between making its pod and deleting the ended one left that one.
        adoptedLaunch.forEach((id, restart) -> earlier.retireBefore(namespaceOf.get(id.runId()), id, restart));
    }
}
