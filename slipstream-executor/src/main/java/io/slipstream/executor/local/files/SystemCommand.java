package io.slipstream.executor.local.files;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs one of the system's own tools ({@code rm}, {@code fallocate}, {@code find}) as the server, with an argument list
 * (never a shell string), no input, a fixed PATH and nothing else of the server's environment, and waits for it, at
 * most {@code timeout}: one that takes longer (a file system that hangs) is killed and counts as failed.
 */
public final class SystemCommand {
    private static final String PATH = "/usr/sbin:/usr/bin:/sbin:/bin";

    /** How it ended, and the start of what it printed. */
    public record Result(int exitCode, String output) {
        public boolean succeeded() {
            return exitCode == 0;
        }
    }

    private SystemCommand() {
    }

    public static Result run(List<String> argv, Duration timeout) throws IOException {
        return run(argv, timeout, 2000);
    }

    /** @param maxOutput how much of what it printed is kept, in bytes */
    public static Result run(List<String> argv, Duration timeout, int maxOutput) throws IOException {
        return run(argv, java.util.Map.of(), timeout, maxOutput);
    }

    /** @param env set besides the fixed PATH (a HOME and TMPDIR for a tool that needs them) */
    public static Result run(List<String> argv, java.util.Map<String, String> env, Duration timeout, int maxOutput) throws IOException {
        // Output goes to a file, not a pipe: a pipe is read until every holder closes it, which a deadline cannot bound.
        Path output = Files.createTempFile("slipstream-command", ".out");
        try {
            ProcessBuilder builder = new ProcessBuilder(argv)
                    .redirectInput(Redirects.NO_INPUT)
                    .redirectOutput(output.toFile()) // made new for this command: the server's alone
                    .redirectErrorStream(true);
            builder.environment().clear();
            builder.environment().putAll(env);
            builder.environment().put("PATH", PATH);
            Process process = builder.start();
            try {
                if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.descendants().forEach(ProcessHandle::destroyForcibly);
                    process.destroyForcibly();
                    return new Result(124, argv.get(0) + " took longer than " + timeout.toSeconds() + " s and was killed");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
                throw new IOException("interrupted while running " + argv.get(0), e);
            }
            try (InputStream in = Files.newInputStream(output)) {
                return new Result(process.exitValue(), new String(in.readNBytes(maxOutput), StandardCharsets.UTF_8).trim());
            }
        } finally {
            Files.deleteIfExists(output);
        }
    }
}
