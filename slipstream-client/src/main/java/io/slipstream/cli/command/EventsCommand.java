package io.slipstream.cli.command;

import io.slipstream.cli.ClientOptions;
import io.slipstream.cli.Output;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import tools.jackson.databind.JsonNode;

@Command(name = "events", description = "Show a run's history: every state change and instance event, with its reason.")
public final class EventsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Parameters(paramLabel = "RUN", description = "The run's id.")
    String runId;

    @Option(names = {"-o", "--output"}, defaultValue = "table", description = "table, json or yaml (default: ${DEFAULT-VALUE}).")
    Output.Format format;

    @Override
    public Integer call() {
        JsonNode events = client.client().get("/api/v1/runs/" + Runs.encode(runId) + "/events");
        if (format != Output.Format.table) {
            Output.print(spec.commandLine().getOut(), events, format);
            return 0;
        }
        List<List<String>> rows = new ArrayList<>();
        for (JsonNode event : events.get("items")) {
            rows.add(List.of(Output.text(event, "time"), Output.text(event, "type"), Output.text(event, "instance"),
                    Output.text(event, "state"), Output.text(event, "reason"), Output.text(event, "message")));
        }
        Output.table(spec.commandLine().getOut(), List.of("TIME", "TYPE", "INSTANCE", "STATE", "REASON", "MESSAGE"), rows);
        return 0;
    }
}
