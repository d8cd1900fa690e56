package io.slipstream.cli.command;

import io.slipstream.cli.ApiClient;
import io.slipstream.cli.ClientOptions;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import tools.jackson.databind.JsonNode;

@Command(name = "node", description = {"Declare a node down or up again (administrators).",
        "A node that is down takes no new instances; those on it are stopped at once, end NODE_LOST, and their runs restart "
                + "elsewhere as their fault-tolerance policy allows."})
public final class NodeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Parameters(index = "0", paramLabel = "ACTION", description = "down | up")
    String action;

    @Parameters(index = "1", paramLabel = "NODE", description = "The node's name (see: get nodes).")
    String node;

    @Option(names = "--reason", paramLabel = "TEXT", description = "Why it is down (shown on the node and in the runs it held).",
            defaultValue = "declared down by an administrator")
    String reason;

    @Override
    public Integer call() {
        ApiClient api = client.client();
        String path = "/api/v1/nodes/" + Runs.encode(node);
        JsonNode view = switch (action) {
            case "down" -> api.postJson(path + "/down", Map.of("reason", reason));
            case "up" -> api.post(path + "/up", new byte[0], "application/json");
            default -> throw new picocli.CommandLine.ParameterException(spec.commandLine(), "unknown action '" + action + "': use down or up");
        };
        var out = spec.commandLine().getOut();
        out.println("node " + view.get("name").asString() + " is " + view.get("state").asString());
        out.flush();
        return 0;
    }
}
