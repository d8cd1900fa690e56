package io.slipstream.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The instances' slipstream command, run by sh with stand-ins for Python and Java that print how they were called. */
class InstanceToolsTest {
    @TempDir
    Path dir;

    private Path standIn(String name) throws Exception {
        Path file = dir.resolve(name);
        Files.writeString(file, "#!/bin/sh\necho \"" + name + " PYTHONPATH=${PYTHONPATH:-} $*\"\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }

    private String slipstream(String... arguments) throws Exception {
        Path bin = Files.createDirectories(dir.resolve("my bin"));
        Path script = Files.writeString(bin.resolve("slipstream"),
                InstanceTools.script(bin, standIn("java"), bin.resolve("slipstream.jar")));
        var command = new java.util.ArrayList<>(java.util.List.of("sh", script.toString()));
        command.addAll(java.util.List.of(arguments));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("SLIPSTREAM_PYTHON", standIn("python").toString());
        builder.environment().remove("PYTHONPATH");
        Process process = builder.start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    }

    @Test
    void eachPythonExampleRunsItsOwnScriptWithTheSdkAndItsArguments() throws Exception {
        Path bin = dir.resolve("my bin");
        for (String example : PythonFiles.EXAMPLES) {
            assertThat(slipstream("example", example, "--flag", "two words")).isEqualTo("python PYTHONPATH=" + PythonFiles.sdk(bin) + " "
                    + PythonFiles.example(bin, example) + " --flag two words");
        }
    }

    @Test
    void everythingElseGoesToTheJar() throws Exception {
        Path jar = dir.resolve("my bin").resolve("slipstream.jar");
        assertThat(slipstream("example", "train")).isEqualTo("java PYTHONPATH= -XX:+UseSerialGC -jar " + jar + " example train");
        assertThat(slipstream("get", "runs")).isEqualTo("java PYTHONPATH= -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar " + jar + " get runs");
        assertThat(slipstream("example", "pytorch-elastic-not")).contains("-jar " + jar + " example pytorch-elastic-not");
    }
}
