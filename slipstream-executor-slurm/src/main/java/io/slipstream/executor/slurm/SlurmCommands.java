package io.slipstream.executor.slurm;

import io.slipstream.executor.ExecutorException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Runs Slurm's commands ({@code sbatch}, {@code squeue}, {@code scancel}, {@code sinfo}, {@code scontrol}): always as an
 * argument list, never through a shell, with an environment of their own (the server's {@code SBATCH_*} and
 * {@code SLURM_*} variables would change what they do; a submitted job inherits it), and with a timeout: a controller
 * that does not answer fails the call, it never hangs it.
 */
final class SlurmCommands {
    /** More than any answer this executor asks for (squeue of every job of the partition is about 100 bytes a job). */
    private static final int MAX_OUTPUT = 64 << 20;
    private static final int MAX_ERROR = 64 << 10;
    private static final ExecutorService DRAINS = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "slurm-command-output");
        thread.setDaemon(true);
        return thread;
    });

    private final Path directory;
    private final Map<String, String> environment;
    private final Duration timeout;

    /**
     * @param directory where the commands are, or {@code null} to find them on the server's {@code PATH}
     * @param slurmConf the {@code slurm.conf} they read, or {@code null} for Slurm's default (or the server's {@code SLURM_CONF})
     */
    SlurmCommands(Path directory, Path slurmConf, Duration timeout) {
        this.directory = directory;
        this.timeout = timeout;
        Map<String, String> env = new LinkedHashMap<>();
        String path = System.getenv("PATH");
        env.put("PATH", path == null ? "/usr/local/bin:/usr/bin:/bin" : path);
        String conf = slurmConf != null ? slurmConf.toString() : System.getenv("SLURM_CONF");
        if (conf != null) {
            env.put("SLURM_CONF", conf);
        }
        this.environment = Map.copyOf(env);
    }

    /**
     * The environment every command runs with, and so every job starts with (sbatch passes its own on): nothing in it
     * that an instance would not expect (a locale of the commands' own would be the instance's too).
     */
    Map<String, String> environment() {
        return environment;
    }

    /**
     * Runs {@code command} with {@code arguments} and returns what it printed.
     *
     * @throws ExecutorException if it cannot be run, takes longer than the timeout, or exits with an error (its own words)
     */
    String run(String command, List<String> arguments) {
        List<String> argv = new ArrayList<>();
        argv.add(directory == null ? command : directory.resolve(command).toString());
        argv.addAll(arguments);
        ProcessBuilder builder = new ProcessBuilder(argv);
        builder.environment().clear();
        builder.environment().putAll(environment);
        builder.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new ExecutorException("cannot run " + command + " (is Slurm's client installed on the server's machine? slurm.commands): "
                    + e.getMessage(), e);
        }
        CompletableFuture<byte[]> out = drain(process.getInputStream(), MAX_OUTPUT);
        CompletableFuture<byte[]> err = drain(process.getErrorStream(), MAX_ERROR);
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new ExecutorException("Slurm did not answer: " + command + " took longer than " + timeout.toSeconds()
                        + " s (slurm.commandTimeout); is slurmctld up and reachable?");
            }
            String stdout = text(out);
            if (process.exitValue() != 0) {
                String stderr = text(err).trim();
                throw new ExecutorException(command + " failed (exit " + process.exitValue() + "): "
                        + (stderr.isEmpty() ? stdout.trim() : stderr));
            }
            return stdout;
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new ExecutorException("interrupted while " + command + " ran", e);
        }
    }

    String run(String command, String... arguments) {
        return run(command, List.of(arguments));
    }

    private static CompletableFuture<byte[]> drain(InputStream stream, int limit) {
        return CompletableFuture.supplyAsync(() -> {
            try (stream) {
                byte[] data = stream.readNBytes(limit);
                stream.transferTo(java.io.OutputStream.nullOutputStream()); // the rest, so that the command never blocks on a full pipe
                return data;
            } catch (IOException e) {
                return new byte[0];
            }
        }, DRAINS);
    }

    /** What a command that exited printed: its pipes are closed, so this waits for nothing but the last bytes. */
    private static String text(CompletableFuture<byte[]> output) throws InterruptedException {
        try {
            return new String(output.get(5, TimeUnit.SECONDS), StandardCharsets.UTF_8);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            return ""; // a child it left holds the pipe open: what was read is all there is
        }
    }
}
