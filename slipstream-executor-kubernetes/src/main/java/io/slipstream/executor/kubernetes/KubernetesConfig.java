package io.slipstream.executor.kubernetes;

import static java.util.Objects.requireNonNull;

import io.slipstream.executor.ExecutorSettings;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * How the Kubernetes executor reaches and uses a cluster: the {@code kubernetes:} block of the config file
 * ({@link KubernetesExecutorFactory}, docs/kubernetes.md).
 *
 * @param kubeconfig      a kubeconfig file, or {@code null}: in-cluster credentials (service account), else the usual
 *                        {@code KUBECONFIG} / {@code ~/.kube/config}
 * @param context         the kubeconfig context, or {@code null} for its current one
 * @param namespace       where instances (pods) and the objects of each run go, unless {@code namespaces} names another
 * @param namespaces      a namespace per workspace, for clusters that give every team its own
 * @param clusterDomain   the cluster's DNS domain, for the instances' fully qualified names
 * @param nodeSelector    labels a cluster node must carry to be managed by Slipstream (empty: every node)
 * @param gpuModelLabel   the node label that names its GPU model (the NVIDIA GPU feature discovery label by default)
 * @param notReadyTimeout how long a node may be NotReady before its instances are reported lost
 * @param storageClass    the storage class of the claims made for shared storage, or {@code null}: the cluster default
 * @param storageSize     the size requested for each claim
 * @param existingClaim   a claim to put all shared storage on (in sub-paths) instead of creating claims, or {@code null}
 * @param utilityImage    a small image with a POSIX shell, for the init container that waits for the run's metadata
 * @param imagePullSecrets secrets pods pull their images with
 * @param serverUrl       where pods reach the Slipstream API ({@code SLIPSTREAM_SERVER} in instances), or {@code null}:
 *                        instances get their run's token but no address
 */
public record KubernetesConfig(
        String kubeconfig,
        String context,
        String namespace,
        Map<String, String> namespaces,
        String clusterDomain,
        Map<String, String> nodeSelector,
        String gpuModelLabel,
        Duration notReadyTimeout,
        String storageClass,
        String storageSize,
        String existingClaim,
        String utilityImage,
        List<String> imagePullSecrets,
        String serverUrl) implements ExecutorSettings {

    public static final String NAME = "kubernetes";
    public static final String DEFAULT_NAMESPACE = "slipstream-jobs";
    public static final String DEFAULT_GPU_MODEL_LABEL = "nvidia.com/gpu.product";
    public static final Duration DEFAULT_NOT_READY_TIMEOUT = Duration.ofMinutes(2);
    public static final String DEFAULT_STORAGE_SIZE = "100Gi";
    public static final String DEFAULT_UTILITY_IMAGE = "busybox:1.36";

    public KubernetesConfig {
        requireNonNull(namespace, "namespace is null");
        namespaces = namespaces == null ? Map.of() : Map.copyOf(namespaces);
        clusterDomain = clusterDomain == null ? "cluster.local" : clusterDomain;
        nodeSelector = nodeSelector == null ? Map.of() : Map.copyOf(nodeSelector);
        gpuModelLabel = gpuModelLabel == null ? DEFAULT_GPU_MODEL_LABEL : gpuModelLabel;
        notReadyTimeout = notReadyTimeout == null ? DEFAULT_NOT_READY_TIMEOUT : notReadyTimeout;
        storageSize = storageSize == null ? DEFAULT_STORAGE_SIZE : storageSize;
        utilityImage = utilityImage == null ? DEFAULT_UTILITY_IMAGE : utilityImage;
        imagePullSecrets = imagePullSecrets == null ? List.of() : List.copyOf(imagePullSecrets);
    }

    /** The defaults: namespace {@value #DEFAULT_NAMESPACE}, every node, credentials found the usual way. */
    public static KubernetesConfig defaults() {
        return new KubernetesConfig(null, null, DEFAULT_NAMESPACE, null, null, null, null, null, null, null, null, null, null, null);
    }

    @Override
    public String executor() {
        return NAME;
    }

    /** The namespace of a workspace's instances ({@code null}: the default one). */
    public String namespaceOf(String workspace) {
        return workspace == null ? namespace : namespaces.getOrDefault(workspace, namespace);
    }

    /** Every namespace instances may be in, the default one first. */
    public List<String> allNamespaces() {
        java.util.LinkedHashSet<String> all = new java.util.LinkedHashSet<>();
        all.add(namespace);
        new java.util.TreeSet<>(namespaces.values()).forEach(all::add);
        return List.copyOf(all);
    }
}
