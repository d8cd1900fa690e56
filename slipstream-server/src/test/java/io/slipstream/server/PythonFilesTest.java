package io.slipstream.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PythonFilesTest {
    @TempDir
    Path dir;

    private Path jar(Map<String, String> files) throws IOException {
        Path jar = dir.resolve("slipstream-" + files.hashCode() + ".jar");
        try (OutputStream out = Files.newOutputStream(jar); ZipOutputStream zip = new ZipOutputStream(out)) {
            for (var file : files.entrySet()) {
                zip.putNextEntry(new ZipEntry(file.getKey()));
                zip.write(file.getValue().getBytes(StandardCharsets.UTF_8));
                zip.closeEntry();
            }
        }
        return jar;
    }

    @Test
    void unpacksTheSdkAndTheExampleReadableByEveryoneAndReplacesAnOlderCopyWhole() throws IOException {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        PythonFiles.unpack(jar(Map.of("python/slipstream/__init__.py", "v1", "python/slipstream/old.py", "gone next time",
                "examples/pytorch-ddp/train.py", "train v1", "examples/pytorch-ddp/job.yaml", "not Python",
                "examples/pytorch-elastic/train.py", "elastic v1", "other/x.py", "elsewhere")), bin);
        assertThat(PythonFiles.sdk(bin).resolve("slipstream/__init__.py")).hasContent("v1");
        assertThat(PythonFiles.example(bin, "pytorch-ddp")).hasContent("train v1");
        assertThat(PythonFiles.example(bin, "pytorch-elastic")).hasContent("elastic v1");
        assertThat(Files.getPosixFilePermissions(PythonFiles.example(bin, "pytorch-ddp"))).isEqualTo(PosixFilePermissions.fromString("rw-r--r--"));
        assertThat(Files.getPosixFilePermissions(PythonFiles.sdk(bin).resolve("slipstream")))
                .isEqualTo(PosixFilePermissions.fromString("rwxr-xr-x"));
        assertThat(bin.resolve("examples/pytorch-ddp/job.yaml")).doesNotExist();
        assertThat(bin.resolve("other")).doesNotExist();

        PythonFiles.unpack(jar(Map.of("python/slipstream/__init__.py", "v2", "examples/pytorch-ddp/train.py", "train v2")), bin);
        assertThat(PythonFiles.sdk(bin).resolve("slipstream/__init__.py")).hasContent("v2");
        assertThat(PythonFiles.sdk(bin).resolve("slipstream/old.py")).doesNotExist();
        assertThat(PythonFiles.example(bin, "pytorch-ddp")).hasContent("train v2");
        try (var left = Files.list(bin)) {
            assertThat(left.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("python", "examples");
        }
    }

    @Test
    void onlyTheKnownExamplesHaveAScript() {
        assertThatThrownBy(() -> PythonFiles.example(dir, "../../etc")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no Python example ../../etc");
    }

    @Test
    void aJarWithoutPythonLeavesWhatIsThere() throws IOException {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        PythonFiles.unpack(jar(Map.of("python/slipstream/__init__.py", "v1")), bin);
        PythonFiles.unpack(jar(Map.of("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")), bin);
        assertThat(PythonFiles.sdk(bin).resolve("slipstream/__init__.py")).hasContent("v1");
    }

    @Test
    void deletingATreeRemovesALinkInItNotWhatItPointsTo() throws IOException {
        Path outside = Files.writeString(dir.resolve("precious"), "keep");
        Path tree = Files.createDirectories(dir.resolve("tree/sub"));
        Files.createSymbolicLink(tree.resolve("link"), outside);
        Files.createSymbolicLink(dir.resolve("tree/dirlink"), dir);
        PythonFiles.deleteTree(dir.resolve("tree"));
        assertThat(dir.resolve("tree")).doesNotExist();
        assertThat(outside).hasContent("keep");
    }
}
