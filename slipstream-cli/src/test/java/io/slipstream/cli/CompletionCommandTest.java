package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CompletionCommandTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"bash", "zsh"})
    void theScriptIsValidBashAndNamesTheCommands(String shell) throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.execute(new String[] {"completion", shell}, new PrintWriter(out, true), new PrintWriter(err, true));
        assertThat(code).as(err.toString()).isZero();
        String script = out.toString();
        assertThat(script).contains("complete -F _complete_slipstream", "get", "apply", "delete", "logs", "completion", "--watch", "--output");

        // bash -n parses the script without running it; the zsh script is run by zsh, but the bash completion it
        // loads is this same text, so it must parse as bash, too.
        Path file = Files.writeString(dir.resolve("slipstream-" + shell), script, StandardCharsets.UTF_8);
        Process bash = new ProcessBuilder("bash", "-n", file.toString()).redirectErrorStream(true).start();
        assertThat(bash.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String complaints = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(bash.exitValue()).as(complaints).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"fish", ""})
    void anotherShellIsRejected(String shell) {
        StringWriter err = new StringWriter();
        int code = Main.execute(new String[] {"completion", shell}, new PrintWriter(new StringWriter(), true), new PrintWriter(err, true));
        assertThat(code).isEqualTo(CliException.REJECTED);
        assertThat(err.toString()).contains("bash, zsh");
    }
}
