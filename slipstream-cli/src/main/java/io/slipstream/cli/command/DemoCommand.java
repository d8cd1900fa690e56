package io.slipstream.cli.command;

import io.slipstream.api.wire.RunView;
import io.slipstream.cli.ApiClient;
import io.slipstream.cli.CliException;
import io.slipstream.server.SlipstreamServer;
import io.slipstream.server.config.ConfigReader;
import io.slipstream.server.config.ServerConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.Reader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

@Command(name = "demo", description = {"Start a server on this machine and tell the story of shared GPUs: team B trains on team A's idle "
        + "capacity, is preempted when team A needs it, checkpoints, resumes, and ends with the weights of an uninterrupted run.",
        "With -f, run that job instead, show its output, and stop."})
public final class DemoCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--data-dir", paramLabel = "DIR", description = "Where the demo's state lives (default: .slipstream-demo for the story;"
            + " with -f, a fresh directory removed afterwards, so that the story's quotas never keep the job from running).")
    Path dataDir;

    @Option(names = {"-f", "--file"}, paramLabel = "FILE",
            description = "A job to run instead of the story, e.g. examples/hello.yaml (a built-in copy if that file is not here).")
    String file;

    @Override
    public Integer call() throws IOException, InterruptedException {
        if (file == null && System.getenv("SLIPSTREAM_LOG_LEVEL") == null) {
            // The story is told on stdout; the server's own log (stderr) would drown it. Read before logging starts.
            System.setProperty("SLIPSTREAM_LOG_LEVEL", "WARN");
        }
        PrintWriter out = spec.commandLine().getOut();
        Path fresh = dataDir == null && file != null ? Files.createTempDirectory("slipstream-demo-") : null;
        try {
            return run(out, dataDir != null ? dataDir : fresh != null ? fresh : Path.of(".slipstream-demo"));
        } finally {
            if (fresh != null) {
                // Its uid range's claim (a root demo's) goes with it, not at the next start of some server.
                java.util.ServiceLoader.load(io.slipstream.executor.ExecutorFactory.class).forEach(executor -> executor.forget(fresh));
                removeTree(fresh);
            }
        }
    }

    /** Removes the fresh state of a {@code -f} demo; never follows links (what the job left there is not trusted). */
    private static void removeTree(Path dir) throws IOException {
        try (var walk = Files.walk(dir)) {
            for (Path path : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    private int run(PrintWriter out, Path dataDir) throws IOException, InterruptedException {
        ServerConfig config = ConfigReader.defaults(dataDir).withPort(0);
        try (SlipstreamServer server = SlipstreamServer.start(config, SlipstreamServer.systemClock())) {
            out.println("Slipstream demo: a control plane on this machine, over " + server.nodes().size() + " simulated nodes "
                    + "(32 cpu, 256Gi, 8 GPUs each)");
            out.println("1. started the server at " + server.url() + " (state in " + dataDir + ")");
            String token = Files.readString(server.adminTokenFile(), StandardCharsets.UTF_8).trim();
            ApiClient api = new ApiClient(URI.create(server.url()), token);
            if (file == null) {
                boolean identical = new DemoStory(api, out).tell();
                out.println();
                out.println("Next: " + io.slipstream.cli.Hints.command() + " server keeps a server up; docs/getting-started.md has a tour, docs/fault-tolerance.md the details.");
                out.flush();
                return identical ? 0 : CliException.RUN_FAILED;
            }

            byte[] job = jobFile();
            out.println("2. submitting " + file + " (a Workspace and a Job of 2 instances with 1 GPU each)");
            out.flush();
            String runId = submit(api, job);
            out.println("3. run " + runId + " is queued; its output, each line tagged [instance|rank|node]:");
            out.flush();
            try (Reader logs = new InputStreamReader(api.stream("/api/v1/runs/" + runId + "/logs", Map.of("follow", "true")),
                    StandardCharsets.UTF_8)) {
                logs.transferTo(out);
            }
            RunView run = Runs.await(api, runId, new PrintWriter(PrintWriter.nullWriter()));
            out.println("4. the run ended " + run.state() + " (" + run.reason() + "), " + Runs.elapsed(run).toMillis() + " ms after submission:");
            Runs.describe(out, run);
            out.println();
            out.println("Next: start a server that stays up with " + io.slipstream.cli.Hints.command() + " server, then in another terminal:");
            out.println("  " + io.slipstream.cli.Hints.command() + " submit -f examples/hello.yaml --wait");
            out.println("  " + io.slipstream.cli.Hints.command() + " get runs");
            out.flush();
            return Runs.succeeded(run) ? 0 : CliException.RUN_FAILED;
        } catch (RuntimeException e) {
            if (e instanceof CliException) {
                throw e;
            }
            throw new CliException(CliException.RUN_FAILED, "the demo failed: " + ServerCommand.rootMessage(e));
        }
    }

    private byte[] jobFile() throws IOException {
        Path path = Path.of(file);
        if (Files.isRegularFile(path)) {
            return Inputs.read(file);
        }
        try (InputStream builtIn = DemoCommand.class.getResourceAsStream("/examples/hello.yaml")) {
            if (builtIn == null || !file.equals("examples/hello.yaml")) {
                throw new CliException(CliException.REJECTED, "no such file: " + file);
            }
            return builtIn.readAllBytes();
        }
    }

    private String submit(ApiClient api, byte[] document) {
        return SubmitCommand.submit(api, document, file, new RunOptions(), new PrintWriter(PrintWriter.nullWriter()));
    }
}
