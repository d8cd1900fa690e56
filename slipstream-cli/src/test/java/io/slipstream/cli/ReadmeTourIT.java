package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.cli.SlipstreamProcess.Server;
import io.slipstream.testing.NoProcessLeftBehind;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's tour, command by command, as a user types it: every {@code $ } line of its console blocks runs in
 * bash against a real server, in a directory with {@code ./slipstream} and {@code examples/} as in a checkout. Run ids
 * in the README are examples ("yours differ"): one of a job already started is replaced by the id it really got.
 * Left out, where not practical in CI: starting the server (this test does), {@code --watch} (until Ctrl-C), the
 * minute-long distributed training (DistributedTrainingIT) and the 60-day replay (SimulateCommandTest).
 */
@ExtendWith(NoProcessLeftBehind.class)
class ReadmeTourIT {
    private static final Path REPO = Path.of(System.getProperty("slipstream.repo", "..")).toAbsolutePath().normalize();
    private static final Pattern COMMAND = Pattern.compile("^\\$ (.*)$");
    private static final Pattern STARTED = Pattern.compile("started run (\\S+) of job \\S+/(\\S+)");
    /** {@code NAME=$(...)}: a shell variable later commands use, kept for them as the user's shell would. */
    private static final Pattern ASSIGNMENT = Pattern.compile("^([A-Z_]+)=\\$\\(.*\\)(\\s+#.*)?$");
    /** Commands this test does not type, and why (see the class comment). */
    private static final List<String> LEFT_OUT = List.of("./slipstream server", "--watch", "examples/distributed-training/", "distributed-training-",
            "./slipstream simulate");
    /** The commands whose refusal is the point (exit 2); every other must succeed. */
    private static final List<String> REFUSED = List.of("examples/broken.yaml");

    @TempDir
    Path work;

    /** The README's commands in order, each with the lines of its here-document, if it has one. */
    static List<String> commands(String readme) {
        List<String> commands = new ArrayList<>();
        List<String> lines = readme.lines().toList();
        boolean inConsole = false;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.startsWith("```")) {
                inConsole = line.equals("```console");
                continue;
            }
            Matcher command = COMMAND.matcher(line);
            if (inConsole && command.matches()) {
                StringBuilder text = new StringBuilder(command.group(1));
                Matcher heredoc = Pattern.compile("<<'(\\w+)'").matcher(line);
                if (heredoc.find()) {
                    while (++i < lines.size() && !lines.get(i).equals(heredoc.group(1))) {
                        text.append('\n').append(lines.get(i));
                    }
                    text.append('\n').append(heredoc.group(1));
                }
                commands.add(text.toString());
            }
        }
        return commands;
    }

    @Test
    void everyCommandOfTheTourWorksAsWritten() throws Exception {
        String readme = Files.readString(REPO.resolve("README.md"), StandardCharsets.UTF_8);
        List<String> commands = commands(readme);
        assertThat(commands).as("the tour's commands").hasSizeGreaterThan(20);
        Path checkout = work.resolve("checkout");
        Files.createDirectories(checkout);
        Files.createSymbolicLink(checkout.resolve("examples"), REPO.resolve("examples"));
        Path script = checkout.resolve("slipstream");
        Files.writeString(script, "#!/usr/bin/env bash\nexec \"" + Path.of(System.getProperty("java.home"), "bin", "java")
                + "\" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar \"" + SlipstreamProcess.JAR.toAbsolutePath() + "\" \"$@\"\n");
        script.toFile().setExecutable(true);
        try (Server server = SlipstreamProcess.startServer(work.resolve("data"))) {
            Map<String, String> ids = new LinkedHashMap<>();
            Map<String, String> variables = new LinkedHashMap<>();
            List<String> typed = new ArrayList<>();
            for (String command : commands) {
                if (LEFT_OUT.stream().anyMatch(command::contains)) {
                    continue;
                }
                String actual = withRealIds(command, ids);
                Matcher assignment = ASSIGNMENT.matcher(actual);
                Shell result = bash(checkout, server, assignment.matches() ? actual + "\nprintf %s \"$" + assignment.group(1) + "\"" : actual, variables);
                if (assignment.matches()) {
                    assertThat(result.out()).as("%s sets %s", actual, assignment.group(1)).isNotBlank();
                    variables.put(assignment.group(1), result.out().strip());
                }
                typed.add(actual.lines().findFirst().orElseThrow());
                boolean refused = REFUSED.stream().anyMatch(command::contains);
                assertThat(result.exit()).as("%s\nstdout: %s\nstderr: %s", actual, result.out(), result.err()).isEqualTo(refused ? 2 : 0);
                if (refused) {
                    assertThat(result.err()).contains("spec.nodeGroups[0].replicas: must be between 1 and 10000 (is 0)")
                            .contains("spec.nodeGroups[0].resources.memory: 'lots' is not a memory quantity").contains("spec.nodeGroups[0].colour: unknown field");
                }
                Matcher started = STARTED.matcher(result.out() + result.err());
                while (started.find()) {
                    ids.put(started.group(2), started.group(1));
                }
            }
            assertThat(typed).as("what the tour typed").anyMatch(c -> c.contains("submit -f examples/hello.yaml"))
                    .anyMatch(c -> c.contains("usage --by quota")).anyMatch(c -> c.contains("get runs -l team=vision"));
        }
    }

    /** The command with each example id of a job that ran replaced by the id that job's run really got. */
    static String withRealIds(String command, Map<String, String> ids) {
        String actual = command;
        for (Map.Entry<String, String> id : ids.entrySet()) {
            actual = actual.replaceAll("\\b" + Pattern.quote(id.getKey()) + "-[0-9a-z]{8}\\b", Matcher.quoteReplacement(id.getValue()));
        }
        return actual;
    }

    private record Shell(int exit, String out, String err) {
    }

    private Shell bash(Path dir, Server server, String command, Map<String, String> variables) throws Exception {
        Path out = Files.createTempFile(work, "out", ".txt");
        Path err = Files.createTempFile(work, "err", ".txt");
        ProcessBuilder builder = new ProcessBuilder("bash", "-c", "set -o pipefail; " + command).directory(dir.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        builder.environment().put("SLIPSTREAM_SERVER", server.url());
        builder.environment().put("SLIPSTREAM_DATA_DIR", server.dataDir().toString());
        builder.environment().putAll(variables);
        Process process = builder.start();
        if (!process.waitFor(Duration.ofMinutes(2).toSeconds(), TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError(command + ": did not finish within 2 minutes");
        }
        return new Shell(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    }
}
