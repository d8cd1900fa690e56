package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.slipstream.api.codec.Json;
import io.slipstream.api.run.ClusterMetadata;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs instances as pods of a Kubernetes cluster: each pinned ({@code spec.nodeName}) to the node the scheduler chose,
 * with its run's headless service (stable DNS names), metadata config map, network policy and storage claims.
 * Pods are watched; their status becomes reports. Nothing is kept only in memory that a restarted control plane
 * needs: every object carries its run, attempt and rank, and the metadata lives in its config map.
 */
public final class KubernetesExecutor implements Executor {
    private static final Logger LOG = LoggerFactory.getLogger(KubernetesExecutor.class);
    /** Rendezvous ports: every pod has its own network namespace, so the same ports serve every instance. */
    static final int FIRST_PORT = 29500;

    private final KubernetesClient client;
    private final KubernetesFence fence;
    private final PodDeletion deletion;
    private final boolean ownsClient;
    private final KubernetesConfig config;
    private final Manifests manifests;
    private final Clock clock;
    private final LogSpool logs;
    private final NodeWatch nodes;
    /** A watch of the managed pods of each namespace instances go to. */
    private final Map<String, SharedIndexInformer<Pod>> pods = new LinkedHashMap<>();
    private final ScheduledExecutorService timer;
    private final Map<InstanceId, Tracked> tracked = new ConcurrentHashMap<>();
    /** Attempts whose metadata does not yet list every started instance's address. */
    private final Set<String> incompleteMetadata = ConcurrentHashMap.newKeySet();
    /** What this executor last wrote to each metadata config map: an unchanged one is neither read nor written again. */
    private final Map<String, Map<String, String>> writtenMetadata = new ConcurrentHashMap<>();
    private volatile Consumer<InstanceReport> listener = report -> {
    };

    /** What the executor remembers of an instance it launched or adopted, to report each change once. */
    private static final class Tracked {
        final InstanceId id;
        final String namespace;
        final String pod;
        volatile String uid;
        volatile String node;
        volatile boolean probe;
        boolean ready;
        boolean probeFailed;
        InstanceReport end;
        Long terminatingGrace;
        PodStatus.Ended lastEnded;

        Tracked(InstanceId id, String namespace, String pod) {
            this.id = id;
            this.namespace = namespace;
            this.pod = pod;
        }
    }

