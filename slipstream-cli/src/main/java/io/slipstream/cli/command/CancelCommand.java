package io.slipstream.cli.command;

import io.slipstream.api.run.RunState;
import io.slipstream.api.wire.RunView;
import io.slipstream.cli.ApiClient;
import io.slipstream.cli.ClientOptions;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import tools.jackson.databind.JsonNode;

@Command(name = "cancel", description = "Cancel a run: its instances get SIGTERM, then SIGKILL after the grace period.")
public final class CancelCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Parameters(paramLabel = "RUN", description = "The run's id.")
    String runId;

    @Option(names = "--wait", description = "Wait until every instance is confirmed stopped.")
    boolean await;

    @Override
    public Integer call() {
        ApiClient api = client.client();
        JsonNode outcome = api.post("/api/v1/runs/" + Runs.encode(runId) + "/cancel", new byte[0], "application/json");
        var out = spec.commandLine().getOut();
        out.println(outcome.get("message").asString());
        out.flush();
        boolean finished = RunState.valueOf(outcome.get("run").get("state").asString()).isFinal();
        if (await && !finished) { // also when an earlier request started the cancel
            RunView done = Runs.await(api, runId, spec.commandLine().getErr());
            out.println("run " + done.id() + " is " + done.state() + " (" + done.reason() + ")");
        }
        return 0;
    }

}
