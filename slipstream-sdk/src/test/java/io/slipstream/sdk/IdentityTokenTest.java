package io.slipstream.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The run's identity tokens, found by audience through the variables the executor sets, and read fresh each time. */
class IdentityTokenTest {
    @TempDir
    Path dir;

    @Test
    void tokensAreReadFreshByAudience() throws Exception {
        Path vault = Files.writeString(dir.resolve("token-0.jwt"), "first-vault");
        Path minio = Files.writeString(dir.resolve("token-1.jwt"), "first-minio\n");
        Slipstream sdk = Slipstream.of(Map.of("SLIPSTREAM_IDENTITY_TOKEN_FILE", vault.toString(), "SLIPSTREAM_IDENTITY_TOKENS",
                MiniJson.write(Map.of("vault", vault.toString(), "https://minio.example.com/", minio.toString()))));
        assertThat(sdk.identityToken()).isEqualTo("first-vault");
        assertThat(sdk.identityToken("https://minio.example.com/")).isEqualTo("first-minio");
        Files.writeString(vault, "second-vault");
        assertThat(sdk.identityToken("vault")).as("read again, never kept").isEqualTo("second-vault");
        assertThatThrownBy(() -> sdk.identityToken("sts.amazonaws.com")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'sts.amazonaws.com'").hasMessageContaining("vault");
        assertThatThrownBy(() -> Slipstream.of(Map.of()).identityToken()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("spec.identity");
        assertThatThrownBy(() -> Slipstream.of(Map.of()).identityToken("vault")).isInstanceOf(IllegalArgumentException.class);
    }
}
