package io.slipstream.cli.command;

import io.slipstream.cli.ApiClient;
import io.slipstream.cli.CliException;
import io.slipstream.cli.ClientOptions;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

@Command(name = "run",
        description = {"Start a run of a job applied earlier (slipstream apply -f job.yaml), optionally with overrides.",
                "Prints the new run's id alone on its last line."})
public final class RunCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Parameters(paramLabel = "JOB", description = "The job: NAME with --workspace, or WORKSPACE/NAME.")
    String job;

    @Mixin
    WorkspaceOption workspaceOption;

    @Mixin
    RunOptions run;

    @Override
    public Integer call() {
        String workspace = workspaceOption.get(spec.commandLine().getErr());
        String ws = workspace;
        String name = job;
        int slash = job.indexOf('/');
        if (slash >= 0) {
            if (workspace != null && !workspace.equals(job.substring(0, slash))) {
                throw new CliException(CliException.REJECTED, "JOB " + job + " names workspace " + job.substring(0, slash)
                        + " but --workspace is " + workspace);
            }
            ws = job.substring(0, slash);
            name = job.substring(slash + 1);
        }
        if (ws == null || ws.isEmpty() || name.isEmpty()) {
            throw new CliException(CliException.REJECTED, "name the job's workspace: slipstream run WORKSPACE/JOB, or --workspace");
        }
        ApiClient api = client.client();
        PrintWriter err = spec.commandLine().getErr();
        String runId = run.start(api, ws, name, err).id();
        return run.finish(api, runId, spec.commandLine().getOut(), err);
    }
}
