package io.slipstream.server.control;

import io.fabric8.kubernetes.api.model.Pod;
import io.slipstream.executor.kubernetes.KubernetesConfig;
import io.slipstream.executor.kubernetes.KubernetesExecutor;
import io.slipstream.executor.kubernetes.TestCluster;
import io.slipstream.server.support.TestServer;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * A {@link TestCluster} (fabric8's mock API server with the test kubelet) and the Kubernetes executor's settings for
 * it: the executor connects through a kubeconfig file, as it would to a real cluster, and every workspace's pods go to
 * {@link TestCluster#NAMESPACE}.
 */
final class KubernetesCluster implements AutoCloseable {
    final TestCluster cluster;
    final KubernetesConfig config;

    KubernetesCluster(Path root, List<String> nodes) throws java.io.IOException {
        cluster = new TestCluster(root.resolve("cluster"), nodes);
        Path kubeconfig = cluster.writeKubeconfig(root.resolve("kubeconfig"));
        config = new KubernetesConfig(kubeconfig.toString(), null, TestCluster.NAMESPACE, null, null, Map.of(), null,
                Duration.ofSeconds(2), null, null, null, null, List.of(), "http://slipstream.slipstream.svc:8080");
    }

    /** The real server with {@code executor: kubernetes} on this cluster. */
    TestServer startServer(Path data) {
        return TestServer.start(data, settings -> settings.withExecutor(config));
    }

    /** The executor as the server connects it, for a control loop a test drives itself. */
    KubernetesExecutor connect(Path data, Clock clock) {
        return KubernetesExecutor.connect(config, data, clock);
    }

    /** The pods of a run (by its id) as the cluster has them, by name. */
    List<Pod> pods(String run) {
        return cluster.admin.pods().inNamespace(TestCluster.NAMESPACE).withLabel("slipstream.io/run", run).list().getItems().stream()
                .sorted(Comparator.comparing(pod -> pod.getMetadata().getName())).toList();
    }

    @Override
    public void close() {
        cluster.close();
    }
}
