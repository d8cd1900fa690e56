package io.slipstream.cli.command;

import io.slipstream.cli.ClientOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import tools.jackson.databind.JsonNode;

@Command(name = "whoami", description = "Show whom the token belongs to and which workspaces it sees.")
public final class WhoAmICommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Override
    public Integer call() {
        JsonNode me = client.client().get("/api/v1/whoami");
        List<String> workspaces = new ArrayList<>();
        me.get("workspaces").forEach(w -> workspaces.add(w.asString()));
        spec.commandLine().getOut().println(me.get("user").asString() + (me.get("admin").asBoolean() ? " (admin: sees every workspace)" : "")
                + (workspaces.isEmpty() ? "" : "; workspaces: " + String.join(", ", workspaces)));
        return 0;
    }
}
