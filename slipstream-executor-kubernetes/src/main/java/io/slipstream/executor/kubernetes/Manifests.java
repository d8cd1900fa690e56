package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.LocalObjectReference;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.ProbeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.slipstream.api.run.ClusterMetadata;
import io.slipstream.api.run.Hostfile;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.StorageSpec;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.LaunchSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The Kubernetes objects of a run, built from what the control plane decided; pure, so the exact manifests are
 * tested against golden files. Names and labels come from {@link Names}.
 */
final class Manifests {
    static final String MAIN_CONTAINER = "main";
    static final String RUN_DIR = "/etc/slipstream/run";
    static final String METADATA_KEY = "metadata.json";
    static final String HOSTFILE_KEY = "hostfile";
    static final String MPICH_HOSTFILE_KEY = "hostfile.mpich";
    /** The key whose presence says that every started instance's address is in the metadata. */
    static final String COMPLETE_KEY = "complete";
    static final String NOTICE_DIR = "/etc/slipstream/notice";
    static final String NOTICE_FILE = "notice.json";
    static final String CHECKPOINT_DIR = "/var/lib/slipstream/checkpoints";
    static final String SHARED_DIR = "/var/lib/slipstream/shared";
    static final String WORKSPACE_DIR = "/workspace";
    /** {@code SLIPSTREAM_SECRETS_DIR}: every mounted Secret of the instance under it, as {@code <name>/<key>}. */
    static final String SECRETS_DIR = "/var/run/slipstream/secrets";
    /** Where the identity tokens are: {@code token-<n>.jwt}, updated by the kubelet when the attempt's Secret changes. */
    static final String IDENTITY_DIR = "/var/run/slipstream/identity";
    /** Secret files are the container's to read, whatever user its image runs as; nothing else is in the pod. */
    static final int SECRET_FILE_MODE = 0444;
    static final String GPU_RESOURCE = "nvidia.com/gpu";

    /** The server's address as the control plane sees it; pods get the configured one instead. */
    static final String SERVER_ENV = "SLIPSTREAM_SERVER";
    /** What the pod says itself; the same names in the spec's env are dropped (the spec reader refuses them anyway). */
    private static final java.util.Set<String> OWN_ENV = java.util.Set.of("SLIPSTREAM_IP", "SLIPSTREAM_PREEMPTION_NOTICE_FILE",
            "SLIPSTREAM_METADATA_FILE", "SLIPSTREAM_CHECKPOINT_DIR", "SLIPSTREAM_SHARED_DIR", LaunchSpec.RUN_TOKEN_ENV, SERVER_ENV,
            LaunchSpec.SECRETS_DIR_ENV, io.slipstream.executor.IdentityToken.TOKEN_FILE_ENV, io.slipstream.executor.IdentityToken.TOKENS_ENV);

    private final KubernetesConfig config;

    Manifests(KubernetesConfig config) {
        this.config = config;
    }

    /** Where one piece of storage comes from: a claim and the path inside it; {@code storage}: the job's name for it. */
    record Mount(String storage, String claim, String subPath, String mountPath) {
    }

    /** The claims a run's instances mount: the run's own, and those of its job- and workspace-scoped storage. */
    List<Mount> mounts(RunId runId, ClusterMetadata metadata) {
        List<Mount> mounts = new ArrayList<>();
        String existing = config.existingClaim();
        String workspace = metadata.workspace();
        String runRoot = existing == null ? "" : "workspaces/" + segment(workspace) + "/runs/" + Names.runKey(runId) + "/";
        String runClaim = existing == null ? Names.runClaim(runId) : existing;
        mounts.add(new Mount(null, runClaim, runRoot + "checkpoints", CHECKPOINT_DIR));
        mounts.add(new Mount(null, runClaim, runRoot + "shared", SHARED_DIR));
        for (ClusterMetadata.Storage storage : metadata.storage()) {
            String path = relative(storage.path() == null ? storage.name() : storage.path(), storage.name());
            String name = storage.name();
            Mount mount = switch (storage.scope()) {
                case "run" -> new Mount(name, runClaim, runRoot + "storage/" + path, storage.mountPath());
                case "job" -> existing == null
                        ? new Mount(name, Names.jobClaim(workspace, metadata.job()), path, storage.mountPath())
                        : new Mount(name, existing, "workspaces/" + segment(workspace) + "/jobs/" + segment(metadata.job()) + "/" + path,
                                storage.mountPath());
                case "workspace" -> existing == null
                        ? new Mount(name, Names.workspaceClaim(workspace), path, storage.mountPath())
                        : new Mount(name, existing, "workspaces/" + segment(workspace) + "/shared/" + path, storage.mountPath());
                default -> throw new ExecutorException("storage " + storage.name() + ": unknown scope " + storage.scope());
            };
            mounts.add(mount);
        }
        return mounts;
    }

