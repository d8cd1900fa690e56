package io.slipstream.executor.local.files;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.spec.SecretValue;
import io.slipstream.executor.IdentityToken;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An instance's identity tokens are written, replaced and removed without following a link or opening a FIFO planted in
 * their place (the directory is the server's, so only a bug or another server process could plant one: still never
 * followed).
 */
class IdentityFilesTest {
    @TempDir
    Path dataDir;

    private static List<IdentityToken> tokens(String value) {
        return List.of(new IdentityToken("vault", IdentityToken.fileOf(0), SecretValue.of(value + "-vault")),
                new IdentityToken("minio", IdentityToken.fileOf(1), SecretValue.of(value + "-minio")));
    }

    @Test
    void writingReplacingAndRemovingNeverFollowALinkNorOpenAFifo() throws Exception {
        Path instance = Files.createDirectories(dataDir.resolve("instance"));
        Path outside = Files.createDirectories(dataDir.resolve("outside"));
        Path precious = Files.writeString(outside.resolve("token-0.jwt"), "precious");
        Files.createSymbolicLink(instance.resolve(IdentityFiles.DIR), outside);
        assertThat(IdentityFiles.refresh(instance, tokens("early"), null)).as("a link is not the server's directory").isFalse();
        assertThat(Files.readString(precious)).isEqualTo("precious");

        IdentityFiles.write(instance, tokens("first"), null);
        Path dir = instance.resolve(IdentityFiles.DIR);
        assertThat(Files.isSymbolicLink(dir)).isFalse();
        assertThat(Files.readString(dir.resolve("token-1.jwt"))).isEqualTo("first-minio");
        assertThat(Files.readString(precious)).isEqualTo("precious");

        // Where a refresh writes first: a link to a file outside, and a FIFO that would block a writer forever.
        Files.createSymbolicLink(dir.resolve(".token-0.jwt.new"), precious);
        new ProcessBuilder("mkfifo", dir.resolve(".token-1.jwt.new").toString()).start().waitFor();
        assertThat(IdentityFiles.refresh(instance, tokens("second"), null)).isTrue();
        assertThat(Files.readString(dir.resolve("token-0.jwt"))).isEqualTo("second-vault");
        assertThat(Files.readString(dir.resolve("token-1.jwt"))).isEqualTo("second-minio");
        assertThat(Files.readString(precious)).isEqualTo("precious");
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("token-0.jwt", "token-1.jwt");
        }

        // The token itself replaced by a link: the refresh renames over the link, never writes through it.
        Files.delete(dir.resolve("token-0.jwt"));
        Files.createSymbolicLink(dir.resolve("token-0.jwt"), precious);
        assertThat(IdentityFiles.refresh(instance, tokens("third"), null)).isTrue();
        assertThat(Files.isSymbolicLink(dir.resolve("token-0.jwt"))).isFalse();
        assertThat(Files.readString(dir.resolve("token-0.jwt"))).isEqualTo("third-vault");
        assertThat(Files.readString(precious)).isEqualTo("precious");

        Files.createSymbolicLink(dir.resolve("more"), outside);
        IdentityFiles.remove(instance);
        assertThat(dir).doesNotExist();
        assertThat(Files.exists(precious, LinkOption.NOFOLLOW_LINKS)).isTrue();
        assertThat(IdentityFiles.refresh(instance, tokens("late"), null)).as("removed: the instance ended").isFalse();
        assertThat(dir).doesNotExist();
    }
}
