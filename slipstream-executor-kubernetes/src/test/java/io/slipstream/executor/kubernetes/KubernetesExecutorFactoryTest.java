package io.slipstream.executor.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.DocumentParser;
import io.slipstream.api.problem.Problem;
import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.FieldReader;
import io.slipstream.executor.ExecutorFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/** The Kubernetes executor's part of the config file: its {@code kubernetes:} block. */
class KubernetesExecutorFactoryTest {
    private final KubernetesExecutorFactory factory = new KubernetesExecutorFactory();
    private final Problems problems = new Problems();

    private KubernetesConfig read(String yaml) {
        return factory.read(FieldReader.of(DocumentParser.parseOne(yaml.getBytes(StandardCharsets.UTF_8)), "", problems));
    }

    @Test
    void theServiceLoaderFindsItByName() {
        assertThat(ServiceLoader.load(ExecutorFactory.class).stream().map(p -> p.get().name())).contains("kubernetes");
        assertThat(factory.configFields()).containsExactly("kubernetes");
        assertThat(KubernetesConfig.defaults().executor()).isEqualTo(factory.name());
    }

    @Test
    void withoutItsBlockItHasItsDefaults() {
        assertThat(read("{}")).isEqualTo(KubernetesConfig.defaults());
        assertThat(problems.list()).isEmpty();
    }

    @Test
    void readsItsBlock() {
        KubernetesConfig config = read("""
                kubernetes:
                  kubeconfig: /etc/slipstream/kubeconfig
                  namespace: ml-jobs
                  namespaces: {team-b: team-b-jobs}
                  nodeSelector: {slipstream.io/pool: training}
                  notReadyTimeout: 90s
                  storage: {storageClass: nfs-rwx, size: 2Ti}
                  imagePullSecrets: [registry]
                  serverUrl: http://slipstream:8080
                """);
        assertThat(problems.list()).isEmpty();
        assertThat(config.namespaceOf("team-b")).isEqualTo("team-b-jobs");
        assertThat(config.nodeSelector()).containsExactly(Map.entry("slipstream.io/pool", "training"));
        assertThat(config.notReadyTimeout()).isEqualTo(Duration.ofSeconds(90));
        assertThat(config.storageClass()).isEqualTo("nfs-rwx");
        assertThat(config.serverUrl()).isEqualTo("http://slipstream:8080");
    }

    @Test
    void everyMistakeIsNamedWithItsPath() {
        read("""
                kubernetes:
                  namespace: Jobs_Here
                  namespaces: {team-b: "Team B"}
                  nodeSelector: {"bad key!": x, pool: "a b"}
                  gpuModelLabel: "not a label!"
                  notReadyTimeout: 1s
                  storage: {size: lots, storageClass: x, existingClaim: y, mode: rwx}
                  imagePullSecrets: [1]
                  serverUrl: ftp://x
                  colour: blue
                """);
        assertThat(problems.list()).extracting(Problem::field).containsExactlyInAnyOrder(
                "kubernetes.namespace", "kubernetes.namespaces.team-b", "kubernetes.nodeSelector.bad key!", "kubernetes.nodeSelector.pool",
                "kubernetes.gpuModelLabel", "kubernetes.notReadyTimeout", "kubernetes.storage.size", "kubernetes.storage.existingClaim",
                "kubernetes.storage.mode", "kubernetes.imagePullSecrets[0]", "kubernetes.serverUrl", "kubernetes.colour");
    }
}