    /** The claims of {@link #mounts} that the executor makes (none when everything lives on an existing claim). */
    List<PersistentVolumeClaim> claims(RunId runId, ClusterMetadata metadata, String namespace) {
        if (config.existingClaim() != null) {
            return List.of();
        }
        Map<String, PersistentVolumeClaim> claims = new LinkedHashMap<>();
        for (Mount mount : mounts(runId, metadata)) {
            boolean ofRun = mount.claim().equals(Names.runClaim(runId));
            Map<String, String> labels = new LinkedHashMap<>();
            labels.put(Names.MANAGED_BY, Names.MANAGER);
            if (ofRun) {
                labels.put(Names.RUN, Names.runKey(runId)); // deleted with the run; job and workspace claims outlive it
            } else {
                labels.put(Names.WORKSPACE, Names.labelValue(metadata.workspace()));
            }
            claims.computeIfAbsent(mount.claim(), name -> new PersistentVolumeClaimBuilder()
                    .withNewMetadata().withName(name).withNamespace(namespace).withLabels(labels).endMetadata()
                    .withNewSpec()
                    .withAccessModes("ReadWriteMany")
                    .withStorageClassName(config.storageClass())
                    .withNewResources().addToRequests("storage", new Quantity(config.storageSize())).endResources()
                    .endSpec()
                    .build());
        }
        return List.copyOf(claims.values());
    }

