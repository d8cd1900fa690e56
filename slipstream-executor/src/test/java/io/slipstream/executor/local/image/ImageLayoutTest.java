package io.slipstream.executor.local.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.executor.local.files.SafeFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An image's runtime config comes from whoever made the image: read with a bound on its size, never through a link. */
class ImageLayoutTest {
    @TempDir
    Path bundle;

    @Test
    void theEnvironmentOfAnImagesConfigIsRead() throws Exception {
        Files.writeString(bundle.resolve("config.json"), "{\"process\": {\"env\": [\"PATH=/bin\", \"LANG=C\"]}}");
        assertThat(ImageLayout.env(bundle)).containsExactly("PATH=/bin", "LANG=C");
    }

    @Test
    void aConfigLargerThanTheBoundIsRefusedNotRead() throws Exception {
        String huge = "x".repeat(ImageLayout.MAX_CONFIG_BYTES);
        Files.writeString(bundle.resolve("config.json"), "{\"process\": {\"env\": [\"HUGE=" + huge + "\"]}}");
        assertThatThrownBy(() -> ImageLayout.env(bundle)).isInstanceOf(SafeFiles.RefusedFile.class).hasMessageContaining("larger than");
    }

    @Test
    void aConfigThatIsALinkIsRefused() throws Exception {
        Path elsewhere = Files.writeString(bundle.resolveSibling(bundle.getFileName() + "-elsewhere.json"), "{}");
        Files.createSymbolicLink(bundle.resolve("config.json"), elsewhere);
        assertThatThrownBy(() -> ImageLayout.env(bundle)).isInstanceOf(SafeFiles.RefusedFile.class).hasMessageContaining("symbolic link");
        Files.delete(elsewhere);
    }
}
