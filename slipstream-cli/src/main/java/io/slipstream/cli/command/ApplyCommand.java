package io.slipstream.cli.command;

import io.slipstream.cli.ApiClient;
import io.slipstream.cli.ClientOptions;
import io.slipstream.cli.Output;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import tools.jackson.databind.JsonNode;

@Command(name = "apply", description = "Create or update workspaces, shapes, quotas, jobs and secrets from YAML or JSON documents.")
public final class ApplyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Option(names = {"-f", "--file"}, required = true, paramLabel = "FILE", description = "File with one or more documents ('-' reads standard input).")
    String file;

    @Override
    public Integer call() {
        ApiClient api = client.client();
        JsonNode result = api.post("/api/v1/apply", Inputs.read(file), "application/yaml");
        List<List<String>> rows = new ArrayList<>();
        for (JsonNode item : result.get("items")) {
            String workspace = Output.text(item, "workspace");
            rows.add(List.of(Output.text(item, "kind"), (workspace.isEmpty() ? "" : workspace + "/") + Output.text(item, "name"),
                    Output.text(item, "action"), Output.text(item, "version")));
        }
        Output.table(spec.commandLine().getOut(), List.of("KIND", "NAME", "ACTION", "VERSION"), rows);
        return 0;
    }
}
