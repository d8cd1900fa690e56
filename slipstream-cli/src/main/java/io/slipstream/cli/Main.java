package io.slipstream.cli;

import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problem;
import io.slipstream.cli.command.ApplyCommand;
import io.slipstream.cli.command.CancelCommand;
import io.slipstream.cli.command.CompletionCommand;
import io.slipstream.cli.command.DeleteCommand;
import io.slipstream.cli.command.DemoCommand;
import io.slipstream.cli.command.EventsCommand;
import io.slipstream.cli.command.ExampleCommand;
import io.slipstream.cli.command.GetCommand;
import io.slipstream.cli.command.LogsCommand;
import io.slipstream.cli.command.NodeCommand;
import io.slipstream.cli.command.RunCommand;
import io.slipstream.cli.command.ServerCommand;
import io.slipstream.cli.command.SimulateCommand;
import io.slipstream.cli.command.StoreCommand;
import io.slipstream.cli.command.SubmitCommand;
import io.slipstream.cli.command.TokenCommand;
import io.slipstream.cli.command.UsageCommand;
import io.slipstream.cli.command.WhoAmICommand;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code slipstream} command. Exit codes: 0 success, 1 the run failed (with {@code --wait}) or the server
 * failed, 2 bad usage or rejected input, 3 server unreachable. Its tree joins the client's commands (slipstream-client,
 * which knows the API alone) and those that run the server or its code in this JVM; their order here is that of
 * {@code --help}.
 */
// scope = INHERIT: every subcommand, present and future, inherits -h/--help and -V/--version (help exits 0).
@Command(name = "slipstream",
        scope = CommandLine.ScopeType.INHERIT,
        mixinStandardHelpOptions = true,
        version = "slipstream 0.1.0",
        description = "Control plane for distributed ML training jobs on a shared cluster.",
        subcommands = {
                ServerCommand.class,
                DemoCommand.class,
                ApplyCommand.class,
                SubmitCommand.class,
                RunCommand.class,
                ExampleCommand.class,
                GetCommand.class,
                DeleteCommand.class,
                LogsCommand.class,
                CancelCommand.class,
                NodeCommand.class,
                EventsCommand.class,
                TokenCommand.class,
                StoreCommand.class,
                WhoAmICommand.class,
                UsageCommand.class,
                SimulateCommand.class,
                CompletionCommand.class,
                CommandLine.HelpCommand.class,
        })
public final class Main implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "name a command (see: " + Hints.command() + " help)");
    }

    public static void main(String[] args) {
        launchProcessesDirectly();
        System.exit(execute(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /**
     * The server's local executor starts a few processes for every instance, and the JDK's default way to start one on
     * Linux (posix_spawn of a helper that then execs the command) adds an exec to each; vfork, the default before
     * JDK 12 and supported through JDK 21, starts it directly and takes about a third less CPU per run
     * (docs/benchmarks.md). The JDK reads {@code jdk.lang.Process.launchMechanism} once, when the first process
     * starts, so it is set here, by the program that owns this JVM, before anything runs, rather than by a library
     * (a setting on the command line always wins).
     */
    static void launchProcessesDirectly() {
        String mechanism = "jdk.lang.Process.launchMechanism";
        if (System.getProperty(mechanism) == null && Runtime.version().feature() <= 21) {
            System.setProperty(mechanism, "VFORK");
        }
    }

    /** Runs the CLI with the given output streams and returns the exit code (used by tests, too). */
    public static int execute(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine commandLine = new CommandLine(new Main());
        commandLine.setOut(out);
        commandLine.setErr(err);
        commandLine.setExecutionExceptionHandler((e, cmd, parsed) -> {
            if (e instanceof CliException cli) {
                report(cmd.getErr(), cli.getMessage(), cli.problems());
                return cli.exitCode();
            }
            if (e instanceof InvalidInputException invalid) {
                report(cmd.getErr(), invalid.getMessage(), invalid.problems());
                return CliException.REJECTED;
            }
            cmd.getErr().println("error: " + e);
            return CliException.RUN_FAILED;
        });
        try {
            return commandLine.execute(args);
        } finally {
            out.flush();
            err.flush();
        }
    }

    private static void report(PrintWriter err, String message, java.util.List<Problem> problems) {
        err.println("error: " + message);
        for (Problem problem : problems) {
            err.println("  - " + (problem.field().isEmpty() ? "" : problem.field() + ": ") + problem.message());
        }
        err.flush();
    }
}
