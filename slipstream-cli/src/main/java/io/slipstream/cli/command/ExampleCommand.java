package io.slipstream.cli.command;

import io.slipstream.examples.training.Train;
import io.slipstream.server.PythonFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Workloads that ship with Slipstream, to run inside instances (they are on every local instance's PATH). */
@Command(name = "example", description = "Example workloads, run inside a job's instances (see examples/).",
        subcommands = {ExampleCommand.TrainCommand.class, ExampleCommand.PyTorchDdpCommand.class,
                ExampleCommand.PyTorchElasticCommand.class})
public final class ExampleCommand {

    @Command(name = "train", description = {"One rank of the data-parallel training example (examples/distributed-training).",
            "Reads the run's metadata, joins a ring all-reduce, trains, checkpoints, and prints the final weights' SHA-256.",
            "Settings come from the environment: STEPS, CHECKPOINT_EVERY, SEED, BATCH, HIDDEN, LEARNING_RATE, LOG_EVERY."})
    static final class TrainCommand implements Callable<Integer> {
        @Override
        public Integer call() {
            return Train.run(System.getenv(), System.out, System.err);
        }
    }

    @Command(name = "pytorch-ddp", description = {"One rank of the PyTorch DDP example (examples/pytorch-ddp): runs its train.py with",
            "Debian's /usr/bin/python3 (or $SLIPSTREAM_PYTHON) and the Python SDK on PYTHONPATH.",
            "Inside a local instance the slipstream command on its PATH runs Python directly; this one waits for it.",
            "Settings come from the environment: STEPS, CHECKPOINT_EVERY, SEED, BATCH, HIDDEN, LOG_EVERY."})
    static final class PyTorchDdpCommand implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            return PythonExample.run("pytorch-ddp");
        }
    }

    @Command(name = "pytorch-elastic", description = {"One rank of the elastic PyTorch example (examples/pytorch-elastic): runs its",
            "train.py with Debian's /usr/bin/python3 (or $SLIPSTREAM_PYTHON) and the Python SDK on PYTHONPATH.",
            "Inside a local instance the slipstream command on its PATH runs Python directly; this one waits for it.",
            "Settings come from the environment: STEPS, CHECKPOINT_EVERY, SEED, BATCH, SHARDS, HIDDEN, LOG_EVERY."})
    static final class PyTorchElasticCommand implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            return PythonExample.run("pytorch-elastic");
        }
    }

    /** Runs an example's train.py from the jar's copy, unpacked for the time it runs. */
    private static final class PythonExample {
        static int run(String name) throws Exception {
            Path dir = Files.createTempDirectory("slipstream-" + name);
            try {
                return runPython(dir, name);
            } finally {
                PythonFiles.deleteTree(dir);
            }
        }

        private static int runPython(Path dir, String name) throws Exception {
            if (!PythonFiles.unpackOwn(dir)) {
                System.err.println("slipstream example " + name + ": runs from the slipstream jar only; elsewhere run "
                        + "PYTHONPATH=sdk/python python3 examples/" + name + "/train.py");
                return 2;
            }
            String python = System.getenv().getOrDefault("SLIPSTREAM_PYTHON", "/usr/bin/python3");
            ProcessBuilder builder = new ProcessBuilder(Files.isExecutable(Path.of(python)) ? python : "python3",
                    PythonFiles.example(dir, name).toString()).inheritIO();
            String path = System.getenv("PYTHONPATH");
            builder.environment().put("PYTHONPATH", PythonFiles.sdk(dir) + (path == null || path.isEmpty() ? "" : ":" + path));
            builder.environment().put("PYTHONDONTWRITEBYTECODE", "1");
            Process python3 = builder.start();
            // A SIGTERM to this JVM (a stop notice) goes on to Python, which checkpoints before it exits.
            Thread forward = new Thread(() -> {
                python3.destroy();
                try {
                    python3.waitFor();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            Runtime.getRuntime().addShutdownHook(forward);
            int exit = python3.waitFor();
            Runtime.getRuntime().removeShutdownHook(forward);
            return exit;
        }
    }
}