    /**
     * The pod of one launch of an instance, pinned to the node the scheduler chose, of the leader that leads at
     * {@code epoch}. A restart in place is a pod of its own name with the same hostname and subdomain (DNS name).
     */
    Pod pod(LaunchSpec spec, String namespace, long epoch) {
        InstanceId id = spec.id();
        if (spec.image() == null || spec.image().isBlank()) {
            throw new ExecutorException("instance " + spec.name() + " has no image: on Kubernetes every node group names the container "
                    + "image it runs (image: in the node group)");
        }
        ClusterMetadata metadata = spec.metadata();
        Map<String, String> labels = Names.runLabels(id.runId());
        labels.put(Names.ATTEMPT, Integer.toString(id.attempt()));
        labels.put(Names.RANK, Integer.toString(id.rank()));
        labels.put(Names.EPOCH, Long.toString(epoch)); // checked by the fence policy on create
        if (spec.restart() > 0) {
            labels.put(Names.RESTART, Integer.toString(spec.restart()));
        }
        if (metadata != null) {
            // By name: the metadata's ranks are the world's (dense in an elastic run), the id's rank is the slot.
            String group = metadata.instances().stream().filter(i -> i.name().equals(spec.name())).map(ClusterMetadata.Instance::nodeGroup)
                    .findFirst().orElse(null);
            if (group != null) {
                labels.put(Names.NODE_GROUP, Names.labelValue(group));
            }
            labels.put(Names.WORKSPACE, Names.labelValue(metadata.workspace()));
            labels.put(Names.JOB, Names.labelValue(metadata.job()));
        }
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(Names.RUN_ID_ANNOTATION, id.runId().value());
        annotations.put(Names.INSTANCE_ANNOTATION, spec.name());

        List<VolumeMount> volumeMounts = new ArrayList<>();
        List<Volume> volumes = new ArrayList<>();
        List<EnvVar> env = new ArrayList<>();
        spec.env().entrySet().stream().filter(e -> !OWN_ENV.contains(e.getKey())).sorted(Map.Entry.comparingByKey())
                .forEach(e -> env.add(new EnvVarBuilder().withName(e.getKey()).withValue(e.getValue()).build()));
        env.add(new EnvVarBuilder().withName("SLIPSTREAM_IP").withNewValueFrom().withNewFieldRef().withFieldPath("status.podIP")
                .endFieldRef().endValueFrom().build());
        if (spec.env().containsKey(LaunchSpec.RUN_TOKEN_ENV)) {
            env.add(new EnvVarBuilder().withName(LaunchSpec.RUN_TOKEN_ENV).withNewValueFrom().withNewSecretKeyRef()
                    .withName(Names.token(id.runId(), id.attempt())).withKey(LaunchSpec.RUN_TOKEN_ENV).endSecretKeyRef().endValueFrom().build());
        }
        // Secret values live in the attempt's Secret only: the pod names the keys, never the values.
        String attemptSecret = Names.token(id.runId(), id.attempt());
        spec.secretEnv().entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> env.add(new EnvVarBuilder().withName(e.getKey())
                .withNewValueFrom().withNewSecretKeyRef().withName(attemptSecret).withKey(secretKey(e.getValue().secret(), e.getValue().key()))
                .endSecretKeyRef().endValueFrom().build()));
        if (!spec.secretFiles().isEmpty()) {
            env.add(env(LaunchSpec.SECRETS_DIR_ENV, SECRETS_DIR));
            volumes.add(secretVolume("secrets", attemptSecret, spec.secretFiles(), true));
            volumeMounts.add(mount("secrets", SECRETS_DIR, null, true));
            for (int i = 0; i < spec.secretFiles().size(); i++) {
                LaunchSpec.SecretFiles files = spec.secretFiles().get(i);
                if (files.mountPath() != null) {
                    volumes.add(secretVolume("secret-" + i, attemptSecret, List.of(files), false));
                    volumeMounts.add(mount("secret-" + i, files.mountPath(), null, true));
                }
            }
        }
        if (!spec.identity().isEmpty()) {
            new java.util.TreeMap<>(io.slipstream.executor.IdentityToken.environment(IDENTITY_DIR, spec.identity()))
                    .forEach((name, value) -> env.add(env(name, value)));
            // A whole volume, never a subPath: the kubelet swaps a mounted Secret's files in place when it changes.
            volumes.add(new VolumeBuilder().withName("identity").withNewSecret().withSecretName(attemptSecret)
                    .withItems(spec.identity().stream().map(t -> new io.fabric8.kubernetes.api.model.KeyToPathBuilder()
                            .withKey(identityKey(t.file())).withPath(t.file()).build()).toList())
                    .withDefaultMode(SECRET_FILE_MODE).endSecret().build());
            volumeMounts.add(mount("identity", IDENTITY_DIR, null, true));
        }
        if (config.serverUrl() != null) {
            env.add(env(SERVER_ENV, config.serverUrl()));
        }
        env.add(env("SLIPSTREAM_PREEMPTION_NOTICE_FILE", NOTICE_DIR + "/" + NOTICE_FILE));
        volumes.add(new VolumeBuilder().withName("notice").withNewDownwardAPI().addNewItem().withPath(NOTICE_FILE).withNewFieldRef()
                .withFieldPath("metadata.annotations['" + Names.NOTICE_ANNOTATION + "']").endFieldRef().endItem().endDownwardAPI().build());
        volumeMounts.add(mount("notice", NOTICE_DIR, null, true));

