package io.slipstream.cli.command;

import io.slipstream.cli.ApiClient;
import io.slipstream.cli.ClientOptions;
import io.slipstream.cli.Hints;
import java.io.PrintWriter;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import tools.jackson.databind.JsonNode;

@Command(name = "node", description = {"Take a node out of service and back (administrators): down | up, cordon | uncordon, drain.",
        "A node down is out at once: its instances are stopped without notice and end NODE_LOST. A cordoned node takes nothing new; "
                + "what runs there keeps running. A drain cordons it and moves its runs off as a preemption: notice, grace period, "
                + "queued again elsewhere. Down wins over a cordon or a drain."},
        subcommands = {NodeCommand.Down.class, NodeCommand.Up.class, NodeCommand.Cordon.class, NodeCommand.Uncordon.class, NodeCommand.Drain.class})
public final class NodeCommand {
    private NodeCommand() {
    }

    static String path(String node) {
        return "/api/v1/nodes/" + Runs.encode(node);
    }

    /** {@code node NAME is STATE (reason)}, and what to do where it is not what was asked. */
    static void print(PrintWriter out, JsonNode view, String asked) {
        String name = view.get("name").asString();
        String state = view.get("state").asString();
        String reason = view.path("reason").asString("");
        out.println("node " + name + " is " + state + (reason.isEmpty() ? "" : " (" + reason + ")"));
        if (state.equals("Down") && !asked.equals("Down")) {
            out.println("down wins: it stays down, and only '" + Hints.command() + " node up " + name + "' lifts that");
        } else if (asked.equals("Ready") && (state.equals("Cordoned") || state.equals("Draining"))) {
            out.println("it is still cordoned: '" + Hints.command() + " node uncordon " + name + "' lifts that");
        } else if (state.equals("Draining")) {
            out.println(view.path("instances").asInt() + " instance(s) there are being stopped with their runs' notice and grace period, to start"
                    + " elsewhere; it reads Cordoned once they are gone ('" + Hints.command() + " node drain " + name + " --wait' waits for it)");
        }
        out.flush();
    }

    /** What every node command takes: the client's options and the node; {@link #show} prints the node as it ends up. */
    abstract static class NodeAction implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        ClientOptions client;

        @Parameters(index = "0", paramLabel = "NODE", description = "The node's name (see: get nodes).")
        String node;

        /** POSTs the node's {@code action} (with {@code body}, none if {@code null}) and prints the node it answers; 0. */
        int show(String action, Map<String, String> body, String asked) {
            ApiClient api = client.client();
            JsonNode view = body == null ? api.post(path(node) + "/" + action, new byte[0], "application/json") : api.postJson(path(node) + "/" + action, body);
            print(spec.commandLine().getOut(), view, asked);
            return 0;
        }
    }

    @Command(name = "down", description = {"Declare a node down: nothing new is placed on it, and its instances are stopped at once, "
            + "without notice; they end NODE_LOST and their runs restart elsewhere as their fault-tolerance policy allows."})
    public static final class Down extends NodeAction {
        @Option(names = "--reason", paramLabel = "TEXT", description = "Why it is down (shown on the node and in the runs it held).",
                defaultValue = "declared down by an administrator")
        String reason;

        @Override
        public Integer call() {
            return show("down", Map.of("reason", reason), "Down");
        }
    }

    @Command(name = "up", description = "Declare a node up again: it takes new instances (a cordon or drain stays until uncordon).")
    public static final class Up extends NodeAction {
        @Override
        public Integer call() {
            return show("up", null, "Ready");
        }
    }

    @Command(name = "cordon", description = "Cordon a node: nothing new is placed on it; what runs there keeps running.")
    public static final class Cordon extends NodeAction {
        @Option(names = "--reason", paramLabel = "TEXT", description = "Why (shown on the node after who cordoned it).")
        String reason;

        @Override
        public Integer call() {
            return show("cordon", reason == null ? Map.of() : Map.of("reason", reason), "Cordoned");
        }
    }

    @Command(name = "uncordon", description = "Lift a cordon or a drain: the node takes new instances again (a node down stays down).")
    public static final class Uncordon extends NodeAction {
        @Override
        public Integer call() {
            return show("uncordon", null, "Ready");
        }
    }

    @Command(name = "drain", description = {"Drain a node: cordon it, and move the runs with instances there off it as a preemption moves "
            + "them (the notice, each job's preemptionGracePeriod to checkpoint, then stopped), queued again as Preempted: NodeDrain and "
            + "started elsewhere, or waiting; never counted as a failure. It stays cordoned until uncordon."})
    public static final class Drain extends NodeAction {
        @Option(names = "--reason", paramLabel = "TEXT", description = "Why (shown on the node after who drained it, and in the runs moved).")
        String reason;

        @Option(names = "--wait", description = "Wait until nothing runs there any more (the node reads Cordoned).")
        boolean await;

        @Option(names = "--timeout", paramLabel = "DURATION", description = "With --wait: stop waiting after this long (e.g. 10m); "
                + "exit 5, the drain goes on.")
        String timeout;

        @Override
        public Integer call() {
            java.time.Duration limit = Watch.timeout(await, timeout);
            ApiClient api = client.client();
            PrintWriter out = spec.commandLine().getOut();
            JsonNode view = api.postJson(path(node) + "/drain", reason == null ? Map.of() : Map.of("reason", reason));
            if (!await || !view.get("state").asString().equals("Draining")) {
                print(out, view, "Draining");
                return 0;
            }
            return NodeDrainWait.await(api, node, limit, out, spec.commandLine().getErr(), Watch.SLEEP, java.time.Clock.systemUTC());
        }
    }
}
