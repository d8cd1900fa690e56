package io.slipstream.cli.command;

import io.slipstream.cli.ApiClient;
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
        WorkspaceName named = WorkspaceName.parse("job", job, workspace);
        ApiClient api = client.client();
        PrintWriter err = spec.commandLine().getErr();
        String runId = run.start(api, named.workspace(), named.name(), err).id();
        return run.finish(api, runId, spec.commandLine().getOut(), err);
    }
}
