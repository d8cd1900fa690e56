package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.cli.SlipstreamProcess.Server;
import io.slipstream.testing.NoProcessLeftBehind;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Python client (sdk/python, {@code slipstream.Client}) against the real server and real processes: its own
 * tests of it (sdk/python/tests/test_client_server.py: a sweep of 20 runs, watch, logs, cancel, wait, the problem
 * lists of bad input), and the sweep example exactly as docs/python.md runs it. The user's story is one: scripting
 * experiments from Python; the example is what a user copies, so it is run as written.
 */
@ExtendWith(NoProcessLeftBehind.class)
class PythonClientIT {
    private static final Path REPO = Path.of(System.getProperty("slipstream.repo", "..")).toAbsolutePath().normalize();
    private static final String PYTHON = Files.isExecutable(Path.of("/usr/bin/python3")) ? "/usr/bin/python3" : "python3";

    @TempDir
    static Path work;

    private static Server server;

    @BeforeAll
    static void startServer() throws Exception {
        server = SlipstreamProcess.startServer(work.resolve("data"));
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    private record Ran(int exit, String output) {
    }

    /** Runs {@code python3 args} in the repository with the SDK from this tree and the server's address and admin token. */
    private static Ran python(Map<String, String> env, String... args) throws Exception {
        Path output = Files.createTempFile(work, "python", ".out");
        List<String> command = new ArrayList<>(List.of(PYTHON));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).directory(REPO.toFile()).redirectErrorStream(true).redirectOutput(output.toFile());
        builder.environment().put("PYTHONPATH", REPO.resolve("sdk/python").toString());
        builder.environment().put("PYTHONDONTWRITEBYTECODE", "1"); // no __pycache__ in the source tree
        builder.environment().put("SLIPSTREAM_SERVER", server.url());
        builder.environment().remove("SLIPSTREAM_TOKEN");
        builder.environment().putAll(env);
        Process process = builder.start();
        if (!process.waitFor(5, TimeUnit.MINUTES)) {
            process.destroyForcibly().waitFor();
            throw new AssertionError(List.of(args) + " did not end:\n" + Files.readString(output, StandardCharsets.UTF_8));
        }
        return new Ran(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
    }

    @Test
    void theClientsTestsPassAgainstTheRealServer() throws Exception {
        Ran ran = python(Map.of("SLIPSTREAM_TEST_SERVER", "1", "SLIPSTREAM_TOKEN", server.adminToken()),
                "-m", "unittest", "discover", "-s", "sdk/python/tests", "-p", "test_client_server.py", "-v");
        assertThat(ran.exit()).as(ran.output()).isZero();
        assertThat(ran.output()).as("every test ran, none skipped").contains("Ran 4 tests").doesNotContain("skipped");
    }

    @Test
    void theSweepExampleRunsAsWritten() throws Exception {
        // As the docs run it: no token given, the client finds the admin's in the server's data dir.
        Ran ran = python(Map.of("SLIPSTREAM_DATA_DIR", server.dataDir().toString()), "examples/python-client/sweep.py");
        assertThat(ran.exit()).as(ran.output()).isZero();
        assertThat(ran.output()).as(ran.output()).contains("best: lr 1.35 (loss 0.000e+00), 20 of 20 runs")
                .contains("lr  3.00  loss 1.265e+02");
    }
}
