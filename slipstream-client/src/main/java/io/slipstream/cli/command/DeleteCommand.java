package io.slipstream.cli.command;

import io.slipstream.api.codec.DocumentParser;
import io.slipstream.cli.ApiClient;
import io.slipstream.cli.CliException;
import io.slipstream.cli.ClientOptions;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

@Command(name = "delete", description = {"Delete objects, as kubectl does:",
        "  delete job team-a/train [team-a/eval ...]   (TYPE: job, quota, secret; workspace or shape with a plain NAME)",
        "  delete job/team-a/train quota/team-a/gpus   (what get -o name prints)",
        "  delete -f FILE|DIR                          (the objects the documents describe, last first)",
        "Each deleted object gets a line; one that cannot be deleted an error, and the others are still tried (exit 2 then).",
        "Runs keep what they were created with; a run that refers to a deleted secret and starts later fails with the reason."})
public final class DeleteCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Parameters(arity = "0..*", paramLabel = "TYPE NAME | TYPE/NAME",
            description = "TYPE then names (WORKSPACE/NAME, or NAME with --workspace), or TYPE/NAME each: job/WS/NAME, workspace/NAME.")
    List<String> arguments = new ArrayList<>();

    @Option(names = {"-f", "--file"}, paramLabel = "FILE", description = "Delete what the documents of FILE describe (repeatable; a directory: its *.yaml, *.yml, *.json).")
    List<String> files = new ArrayList<>();

    @Mixin
    WorkspaceOption workspaceOption;

    @Override
    public Integer call() {
        String workspace = workspaceOption.get(spec.commandLine().getErr());
        List<DeleteTarget> targets = new ArrayList<>();
        if (!files.isEmpty()) {
            if (!arguments.isEmpty()) {
                throw new CliException(CliException.REJECTED, "give either -f FILE or TYPE NAME, not both");
            }
            for (Inputs.Source source : Inputs.readAll(files)) {
                targets.addAll(DeleteTarget.fromDocuments(source.name(), DocumentParser.parse(source.bytes())));
            }
        } else {
            targets = DeleteTarget.fromArguments(arguments, workspace);
        }
        ApiClient api = client.client();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        int exit = 0;
        for (DeleteTarget target : targets) {
            try {
                api.delete(target.path());
                out.println("deleted " + target);
            } catch (CliException e) {
                if (e.exitCode() == CliException.UNREACHABLE) {
                    throw e;
                }
                err.println("error: " + target + ": " + e.getMessage());
                exit = Math.max(exit, e.exitCode() == CliException.RUN_FAILED ? CliException.RUN_FAILED : CliException.REJECTED);
            }
            out.flush();
            err.flush();
        }
        return exit;
    }
}
