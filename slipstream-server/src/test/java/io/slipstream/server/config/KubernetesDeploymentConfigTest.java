package io.slipstream.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.DocumentParser;
import io.slipstream.executor.kubernetes.KubernetesConfig;
import io.slipstream.store.jdbc.JdbcStoreSettings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * The config file that deploy/kubernetes/slipstream.yaml gives the server is one this server accepts (unknown keys
 * are errors, so a manifest that drifts from {@link ConfigReader} would stop the pod at start).
 */
class KubernetesDeploymentConfigTest {
    private static final Path MANIFEST = Path.of("..", "deploy", "kubernetes", "slipstream.yaml");

    @TempDir
    Path dataDir;

    /** {@code server.yaml} from the Secret {@code slipstream-config}. */
    private static byte[] serverYaml() throws IOException {
        List<JsonNode> documents = DocumentParser.parse(Files.readAllBytes(MANIFEST));
        List<JsonNode> secrets = documents.stream()
                .filter(d -> "Secret".equals(d.path("kind").asString("")) && "slipstream-config".equals(d.path("metadata").path("name").asString("")))
                .toList();
        assertThat(secrets).as("the Secret slipstream-config in " + MANIFEST).hasSize(1);
        JsonNode file = secrets.get(0).path("stringData").path("server.yaml");
        assertThat(file.isString()).as("stringData.server.yaml is the config file's text").isTrue();
        return file.asString().getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void theManifestsConfigIsValidAndUsesPostgresAndTheKubernetesExecutor() throws IOException {
        ServerConfig config = ConfigReader.read(serverYaml(), ConfigReader.defaults(dataDir));

        assertThat(config.host()).as("reachable through the Service").isEqualTo("0.0.0.0");
        assertThat(config.port()).isEqualTo(8080);
        JdbcStoreSettings store = (JdbcStoreSettings) config.store();
        assertThat(store.store()).isEqualTo("postgresql");
        assertThat(store.url()).isEqualTo("jdbc:postgresql://slipstream-db:5432/slipstream");
        assertThat(store.username()).isEqualTo("slipstream");
        assertThat(store.password()).isNotBlank();
        KubernetesConfig kubernetes = config.executor(KubernetesConfig.class);
        assertThat(kubernetes.namespace()).isEqualTo("slipstream-jobs");
        assertThat(kubernetes.gpuModelLabel()).isEqualTo("nvidia.com/gpu.product");
        assertThat(kubernetes.notReadyTimeout()).isEqualTo(Duration.ofMinutes(2));
        assertThat(kubernetes.storageSize()).isEqualTo("100Gi");
        assertThat(kubernetes.utilityImage()).isEqualTo("busybox:1.36");
        assertThat(config.limits().gracePeriod()).isEqualTo(Duration.ofSeconds(30));
    }
}
