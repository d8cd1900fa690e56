package io.slipstream.executor.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.BaseExecutorContractTest;
import io.slipstream.executor.Executor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * The executor contract, on fabric8's mock API server with a test kubelet that runs pods as local processes, and
 * the leader fence's admission policy installed (as {@code deploy/kubernetes} has it).
 */
class KubernetesExecutorContractTest extends BaseExecutorContractTest {
    @TempDir
    static Path root;

    private static TestCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = new TestCluster(root);
        cluster.api.installFencePolicy();
        // Executors of the contract that no test fences act for epoch 0: the ConfigMap as a fence at 0 writes it.
        cluster.admin.configMaps().inNamespace(TestCluster.NAMESPACE).resource(new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                .withNewMetadata().withName(KubernetesFence.NAME).endMetadata().addToData("epoch", "0").build()).create();
    }

    @AfterAll
    static void stopCluster() {
        java.util.List<String> forbidden = cluster.api.forbiddenExecutorRequests();
        cluster.close();
        assertThat(forbidden).as("requests the RBAC manifest does not allow").isEmpty();
    }

    @Override
    protected Executor createExecutor() {
        return cluster.executor(TestCluster.config(), Clock.systemUTC());
    }

    @Override
    protected String nodeName() {
        return TestCluster.NODES.get(0);
    }

    @Override
    protected String image() {
        return "registry.example.com/team-a/trainer:1.0";
    }

    @Override
    protected void assertNothingRuns(Map<String, String> handle) {
        assertThat(cluster.kubelet.anyProcessAlive(handle.get("pod"))).as("a process of pod %s is alive", handle.get("pod")).isFalse();
    }

    @Override
    protected String identityKey() {
        return "uid";
    }

    @Override
    protected boolean separatesStdoutAndStderr() {
        return false;
    }

    @Override
    protected boolean seesNoticeAcknowledgement() {
        return false;
    }

    @Override
    protected boolean readsProgressFile() {
        return false;
    }

    @Override
    protected String gate(InstanceId id) {
        Path fifo = root.resolve("gate-" + id.runId());
        try {
            assertThat(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor()).isZero();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        return fifo.toString();
    }

    @Override
    protected void openGate(InstanceId id) throws Exception {
        Files.writeString(root.resolve("gate-" + id.runId()), "go\n");
    }
}