        List<Container> initContainers = new ArrayList<>();
        if (metadata != null) {
            env.add(env("SLIPSTREAM_METADATA_FILE", RUN_DIR + "/" + METADATA_KEY));
            env.add(env("SLIPSTREAM_HOSTFILE", RUN_DIR + "/" + HOSTFILE_KEY));
            env.add(env("SLIPSTREAM_MPICH_HOSTFILE", RUN_DIR + "/" + MPICH_HOSTFILE_KEY));
            env.add(env("SLIPSTREAM_CHECKPOINT_DIR", CHECKPOINT_DIR));
            env.add(env("SLIPSTREAM_SHARED_DIR", SHARED_DIR));
            volumes.add(new VolumeBuilder().withName("run").withNewConfigMap().withName(Names.metadata(id.runId(), id.attempt()))
                    .endConfigMap().build());
            volumeMounts.add(mount("run", RUN_DIR, null, true));
            Map<String, String> claimVolumes = new LinkedHashMap<>();
            for (Mount storage : mounts(id.runId(), metadata)) {
                String volume = claimVolumes.computeIfAbsent(storage.claim(), claim -> "claim-" + claimVolumes.size());
                volumeMounts.add(mount(volume, storage.mountPath(), storage.subPath(), false));
                if (storage.storage() != null) {
                    env.add(env(StorageSpec.envNameOf(storage.storage()), storage.mountPath()));
                }
            }
            claimVolumes.forEach((claim, volume) -> volumes.add(new VolumeBuilder().withName(volume).withNewPersistentVolumeClaim()
                    .withClaimName(claim).endPersistentVolumeClaim().build()));
            // The main container starts once the metadata lists the address of every instance started with it.
            initContainers.add(new ContainerBuilder()
                    .withName("wait-for-metadata")
                    .withImage(config.utilityImage())
                    .withCommand("sh", "-c", "until [ -e \"$RUN_DIR/" + COMPLETE_KEY + "\" ]; do sleep 1; done")
                    .withEnv(env("RUN_DIR", RUN_DIR))
                    .withVolumeMounts(mount("run", RUN_DIR, null, true))
                    .withNewResources().addToRequests("cpu", new Quantity("10m")).addToRequests("memory", new Quantity("16Mi"))
                    .addToLimits("cpu", new Quantity("100m")).addToLimits("memory", new Quantity("32Mi")).endResources()
                    .build());
        }
        String workingDir = null;
        if (spec.workingDir() != null) {
            workingDir = WORKSPACE_DIR + "/" + relative(spec.workingDir(), "workingDir");
            volumes.add(new VolumeBuilder().withName("workspace").withNewEmptyDir().endEmptyDir().build());
            volumeMounts.add(mount("workspace", WORKSPACE_DIR, null, false));
        }
        ContainerBuilder main = new ContainerBuilder()
                .withName(MAIN_CONTAINER)
                .withImage(spec.image())
                .withCommand(spec.command())
                .withWorkingDir(workingDir)
                .withEnv(env)
                .withResources(resources(spec))
                .withVolumeMounts(volumeMounts)
                .withTerminationMessagePolicy("FallbackToLogsOnError");
        if (spec.probe() != null) {
            main.withStartupProbe(probe(spec.probe()));
        }
        return new PodBuilder()
                .withNewMetadata().withName(Names.pod(id, spec.restart())).withNamespace(namespace).withLabels(labels).withAnnotations(annotations)
                .endMetadata()
                .withNewSpec()
                .withNodeName(spec.node())
                .withHostname(metadata == null ? null : Names.hostname(spec.name(), id.rank()))
                .withSubdomain(metadata == null ? null : Names.service(id.runId()))
                .withRestartPolicy("Never") // restarts are the control plane's: the whole gang, by the run's policy
                .withEnableServiceLinks(false)
                .withAutomountServiceAccountToken(false)
                .withImagePullSecrets(config.imagePullSecrets().stream().map(LocalObjectReference::new).toList())
                .withTolerations(gpuToleration())
                .withInitContainers(initContainers)
                .withContainers(main.build())
                .withVolumes(volumes)
                .endSpec()
                .build();
    }

    /** The headless service that gives every instance of a run a stable DNS name, addressable before it is ready. */
    Service service(RunId runId, String namespace) {
        return new ServiceBuilder()
                .withNewMetadata().withName(Names.service(runId)).withNamespace(namespace).withLabels(Names.runLabels(runId))
                .withAnnotations(Map.of(Names.RUN_ID_ANNOTATION, runId.value())).endMetadata()
                .withNewSpec()
                .withClusterIP("None")
                .withPublishNotReadyAddresses(true) // rendezvous happens before any instance is ready
                .withSelector(Map.of(Names.RUN, Names.runKey(runId)))
                .endSpec()
                .build();
    }

    /** Lets the run's pods be reached by each other only: nothing of another run gets in. */
    NetworkPolicy networkPolicy(RunId runId, String namespace) {
        Map<String, String> ofRun = Map.of(Names.RUN, Names.runKey(runId));
        return new NetworkPolicyBuilder()
                .withNewMetadata().withName(Names.networkPolicy(runId)).withNamespace(namespace).withLabels(Names.runLabels(runId))
                .withAnnotations(Map.of(Names.RUN_ID_ANNOTATION, runId.value())).endMetadata()
                .withNewSpec()
                .withNewPodSelector().withMatchLabels(ofRun).endPodSelector()
                .withPolicyTypes("Ingress")
                .addNewIngress().addNewFrom().withNewPodSelector().withMatchLabels(ofRun).endPodSelector().endFrom().endIngress()
                .endSpec()
                .build();
    }

    /**
     * The Secret of one attempt of a run: its token (for its pods' {@code SLIPSTREAM_RUN_TOKEN}, {@code null}: none) and
     * the values of the Secrets {@code spec} refers to, each under {@link #secretKey}.
     */
    Secret attemptSecret(RunId runId, int attempt, String namespace, String token, LaunchSpec spec) {
        Map<String, String> labels = Names.runLabels(runId);
        labels.put(Names.ATTEMPT, Integer.toString(attempt));
        Map<String, String> data = new java.util.TreeMap<>(secretData(spec));
        if (token != null) {
            data.put(LaunchSpec.RUN_TOKEN_ENV, base64(token));
        }
        return new SecretBuilder()
                .withNewMetadata().withName(Names.token(runId, attempt)).withNamespace(namespace).withLabels(labels)
                .withAnnotations(Map.of(Names.RUN_ID_ANNOTATION, runId.value())).endMetadata()
                .withType("Opaque")
                .withData(data)
                .build();
    }

    /** The values of the Secrets {@code spec} refers to, base64, under {@link #secretKey}, and its identity tokens. */
    static Map<String, String> secretData(LaunchSpec spec) {
        Map<String, String> data = new java.util.TreeMap<>();
        spec.secretEnv().values().forEach(secret -> data.put(secretKey(secret.secret(), secret.key()), base64(secret.value().reveal())));
        for (LaunchSpec.SecretFiles files : spec.secretFiles()) {
            files.files().forEach((key, value) -> data.put(secretKey(files.name(), key), base64(value.reveal())));
        }
        data.putAll(identityData(spec.identity()));
        return data;
    }

    /** Identity tokens, base64, under {@link #identityKey}. */
    static Map<String, String> identityData(List<io.slipstream.executor.IdentityToken> tokens) {
        Map<String, String> data = new java.util.TreeMap<>();
        tokens.forEach(t -> data.put(identityKey(t.file()), base64(t.token().reveal())));
        return data;
    }

    /** Where an identity token is in the attempt's Secret: {@code identity.<file>} (apart from every {@code secret.} key). */
    static String identityKey(String file) {
        return "identity." + file;
    }

    /**
     * Where a Secret's key is in the attempt's Secret: {@code secret.<name>.<key>} (names have no dots, so two references
     * never share one; the run token's {@code SLIPSTREAM_RUN_TOKEN} is apart).
     */
    static String secretKey(String secret, String key) {
        return "secret." + secret + "." + key;
    }

    private static Volume secretVolume(String name, String attemptSecret, List<LaunchSpec.SecretFiles> secrets, boolean underTheirNames) {
        List<io.fabric8.kubernetes.api.model.KeyToPath> items = new ArrayList<>();
        for (LaunchSpec.SecretFiles files : secrets) {
            files.files().keySet().stream().sorted().forEach(key -> items.add(new io.fabric8.kubernetes.api.model.KeyToPathBuilder()
                    .withKey(secretKey(files.name(), key)).withPath(underTheirNames ? files.name() + "/" + key : key).build()));
        }
        return new VolumeBuilder().withName(name).withNewSecret().withSecretName(attemptSecret).withItems(items)
                .withDefaultMode(SECRET_FILE_MODE).endSecret().build();
    }

    private static String base64(String text) {
        return java.util.Base64.getEncoder().encodeToString(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /**
     * The metadata file of one attempt ({@code json} is {@code metadata} written), with its hostfiles; {@code complete}:
     * every started instance's address is in it.
     */
    ConfigMap metadata(RunId runId, int attempt, String namespace, ClusterMetadata metadata, String json, boolean complete) {
        Map<String, String> labels = Names.runLabels(runId);
        labels.put(Names.ATTEMPT, Integer.toString(attempt));
        Map<String, String> data = new LinkedHashMap<>();
        data.put(METADATA_KEY, json);
        data.put(HOSTFILE_KEY, Hostfile.of(metadata, Hostfile.Syntax.OPEN_MPI));
        data.put(MPICH_HOSTFILE_KEY, Hostfile.of(metadata, Hostfile.Syntax.MPICH));
        if (complete) {
            data.put(COMPLETE_KEY, "true");
        }
        return new ConfigMapBuilder()
                .withNewMetadata().withName(Names.metadata(runId, attempt)).withNamespace(namespace).withLabels(labels)
                .withAnnotations(Map.of(Names.RUN_ID_ANNOTATION, runId.value())).endMetadata()
                .withData(data)
                .build();
    }

    private static ResourceRequirements resources(LaunchSpec spec) {
        Resources resources = spec.resources();
        ResourceRequirementsBuilder builder = new ResourceRequirementsBuilder();
        if (resources != null) {
            // Requests are what the scheduler counted; limits equal them (the instance gets that and no more), except memory
            // up to the group's limits.memory: a burst the kubelet allows where the node has it, never guaranteed.
            if (resources.milliCpu() > 0) {
                long milli = resources.milliCpu();
                Quantity cpu = new Quantity(milli % 1000 == 0 ? Long.toString(milli / 1000) : milli + "m");
                builder.addToRequests("cpu", cpu).addToLimits("cpu", cpu);
            }
            if (resources.memoryBytes() > 0) {
                builder.addToRequests("memory", new Quantity(bytes(resources.memoryBytes())))
                        .addToLimits("memory", new Quantity(bytes(spec.memoryLimit())));
            }
        }
        int gpus = resources != null ? resources.gpu() : spec.gpus().size();
        if (gpus > 0) {
            builder.addToLimits(GPU_RESOURCE, new Quantity(Integer.toString(gpus))); // extended resources: limits only
        }
        return builder.build();
    }

    private static String bytes(long bytes) {
        String[] units = {"Ki", "Mi", "Gi", "Ti"};
        String text = Long.toString(bytes);
        long value = bytes;
        for (String unit : units) {
            if (value % 1024 != 0) {
                break;
            }
            value /= 1024;
            text = value + unit;
        }
        return text;
    }

    private static Probe probe(io.slipstream.api.spec.StartupProbe probe) {
        return new ProbeBuilder()
                .withNewExec().withCommand(probe.command()).endExec()
                .withPeriodSeconds(probe.periodSeconds())
                .withFailureThreshold(probe.failureThreshold())
                .withInitialDelaySeconds(probe.initialDelaySeconds())
                .build();
    }

    private static Toleration gpuToleration() {
        // GPU nodes are commonly tainted so that only GPU workloads land there; ours are such workloads.
        return new TolerationBuilder().withKey(GPU_RESOURCE).withOperator("Exists").withEffect("NoSchedule").build();
    }

    private static EnvVar env(String name, String value) {
        return new EnvVarBuilder().withName(name).withValue(value).build();
    }

    private static VolumeMount mount(String volume, String path, String subPath, boolean readOnly) {
        return new VolumeMountBuilder().withName(volume).withMountPath(path).withSubPath(subPath).withReadOnly(readOnly ? true : null).build();
    }

    /** A relative path that stays inside where it is put: no absolute paths, no {@code ..}, no empty segments. */
    static String relative(String path, String what) {
        if (path.isEmpty() || path.startsWith("/")) {
            throw new ExecutorException(what + ": '" + path + "' must be a relative path");
        }
        for (String segment : path.split("/", -1)) {
            if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
                throw new ExecutorException(what + ": path segment '" + segment + "' of '" + path + "' is not allowed");
            }
        }
        return path;
    }

    private static String segment(String name) {
        return relative(name, "name").replace('/', '_');
    }
}