    /** Connects to the cluster the config names. */
    public static KubernetesExecutor connect(KubernetesConfig config, Path dataDir, Clock clock) {
        Config clientConfig;
        try {
            if (config.kubeconfig() != null) {
                clientConfig = Config.fromKubeconfig(config.context(), Files.readString(Path.of(config.kubeconfig())), config.kubeconfig());
            } else {
                clientConfig = Config.autoConfigure(config.context());
            }
        } catch (java.io.IOException | RuntimeException e) {
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
        this.manifests = new Manifests(config);
        this.clock = clock;
        this.logs = new LogSpool(client, dataDir.resolve("pod-logs"));
        this.fence = new KubernetesFence(client, config.namespace());
        this.deletion = new PodDeletion(client, fence);
        this.nodes = new NodeWatch(client, config, clock);
        for (String namespace : config.allNamespaces()) {
            SharedIndexInformer<Pod> informer = client.pods().inNamespace(namespace).withLabel(Names.MANAGED_BY, Names.MANAGER)
                    .inform(new ResourceEventHandler<>() {
                        @Override
                        public void onAdd(Pod pod) {
                            observe(pod, false);
                        }

                        @Override
                        public void onUpdate(Pod before, Pod pod) {
                            observe(pod, false);
                        }

                        @Override
                        public void onDelete(Pod pod, boolean unknownFinalState) {
                            observe(pod, true);
                        }
                    }, 0);
            pods.put(namespace, informer);
            try {
                informer.start().toCompletableFuture().get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                close();
                throw new ExecutorException("cannot watch the pods of namespace " + namespace + ": " + e.getMessage(), e);
            }
        }
        this.timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "kubernetes-executor-nodes");
            thread.setDaemon(true);
            return thread;
        });
        timer.scheduleWithFixedDelay(this::loseInstancesOnLostNodes, 1, 1, TimeUnit.SECONDS);
    }

    @Override
    public List<NodeInfo> nodes() {
        return nodes.nodes();
    }

    @Override
    public Endpoint endpoint(InstanceId id, String workspace, String name, String node, int ports, Set<Integer> taken) {
        requireNode(node);
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

    @Override
    public boolean requiresImage() {
        return true;
    }

    @Override
    public boolean nodesMayGrow() {
        return true; // a cluster autoscaler may add nodes of a size no node has now
    }

    @Override
    public void setListener(Consumer<InstanceReport> listener) {
        this.listener = listener;
    }

    @Override
    public void fence(long epoch) {
        fence.fence(epoch);
    }

    @Override
    public Map<String, String> launch(LaunchSpec spec) {
        requireNode(spec.node());
        InstanceId id = spec.id();
        String namespace = config.namespaceOf(spec.metadata() != null ? spec.metadata().workspace() : spec.env().get("SLIPSTREAM_WORKSPACE"));
        // The watch knows every pod of ours; one it has not seen yet shows up as a conflict on create below.
        Pod existing = pods.get(namespace).getStore().getByKey(namespace + "/" + Names.pod(id));
        if (existing != null && existing.getMetadata().getDeletionTimestamp() == null) {
            return track(id, existing);
        }
        fence.check();
        Pod pod = manifests.pod(spec, namespace, fence.epoch());
        Tracked instance = tracked.computeIfAbsent(id, key -> new Tracked(key, namespace, Names.pod(key)));
        instance.probe = spec.probe() != null;
        instance.node = spec.node();
        try {
            if (spec.metadata() != null) {
                createRunObjects(id.runId(), spec.metadata(), namespace);
                writeMetadata(namespace, id.runId(), id.attempt(), spec.metadata());
            }
            String token = spec.env().get(LaunchSpec.RUN_TOKEN_ENV);
            if (token != null || !Manifests.secretData(spec).isEmpty()) {
                ensureAttemptSecret(namespace, spec, token);
            }
            Pod created = client.pods().inNamespace(namespace).resource(pod).create();
            return track(id, created);
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409) {
                Pod raced = getPod(namespace, Names.pod(id));
                if (raced != null) {
                    return track(id, raced);
                }
            }
            if (KubernetesFence.refusedByPolicy(e)) {
                throw new ExecutorException("fenced: the API server refused pod " + pod.getMetadata().getName() + " of epoch " + fence.epoch()
                        + ": " + e.getMessage(), e);
            }
            throw new ExecutorException("cannot create pod " + pod.getMetadata().getName() + " on node " + spec.node() + ": " + e.getMessage(), e);
        }
    }

    /**
     * The first launch of an attempt makes its Secret; a later one (a node group that starts after another) adds the
     * values of the Secrets it refers to, if the others did not.
     */
    private void ensureAttemptSecret(String namespace, LaunchSpec spec, String token) {
        InstanceId id = spec.id();
        io.fabric8.kubernetes.api.model.Secret secret = manifests.attemptSecret(id.runId(), id.attempt(), namespace, token, spec);
        try {
            client.resource(secret).inNamespace(namespace).create();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
            Map<String, String> values = Manifests.secretData(spec);
            if (!values.isEmpty()) {
                var patch = io.slipstream.api.codec.Json.mapper().createObjectNode();
                var data = patch.putObject("data");
                values.forEach(data::put);
                // A merge patch of the data alone: it adds these keys and leaves the others (the token) as they are.
                client.secrets().inNamespace(namespace).resource(secret)
                        .patch(io.fabric8.kubernetes.client.dsl.base.PatchContext.of(io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
                                patch.toString());
            }
        }
    }

    /** The run's service, network policy and storage claims: made once per run, kept until it is forgotten. */
    private void createRunObjects(RunId runId, ClusterMetadata metadata, String namespace) {
        createIfAbsent(manifests.service(runId, namespace));
        createIfAbsent(manifests.networkPolicy(runId, namespace));
        manifests.claims(runId, metadata, namespace).forEach(this::createIfAbsent);
    }

    private void createIfAbsent(HasMetadata object) {
        try {
            client.resource(object).inNamespace(object.getMetadata().getNamespace()).create();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
        }
    }

    /**
     * Writes an attempt's metadata with the addresses of the pods that have one, and marks it complete once every
     * instance started so far has one (their init containers wait for that).
     */
    private synchronized void writeMetadata(String namespace, RunId runId, int attempt, ClusterMetadata metadata) {
        Map<Integer, String> ips = new HashMap<>();
        for (Pod pod : pods.get(namespace).getStore().list()) {
            var labels = pod.getMetadata().getLabels();
            if (Names.runKey(runId).equals(labels.get(Names.RUN)) && Integer.toString(attempt).equals(labels.get(Names.ATTEMPT))
                    && pod.getStatus() != null && pod.getStatus().getPodIP() != null && !pod.getStatus().getPodIP().isBlank()) {
                ips.put(Integer.parseInt(labels.get(Names.RANK)), pod.getStatus().getPodIP());
            }
        }
        List<ClusterMetadata.Instance> instances = new ArrayList<>();
        boolean complete = true;
        for (ClusterMetadata.Instance instance : metadata.instances()) {
            String ip = ips.getOrDefault(instance.rank(), instance.ip());
            instances.add(new ClusterMetadata.Instance(instance.name(), instance.nodeGroup(), instance.rank(), instance.groupRank(), instance.node(),
                    instance.hostname(), instance.fqdn(), ip, instance.ports(), instance.started()));
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
        if (!wanted.getData().equals(writtenMetadata.get(key))) {
            ConfigMap current = client.configMaps().inNamespace(namespace).withName(name).get();
            if (current == null) {
                createIfAbsent(wanted);
            } else if (!wanted.getData().equals(current.getData())) {
                current.setData(wanted.getData());
                client.configMaps().inNamespace(namespace).resource(current).update();
            }
            writtenMetadata.put(key, wanted.getData());
        }
        if (complete) {
            incompleteMetadata.remove(key);
        } else {
            incompleteMetadata.add(key);
        }
    }

    /** Fills in the addresses pods got since the metadata was written (the metadata itself is read from the cluster). */
    private void completeMetadata(Pod pod) {
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
        if (!incompleteMetadata.contains(key) && !pending) {
            return;
        }
        try {
            Map<String, String> data = writtenMetadata.get(key);
            if (data == null) {
                ConfigMap current = client.configMaps().inNamespace(namespace).withName(name).get(); // written before a restart
                data = current == null ? null : current.getData();
            }
            if (data == null || data.get(Manifests.METADATA_KEY) == null) {
                return;
            }
            if (data.containsKey(Manifests.COMPLETE_KEY)) {
                incompleteMetadata.remove(key);
                return;
            }
            ClusterMetadata metadata = Json.mapper().readValue(data.get(Manifests.METADATA_KEY), ClusterMetadata.class);
            writeMetadata(namespace, new RunId(runId), attempt, metadata);
        } catch (RuntimeException e) {
            LOG.warn("cannot complete the metadata {}: {}", key, e.getMessage());
        }
    }

    private Map<String, String> track(InstanceId id, Pod pod) {
        Tracked instance = tracked.computeIfAbsent(id, key -> new Tracked(key, pod.getMetadata().getNamespace(), Names.pod(key)));
        instance.uid = pod.getMetadata().getUid();
        instance.node = pod.getSpec().getNodeName();
        instance.probe = pod.getSpec().getContainers().stream().anyMatch(c -> c.getStartupProbe() != null);
        return handleOf(pod);
    }

    private Map<String, String> handleOf(Pod pod) {
        Map<String, String> handle = new LinkedHashMap<>();
        handle.put("namespace", pod.getMetadata().getNamespace());
        handle.put("pod", pod.getMetadata().getName());
        handle.put("uid", pod.getMetadata().getUid() == null ? "" : pod.getMetadata().getUid());
        return Map.copyOf(handle);
    }

    @Override
    public Optional<Map<String, String>> find(InstanceId id) {
        for (String namespace : pods.keySet()) {
            Pod pod = getPod(namespace, Names.pod(id));
            if (pod != null) {
                return Optional.of(handleOf(pod));
            }
        }
        return Optional.empty();
    }

    @Override
    public void adopt(Map<InstanceId, Map<String, String>> handles) {
        fence.check(); // adopting acts on what it finds: not for a replica that lost its lease
        Map<RunId, Integer> newestAttempt = new HashMap<>();
        Map<RunId, String> namespaceOf = new HashMap<>();
        handles.forEach((id, handle) -> {
            newestAttempt.merge(id.runId(), id.attempt(), Math::max);
            String namespace = namespace(handle);
            namespaceOf.put(id.runId(), namespace);
            var informer = pods.get(namespace);
            Pod cached = informer == null ? null : informer.getStore().getByKey(namespace + "/" + Names.pod(id)); // listed at start
            Pod pod = cached != null ? cached : getPod(namespace, Names.pod(id));
            if (pod == null || !pod.getMetadata().getUid().equals(handle.get("uid"))) {
                report(new InstanceReport.Lost(id, "its pod " + Names.pod(id) + " is gone", clock.instant()));
                return;
            }
            track(id, pod);
            report(new InstanceReport.Running(id, handleOf(pod), clock.instant()));
            observe(pod, false);
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
    }

    @Override
    public void terminate(InstanceId id, Map<String, String> handle, Duration gracePeriod, String reason) {
        Tracked instance = tracked.computeIfAbsent(id, key -> new Tracked(key, namespace(handle), handle.getOrDefault("pod", Names.pod(key))));
        InstanceReport end;
        synchronized (instance) {
            end = instance.end;
            if (end == null) {
                instance.terminatingGrace = gracePeriod.toSeconds() == 0 && !gracePeriod.isZero() ? 1 : gracePeriod.toSeconds();
            }
        }
        if (end != null) {
            report(end); // already over: say so again (reports are at least once)
            return;
        }
        try {
            String notice = gracePeriod.isZero() ? null
                    : Json.mapper().writeValueAsString(Map.of("reason", reason, "deadline", clock.instant().plus(gracePeriod).toString()));
            // Kubernetes sends SIGTERM, and SIGKILL once the grace period is over; the pod disappears once all is dead.
            if (!deletion.delete(instance.namespace, instance.pod, instance.terminatingGrace, notice)) {
                finish(instance, new InstanceReport.Exited(id, 137, true, clock.instant()));
            }
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                finish(instance, new InstanceReport.Exited(id, 137, true, clock.instant()));
                return;
            }
            LOG.warn("cannot delete pod {}: {}", instance.pod, e.getMessage()); // the control loop asks again
        }
    }

    @Override
    public Activity activity(InstanceId id, Map<String, String> handle) {
        String pod = handle.get("pod");
        if (pod == null) {
            return Activity.NONE;
        }
        copyNewLines(namespace(handle), pod);
        return new Activity(logs.lastOutputAt(namespace(handle), pod), null);
    }

    @Override
    public LogChunk readLog(InstanceId id, Map<String, String> handle, LogStream stream, long offset, int maxBytes) {
        String pod = handle.get("pod");
        if (pod == null || stream == LogStream.STDERR) {
            return new LogChunk(new byte[0], offset); // one log per container: stderr is in it
        }
        copyNewLines(namespace(handle), pod);
        return logs.read(namespace(handle), pod, offset, maxBytes);
    }

    @Override
    public LogChunk readLogTail(InstanceId id, Map<String, String> handle, LogStream stream, int maxBytes) {
        String pod = handle.get("pod");
        if (pod == null || stream == LogStream.STDERR) {
            return new LogChunk(new byte[0], 0);
        }
        copyNewLines(namespace(handle), pod);
        return logs.tail(namespace(handle), pod, maxBytes);
    }

    @Override
    public void forget(RunId runId) {
        pods.keySet().forEach(namespace -> forget(runId, namespace));
        tracked.keySet().removeIf(id -> id.runId().equals(runId));
        // Exactly this run's config maps (another run's key may start with this one's).
        java.util.regex.Pattern names = java.util.regex.Pattern.compile(java.util.regex.Pattern.quote("ss-" + Names.runKey(runId) + "-") + "\\d+-metadata");
        java.util.function.Predicate<String> ofRun = key -> names.matcher(key.substring(key.indexOf('/') + 1)).matches();
        incompleteMetadata.removeIf(ofRun);
        writtenMetadata.keySet().removeIf(ofRun);
    }

    private void forget(RunId runId, String namespace) {
        String run = Names.runKey(runId);
        for (Pod pod : client.pods().inNamespace(namespace).withLabel(Names.RUN, run).list().getItems()) {
            logs.delete(namespace, pod.getMetadata().getName());
        }
        // One by one rather than by collection: the executor needs no deletecollection permission.
        for (Pod pod : client.pods().inNamespace(namespace).withLabel(Names.RUN, run).list().getItems()) {
            deletion.delete(namespace, pod.getMetadata().getName(), null, null);
        }
        deleteEach(client.services().inNamespace(namespace).withLabel(Names.RUN, run).list().getItems(), client.services());
        deleteEach(client.configMaps().inNamespace(namespace).withLabel(Names.RUN, run).list().getItems(), client.configMaps());
        deleteEach(client.network().networkPolicies().inNamespace(namespace).withLabel(Names.RUN, run).list().getItems(),
                client.network().networkPolicies());
        deleteEach(client.secrets().inNamespace(namespace).withLabel(Names.RUN, run).list().getItems(), client.secrets());
        // Only the run's own claim carries its label: job and workspace claims stay.
        deleteEach(client.persistentVolumeClaims().inNamespace(namespace).withLabel(Names.RUN, run).list().getItems(),
                client.persistentVolumeClaims());
    }

    private <T extends HasMetadata> void deleteEach(List<T> objects,
            io.fabric8.kubernetes.client.dsl.MixedOperation<T, ?, ? extends io.fabric8.kubernetes.client.dsl.Resource<T>> operation) {
        for (T object : objects) {
            operation.inNamespace(object.getMetadata().getNamespace()).withName(object.getMetadata().getName()).delete();
        }
    }

    // --- watching ---

    /** A pod changed (or is gone): what it says becomes a report, once. */
    private void observe(Pod pod, boolean deleted) {
        try {
            if (!deleted && pod.getStatus() != null && pod.getStatus().getPodIP() != null) {
                completeMetadata(pod);
            }
            InstanceId id = idOf(pod);
            Tracked instance = id == null ? null : tracked.get(id);
            if (instance == null || instance.uid != null && !instance.uid.equals(pod.getMetadata().getUid())) {
                return; // not launched or adopted by this control plane (yet): adoption reports it
            }
            if (deleted) {
                gone(instance, pod);
                return;
            }
            PodStatus status = PodStatus.of(pod);
            if (status instanceof PodStatus.Running running) {
                if (instance.probe && running.started() && markReady(instance)) {
                    report(new InstanceReport.Ready(instance.id, clock.instant()));
                }
            } else if (status instanceof PodStatus.Ended ended) {
                ended(instance, pod, ended);
            } else if (status instanceof PodStatus.CannotStart cannot) {
                LOG.info("pod {} cannot start: {}", instance.pod, cannot.reason());
                if (finish(instance, new InstanceReport.Exited(instance.id, cannot.exitCode(), false, cannot.reason(), clock.instant()))) {
                    deletion.delete(instance.namespace, instance.pod, 0L, null); // stop the pull retries
                }
            } else if (status instanceof PodStatus.Rejected rejected) {
                finish(instance, new InstanceReport.Lost(instance.id, "the kubelet rejected or evicted its pod: " + rejected.reason(), clock.instant()));
            }
        } catch (RuntimeException e) {
            LOG.warn("cannot follow pod {}: {}", pod.getMetadata().getName(), e.getMessage(), e);
        }
    }

    private void ended(Tracked instance, Pod pod, PodStatus.Ended ended) {
        boolean probeFailed;
        synchronized (instance) {
            instance.lastEnded = ended;
            // Killed (SIGTERM or SIGKILL) before its probe passed, and not by us: the kubelet gave up on the probe. A
            // container may also end on its own before its first probe; that is a plain exit.
            boolean killed = ended.exitCode() == 137 || ended.exitCode() == 143;
            probeFailed = instance.probe && ended.neverStarted() && killed && !instance.probeFailed && instance.terminatingGrace == null;
            instance.probeFailed |= probeFailed;
        }
        if (probeFailed) {
            Integer threshold = pod.getSpec().getContainers().stream().filter(c -> c.getStartupProbe() != null)
                    .map(c -> c.getStartupProbe().getFailureThreshold()).findFirst().orElse(null);
            report(new InstanceReport.ProbeFailed(instance.id, "its startup probe failed " + (threshold == null ? "" : threshold + " time(s) ")
                    + "in a row: the kubelet stopped the container", clock.instant()));
        }
        copyLastLines(instance); // before the report: whoever reads the log after it sees all of it
        if (instance.terminatingGrace != null) {
            return; // confirmed once the pod is gone
        }
        String reason = ended.reason() != null ? ended.reason() : probeFailed ? "StartupProbeFailed: its startup probe never passed" : null;
        finish(instance, new InstanceReport.Exited(instance.id, ended.exitCode(), false, reason, clock.instant()));
    }

    private void gone(Tracked instance, Pod pod) {
        PodStatus status = PodStatus.of(pod);
        PodStatus.Ended ended = status instanceof PodStatus.Ended e ? e : instance.lastEnded;
        copyLastLines(instance);
        if (instance.terminatingGrace != null) {
            finish(instance, new InstanceReport.Exited(instance.id, ended == null ? 137 : ended.exitCode(), true, clock.instant()));
        } else if (ended != null) {
            finish(instance, new InstanceReport.Exited(instance.id, ended.exitCode(), false, ended.reason(), clock.instant()));
        } else {
            finish(instance, new InstanceReport.Lost(instance.id, "its pod " + instance.pod + " was deleted outside Slipstream", clock.instant()));
        }
    }

    /** The end of an instance is reported even when its last lines cannot be copied. */
    private void copyLastLines(Tracked instance) {
        try {
            logs.sync(instance.namespace, instance.pod, true, true);
        } catch (ExecutorException e) {
            LOG.warn("the last log lines of pod {} were not copied: {}", instance.pod, e.getMessage());
        }
    }

    /** Copies what is new of a pod's log; if the API server cannot be asked, what was copied before is served. */
    private void copyNewLines(String namespace, String pod) {
        try {
            logs.sync(namespace, pod, false, false);
        } catch (ExecutorException e) {
            LOG.debug("log of {} not copied: {}", pod, e.getMessage());
        }
    }

    private static boolean markReady(Tracked instance) {
        synchronized (instance) {
            boolean first = !instance.ready;
            instance.ready = true;
            return first;
        }
    }

    /** Records the instance's end and reports it, the first time only; returns whether it was the first. */
    private boolean finish(Tracked instance, InstanceReport end) {
        synchronized (instance) {
            if (instance.end != null) {
                return false;
            }
            instance.end = end;
        }
        report(end);
        return true;
    }

    /** Instances on nodes NotReady for too long are lost: their pods are force-deleted (their kubelet cannot confirm). */
    private void loseInstancesOnLostNodes() {
        try {
            Map<String, String> lost = nodes.lost();
            if (lost.isEmpty()) {
                return;
            }
            for (Tracked instance : tracked.values()) {
                String why = instance.node == null ? null : lost.get(instance.node);
                if (why == null || instance.end != null) {
                    continue;
                }
                if (finish(instance, new InstanceReport.Lost(instance.id, "NodeLost: node " + instance.node + " is " + why, true, clock.instant()))) {
                    deletion.delete(instance.namespace, instance.pod, 0L, null);
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("cannot check for lost nodes: {}", e.getMessage());
        }
    }

    private static InstanceId idOf(Pod pod) {
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

    private Pod getPod(String namespace, String name) {
        return client.pods().inNamespace(namespace).withName(name).get();
    }

    /** The namespace of a handle's pod (handles from before namespaces were per workspace have the default one). */
    private String namespace(Map<String, String> handle) {
        return handle.getOrDefault("namespace", config.namespace());
    }

    private void requireNode(String node) {
        if (!nodes.knows(node)) {
            throw new ExecutorException("no node named " + node + " among the cluster nodes Slipstream manages"
                    + (config.nodeSelector().isEmpty() ? "" : " (labels " + config.nodeSelector() + ")"));
        }
    }

    private void report(InstanceReport report) {
        try {
            listener.accept(report);
        } catch (RuntimeException e) {
            LOG.warn("the listener failed on {}: {}", report, e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
        pods.values().forEach(SharedIndexInformer::stop);
        nodes.close();
        if (ownsClient) {
            client.close();
        }
    }
}
