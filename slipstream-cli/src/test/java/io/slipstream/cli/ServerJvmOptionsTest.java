package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The server's JVM options file, which {@code ./slipstream server} hands to the JVM as an argument file: a JVM that
 * cannot read it (a mistyped option, a comment the launcher does not take) would not start the server at all.
 */
class ServerJvmOptionsTest {
    private static final Path OPTIONS = Path.of("src/main/jvm/server.options").toAbsolutePath();

    @Test
    void aJvmStartsWithTheServersOptions() throws Exception {
        Process java = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "@" + OPTIONS,
                "-XX:+PrintCommandLineFlags", "-version")).redirectErrorStream(true).start();
        String output = new String(java.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

        assertThat(java.waitFor()).as(output).isZero();
        // The flags the JVM settled on: the file's, not the defaults it would pick for this machine.
        assertThat(output).contains("-XX:+UseSerialGC").contains("-XX:MaxNewSize=67108864").contains("-XX:NewSize=32505856");
        assertThat(output).as("nothing printed at every start but what was asked").doesNotContain("warning");
    }
}
