package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.slipstream.api.run.Endpoint;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.Activity;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.LogChunk;
import io.slipstream.executor.LogStream;
import io.slipstream.executor.NodeInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Runs instances as pods of a Kubernetes cluster: each pinned ({@code spec.nodeName}) to the node the scheduler chose,
 * with its run's headless service (stable DNS names), metadata config map, network policy and storage claims.
 * Pods are watched; their status becomes reports. Nothing is kept only in memory that a restarted control plane
 * needs: every object carries its run, attempt and rank (and a pod its restart in place), and the metadata lives in its
 * config map.
 *
 * <p>This class binds the parts, one concern each: {@link PodLauncher} (with {@link RunObjects},
 * {@link AttemptMetadata} and {@link EarlierLaunches}), {@link PodWatch} and {@link PodReports}, {@link Adoption},
 * {@link Termination} under the fence ({@link KubernetesFence}, {@link PodDeletion}), {@link PodLogs}, {@link NodeWatch}
 * and {@link LostNodes}.
 */
public final class KubernetesExecutor implements Executor {
    /** Rendezvous ports: every pod has its own network namespace, so the same ports serve every instance. */
    static final int FIRST_PORT = 29500;

    private final KubernetesClient client;
    private final boolean ownsClient;
    private final KubernetesConfig config;
    private final KubernetesFence fence;
    private final NodeWatch nodes;
    private final PodWatch pods;
    private final TrackedInstances instances = new TrackedInstances();
    private final AttemptMetadata metadata;
    private final RunObjects runObjects;
    private final PodLogs logs;
    private final PodLauncher launcher;
    private final Adoption adoption;
    private final Termination termination;
    private final LostNodes lostNodes;

