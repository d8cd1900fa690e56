package io.slipstream.executor.local.files;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.spec.SecretValue;
import io.slipstream.executor.LaunchSpec;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An instance's secret files are written and removed without following any link planted in their place. */
class SecretFilesTest {
    private static final String VALUE = "hf_value-" + System.nanoTime();

    @TempDir
    Path dataDir;

    @Test
    void writingAndRemovingNeverFollowALink() throws Exception {
        Path instance = Files.createDirectories(dataDir.resolve("instance"));
        Path outside = Files.createDirectories(dataDir.resolve("outside"));
        Path precious = Files.writeString(outside.resolve("token"), "precious");
        // Left where the secrets go, as a workload could: a link to a directory, then a link inside a real directory.
        Files.createSymbolicLink(instance.resolve(SecretFiles.DIR), outside);
        SecretFiles.write(instance, List.of(new LaunchSpec.SecretFiles("hf", null, Map.of("token", SecretValue.of(VALUE)))), null);
        assertThat(Files.readString(precious)).isEqualTo("precious");
        assertThat(Files.isSymbolicLink(instance.resolve(SecretFiles.DIR))).isFalse();
        assertThat(Files.readString(instance.resolve("secrets/hf/token"))).isEqualTo(VALUE);

        Path hf = instance.resolve("secrets/hf");
        Files.setPosixFilePermissions(hf, PosixFilePermissions.fromString("rwx------"));
        Files.delete(hf.resolve("token"));
        Files.createSymbolicLink(hf.resolve("token"), precious);
        Files.createSymbolicLink(instance.resolve("secrets").resolve("more"), outside);
        SecretFiles.remove(instance);
        assertThat(instance.resolve("secrets")).doesNotExist();
        assertThat(Files.readString(precious)).isEqualTo("precious");
        assertThat(Files.exists(outside, LinkOption.NOFOLLOW_LINKS)).isTrue();
        SecretFiles.remove(instance); // nothing there: fine
        SecretFiles.remove(dataDir.resolve("never-made"));
    }
}
