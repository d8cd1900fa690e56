package io.slipstream.executor.kubernetes;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** A mock API server with GPU nodes and a test kubelet running their pods: a cluster in a test. */
public final class TestCluster implements AutoCloseable {
    public static final String NAMESPACE = "slipstream-jobs";
    /** The namespace of workspace team-b's instances. */
    public static final String TEAM_B_NAMESPACE = "team-b-jobs";
    public static final List<String> NODES = List.of("gpu-node-1", "gpu-node-2");

    public final TestApiServer api = new TestApiServer();
    public final KubernetesClient admin = api.newClient();
    public final TestKubelet kubelet;
    private final Path root;

    public TestCluster(Path root) {
        this(root, NODES);
    }

    /** A cluster of these nodes, each of 8 GPUs. */
    public TestCluster(Path root, List<String> nodes) {
        this.root = root;
        for (String name : nodes) {
            admin.nodes().resource(node(name, true)).create();
        }
        kubelet = new TestKubelet(api.newClient(), api, List.of(NAMESPACE, TEAM_B_NAMESPACE), Set.copyOf(nodes), root.resolve("kubelet"));
    }

    static Node node(String name, boolean ready) {
        return new NodeBuilder()
                .withNewMetadata().withName(name).withLabels(Map.of("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3", "slipstream.io/pool", "training"))
                .endMetadata()
                .withNewSpec().endSpec()
                .withNewStatus()
                .withAllocatable(Map.of("cpu", new Quantity("32"), "memory", new Quantity("256Gi"), "nvidia.com/gpu", new Quantity("8")))
                .withCapacity(Map.of("cpu", new Quantity("32"), "memory", new Quantity("256Gi"), "nvidia.com/gpu", new Quantity("8")))
                .addNewCondition().withType("Ready").withStatus(ready ? "True" : "False").withLastTransitionTime(Instant.now().toString())
                .endCondition()
                .endStatus()
                .build();
    }

    public void setReady(String name, boolean ready) {
        admin.nodes().withName(name).editStatus(node -> {
            node.setStatus(node(name, ready).getStatus());
            return node;
        });
    }

    /** An executor whose requests are recorded, to be checked against its RBAC rules. */
    KubernetesExecutor executor(KubernetesConfig config, Clock clock) {
        var clientConfig = new io.fabric8.kubernetes.client.ConfigBuilder(io.fabric8.kubernetes.client.Config.empty())
                .withMasterUrl(admin.getConfiguration().getMasterUrl()).withNamespace(NAMESPACE).withTrustCerts(true)
                .withUserAgent(TestApiServer.EXECUTOR_AGENT).build();
        var client = new io.fabric8.kubernetes.client.KubernetesClientBuilder().withConfig(clientConfig).build();
        return new KubernetesExecutor(client, true, config, root.resolve("control-plane"), clock);
    }

    static KubernetesConfig config() {
        return new KubernetesConfig(null, null, NAMESPACE, Map.of("team-b", TEAM_B_NAMESPACE), null, null, null, java.time.Duration.ofSeconds(2),
                "shared-rwx", "10Gi", null,
                null, null, "http://slipstream.slipstream.svc:8080");
    }

    /** A kubeconfig file that points at this cluster, as an operator's would. */
    public Path writeKubeconfig(Path file) throws java.io.IOException {
        String server = admin.getConfiguration().getMasterUrl();
        java.nio.file.Files.writeString(file, """
                apiVersion: v1
                kind: Config
                clusters:
                - name: test
                  cluster: {server: "%s"}
                users:
                - name: slipstream
                  user: {token: not-checked-by-the-mock}
                contexts:
                - name: test
                  context: {cluster: test, user: slipstream, namespace: %s}
                current-context: test
                """.formatted(server, NAMESPACE));
        return file;
    }

    @Override
    public void close() {
        kubelet.close();
        admin.close();
        api.close();
    }
}