    /** Connects to the cluster the config names. */
    public static KubernetesExecutor connect(KubernetesConfig config, Path dataDir, Clock clock) {
        Config clientConfig;
        try {
            if (config.kubeconfig() != null) {
                clientConfig = Config.fromKubeconfig(config.context(), Files.readString(Path.of(config.kubeconfig())), config.kubeconfig());
            } else {
                clientConfig = Config.autoConfigure(config.context());
            }
        } catch (IOException | RuntimeException e) {
            throw new ExecutorException("cannot read the Kubernetes credentials" + (config.kubeconfig() == null ? "" : " in " + config.kubeconfig())
                    + ": " + e.getMessage(), e);
        }
        clientConfig = new ConfigBuilder(clientConfig).withNamespace(config.namespace()).build();
        KubernetesClient client = new KubernetesClientBuilder().withConfig(clientConfig).build();
        try {
            return new KubernetesExecutor(client, true, config, dataDir, clock);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }

    KubernetesExecutor(KubernetesClient client, boolean ownsClient, KubernetesConfig config, Path dataDir, Clock clock) {
        this.client = client;
        this.ownsClient = ownsClient;
        this.config = config;
        Manifests manifests = new Manifests(config);
        this.fence = new KubernetesFence(client, config.namespace());
        PodDeletion deletion = new PodDeletion(client, fence);
        this.nodes = new NodeWatch(client, config, clock);
        this.pods = new PodWatch(client, config.allNamespaces());
        this.metadata = new AttemptMetadata(client, manifests, pods, instances);
        this.runObjects = new RunObjects(client, manifests, deletion);
        this.logs = new PodLogs(config, new LogSpool(client, dataDir.resolve("pod-logs")));
        PodReports reports = new PodReports(instances, metadata, logs, deletion, clock);
        EarlierLaunches earlier = new EarlierLaunches(pods, instances, logs, deletion);
        this.launcher = new PodLauncher(client, config, manifests, fence, instances, runObjects, metadata, earlier);
        this.adoption = new Adoption(client, config, fence, deletion, pods, instances, reports, earlier, clock);
        this.termination = new Termination(config, instances, deletion, clock);
        try {
            pods.start(reports);
        } catch (ExecutorException e) {
            pods.close();
            nodes.close();
            if (ownsClient) {
                client.close();
            }
            throw e;
        }
        this.lostNodes = new LostNodes(nodes, instances, deletion, clock);
    }

    @Override
    public List<NodeInfo> nodes() {
        return nodes.nodes();
    }

    /** Each pod has an address of its own: its ports need not differ from those of pods on other nodes. */
    @Override
    public String portDomain(String node) {
        return node;
    }

    @Override
    public Endpoint endpoint(InstanceId id, String workspace, String name, String node, int ports, Set<Integer> taken) {
        nodes.require(node);
        List<Integer> given = new ArrayList<>();
        for (int port = FIRST_PORT; given.size() < ports; port++) {
            if (!taken.contains(port)) {
                given.add(port);
            }
        }
        String hostname = Names.hostname(name, id.rank());
        String fqdn = hostname + "." + Names.service(id.runId()) + "." + config.namespaceOf(workspace) + ".svc." + config.clusterDomain();
        return new Endpoint(hostname, fqdn, null, given); // the pod's IP is known once it runs: the metadata gets it then
    }

    /**
     * An ended instance launched again as a restart in place is a new pod on the same node, with a name of its own and
     * the same DNS name, once the ended pod is over; that one is deleted then ({@link EarlierLaunches}).
     */
    @Override
    public boolean restartsInPlace() {
        return true;
    }

    @Override
    public boolean requiresImage() {
        return true;
    }

    /** Each pod's requests are its limits (see {@link Manifests}), and its GPUs the device plugin's: the kubelet holds it to them. */
    @Override
    public io.slipstream.executor.ResourceEnforcement enforcement() {
        return new io.slipstream.executor.ResourceEnforcement(java.util.List.of("memory", "cpu", "devices", "kill"),
                "the kubelet enforces each pod's limits (equal to what it was given) and hands it its GPUs alone");
    }

    @Override
    public boolean nodesMayGrow() {
        return true; // a cluster autoscaler may add nodes of a size no node has now
    }

    @Override
    public void setListener(Consumer<InstanceReport> listener) {
        instances.setListener(listener);
    }

    @Override
    public void fence(long epoch) {
        fence.fence(epoch);
    }

    @Override
    public Map<String, String> launch(LaunchSpec spec) {
        nodes.require(spec.node());
        return launcher.launch(spec);
    }

    @Override
    public Optional<Map<String, String>> find(InstanceId id) {
        return adoption.find(id);
    }

    @Override
    public void adopt(Map<InstanceId, Map<String, String>> handles) {
        adoption.adopt(handles);
    }

    @Override
    public void terminate(InstanceId id, Map<String, String> handle, Duration gracePeriod, String reason) {
        termination.terminate(id, handle, gracePeriod, reason);
    }

    /** Where a job's own mounts may not go: the pod's own files (a mount there, or above, would hide them or clash). */
    private static final List<String> OWN_DIRS = List.of(Manifests.SECRETS_DIR, Manifests.IDENTITY_DIR, Manifests.RUN_DIR, Manifests.NOTICE_DIR,
            Manifests.CHECKPOINT_DIR, Manifests.SHARED_DIR);

    /** A Secret's or a storage's mount path on or above one of the pod's own directories. */
    @Override
    public Map<String, String> refusals(io.slipstream.api.spec.JobSpec job) {
        Map<String, String> refused = new java.util.LinkedHashMap<>();
        for (int g = 0; g < job.nodeGroups().size(); g++) {
            var secrets = job.nodeGroups().get(g).secrets();
            for (int i = 0; i < secrets.size(); i++) {
                String problem = ownDirProblem(secrets.get(i).mountPath());
                if (problem != null) {
                    refused.put("nodeGroups[" + g + "].secrets[" + i + "].mountPath", problem);
                }
            }
        }
        for (int i = 0; i < job.storage().size(); i++) {
            String problem = ownDirProblem(job.storage().get(i).mountPath());
            if (problem != null) {
                refused.put("storage[" + i + "].mountPath", problem);
            }
        }
        return refused;
    }

    private static String ownDirProblem(String mountPath) {
        if (mountPath == null) {
            return null;
        }
        String path = mountPath.endsWith("/") ? mountPath.substring(0, mountPath.length() - 1) : mountPath;
        for (String own : OWN_DIRS) {
            if (own.equals(path) || own.startsWith(path + "/") || path.startsWith(own + "/")) {
                return "must not be on or above " + own + ", where Slipstream puts the pod's own files";
            }
        }
        return null;
    }

    /** Writes the tokens into the attempt's Secret (once for all its pods), while the handle's pod runs. */
    @Override
    public boolean deliversIdentity() {
        return true;
    }

    @Override
    public boolean refreshIdentity(InstanceId id, Map<String, String> handle, List<io.slipstream.executor.IdentityToken> tokens) {
        String namespace = PodHandles.namespace(handle, config);
        io.fabric8.kubernetes.api.model.Pod pod = pods.cached(namespace, handle.getOrDefault("pod", ""));
        if (pod == null || pod.getMetadata().getDeletionTimestamp() != null || !handle.getOrDefault("uid", "").equals(pod.getMetadata().getUid())
                || pod.getStatus() != null && ("Succeeded".equals(pod.getStatus().getPhase()) || "Failed".equals(pod.getStatus().getPhase()))) {
            return false;
        }
        try {
            runObjects.refreshIdentity(namespace, id, tokens);
            return true;
        } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
            throw new ExecutorException("cannot refresh the identity tokens of " + id + ": " + e.getMessage(), e);
        }
    }

    @Override
    public Activity activity(InstanceId id, Map<String, String> handle) {
        return logs.activity(handle);
    }

    @Override
    public LogChunk readLog(InstanceId id, Map<String, String> handle, LogStream stream, long offset, int maxBytes) {
        return logs.read(handle, stream, offset, maxBytes);
    }

    @Override
    public LogChunk readLogTail(InstanceId id, Map<String, String> handle, LogStream stream, int maxBytes) {
        return logs.tail(handle, stream, maxBytes);
    }

    @Override
    public void forget(RunId runId) {
        for (String namespace : pods.namespaces()) {
            runObjects.deleteAll(runId, namespace);
        }
        // Untracked first: the watch's news of the deleted pods would copy their last lines again.
        instances.forget(runId);
        metadata.forget(runId);
        for (String namespace : pods.namespaces()) {
            logs.forget(runId, namespace);
        }
    }

    @Override
    public void close() {
        lostNodes.close();
        pods.close();
        nodes.close();
        if (ownsClient) {
            client.close();
        }
    }
}
