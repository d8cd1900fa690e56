package io.slipstream.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.DocumentParser;
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
        ServerConfig config = ConfigReader.read(serverYaml(), ConfigReader.defaults(dataDir), () -> null);

        assertThat(config.host()).as("reachable through the Service").isEqualTo("0.0.0.0");
        assertThat(config.port()).isEqualTo(8080);
        assertThat(config.storeUrl()).isEqualTo("jdbc:postgresql://slipstream-db:5432/slipstream");
        assertThat(config.storeUser()).isEqualTo("slipstream");
        assertThat(config.storePassword()).isNotBlank();
        assertThat(config.kubernetes()).isNotNull();
        assertThat(config.kubernetes().namespace()).isEqualTo("slipstream-jobs");
        assertThat(config.kubernetes().gpuModelLabel()).isEqualTo("nvidia.com/gpu.product");
        assertThat(config.kubernetes().notReadyTimeout()).isEqualTo(Duration.ofMinutes(2));
        assertThat(config.kubernetes().storageSize()).isEqualTo("100Gi");
        assertThat(config.kubernetes().utilityImage()).isEqualTo("busybox:1.36");
        assertThat(config.limits().gracePeriod()).isEqualTo(Duration.ofSeconds(30));
    }
}
