package io.slipstream.cli.command;

import io.slipstream.examples.training.Train;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Workloads that ship with Slipstream, to run inside instances (they are on every local instance's PATH). */
@Command(name = "example", description = "Example workloads, run inside a job's instances (see examples/).",
        subcommands = ExampleCommand.TrainCommand.class)
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
}
