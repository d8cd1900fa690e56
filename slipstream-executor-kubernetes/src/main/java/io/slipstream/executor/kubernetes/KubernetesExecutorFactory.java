package io.slipstream.executor.kubernetes;

import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.FieldReader;
import io.slipstream.api.spec.Names;
import io.slipstream.executor.ConfigValues;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorContext;
import io.slipstream.executor.ExecutorFactory;
import io.slipstream.executor.ExecutorSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;

/**
 * {@code executor: kubernetes}: every instance a pod of a cluster, configured by the {@code kubernetes:} block of the
 * config file (docs/kubernetes.md). Its nodes are the cluster's, so the file has no {@code nodes:}.
 */
public final class KubernetesExecutorFactory implements ExecutorFactory {
    private static final Pattern QUANTITY = Pattern.compile("[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?");
    private static final Pattern LABEL_KEY =
            Pattern.compile("([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?");
    private static final Pattern LABEL_VALUE = Pattern.compile("([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?");

    @Override
    public String name() {
        return KubernetesConfig.NAME;
    }

    @Override
    public Set<String> configFields() {
        return Set.of("kubernetes");
    }

    @Override
    public KubernetesConfig read(FieldReader config) {
        FieldReader cluster = config.object("kubernetes", false);
        return cluster == null ? KubernetesConfig.defaults() : readCluster(cluster, config.problems());
    }

    @Override
    public Executor create(ExecutorSettings settings, ExecutorContext context) {
        return KubernetesExecutor.connect((KubernetesConfig) settings, context.dataDir(), context.clock());
    }

    /** The {@code kubernetes:} block: how the Kubernetes executor reaches and uses the cluster (docs/kubernetes.md). */
    private static KubernetesConfig readCluster(FieldReader cluster, Problems problems) {
        KubernetesConfig defaults = KubernetesConfig.defaults();
        String kubeconfig = cluster.string("kubeconfig", false, 4096);
        String context = cluster.string("context", false, 253);
        String namespace = cluster.string("namespace", false, 63);
        if (namespace != null && Names.dnsLabelProblem(namespace) != null) {
            problems.add(cluster.pathOf("namespace"), Names.dnsLabelProblem(namespace));
        }
        Map<String, String> namespaces = new LinkedHashMap<>();
        var perWorkspace = cluster.entries("namespaces", false, 1000);
        if (perWorkspace != null) {
            for (var entry : perWorkspace) {
                String field = cluster.pathOf("namespaces") + "." + entry.getKey();
                String value = entry.getValue().isString() ? entry.getValue().asString() : "";
                if (Names.dnsLabelProblem(entry.getKey()) != null) {
                    problems.add(field, "is not a workspace name: " + Names.dnsLabelProblem(entry.getKey()));
                } else if (Names.dnsLabelProblem(value) != null) {
                    problems.add(field, "must be a namespace name: " + Names.dnsLabelProblem(value));
                } else {
                    namespaces.put(entry.getKey(), value);
                }
            }
        }
        String clusterDomain = cluster.string("clusterDomain", false, 253);
        Map<String, String> nodeSelector = new LinkedHashMap<>();
        var selector = cluster.entries("nodeSelector", false, 32);
        if (selector != null) {
            for (var entry : selector) {
                String key = cluster.pathOf("nodeSelector") + "." + entry.getKey();
                if (!LABEL_KEY.matcher(entry.getKey()).matches()) {
                    problems.add(key, "is not a Kubernetes label name");
                } else if (!entry.getValue().isString() || !LABEL_VALUE.matcher(entry.getValue().asString()).matches()) {
                    problems.add(key, "must be a label value: at most 63 letters, digits, '-', '_' or '.'");
                } else {
                    nodeSelector.put(entry.getKey(), entry.getValue().asString());
                }
            }
        }
        String gpuModelLabel = cluster.string("gpuModelLabel", false, 316);
        if (gpuModelLabel != null && !LABEL_KEY.matcher(gpuModelLabel).matches()) {
            problems.add(cluster.pathOf("gpuModelLabel"), "is not a Kubernetes label name");
        }
        Duration notReadyTimeout = ConfigValues.duration(cluster, "notReadyTimeout");
        if (notReadyTimeout != null && notReadyTimeout.compareTo(Duration.ofSeconds(10)) < 0) {
            problems.add(cluster.pathOf("notReadyTimeout"), "must be at least 10s: a node's status comes every few seconds");
        }
        String storageClass = null;
        String storageSize = null;
        String existingClaim = null;
        FieldReader storage = cluster.object("storage", false);
        if (storage != null) {
            storageClass = storage.string("storageClass", false, 253);
            storageSize = storage.string("size", false, 32);
            if (storageSize != null && !QUANTITY.matcher(storageSize).matches()) {
                problems.add(storage.pathOf("size"), "must be a Kubernetes quantity such as 100Gi");
            }
            existingClaim = storage.string("existingClaim", false, 253);
            if (existingClaim != null && storageClass != null) {
                problems.add(storage.pathOf("existingClaim"), "give either existingClaim or storageClass, not both");
            }
            storage.finish();
        }
        String utilityImage = cluster.string("utilityImage", false, 512);
        String serverUrl = cluster.string("serverUrl", false, 2048);
        if (serverUrl != null && !serverUrl.matches("https?://[^\\s/]+(/\\S*)?")) {
            problems.add(cluster.pathOf("serverUrl"), "must be an http:// or https:// URL");
        }
        List<String> pullSecrets = new ArrayList<>();
        List<JsonNode> secrets = cluster.array("imagePullSecrets", false, 16);
        if (secrets != null) {
            for (int i = 0; i < secrets.size(); i++) {
                if (!secrets.get(i).isString() || Names.dnsLabelProblem(secrets.get(i).asString()) != null) {
                    problems.add(cluster.pathOf("imagePullSecrets") + "[" + i + "]", "must be the name of a Secret");
                } else {
                    pullSecrets.add(secrets.get(i).asString());
                }
            }
        }
        cluster.finish();
        return new KubernetesConfig(kubeconfig, context, namespace == null ? defaults.namespace() : namespace, namespaces, clusterDomain, nodeSelector,
                gpuModelLabel, notReadyTimeout, storageClass, storageSize, existingClaim, utilityImage, pullSecrets, serverUrl);
    }
}
