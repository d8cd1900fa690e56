package io.slipstream.cli.command;

import io.slipstream.cli.ApiClient;
import io.slipstream.cli.CliException;
import java.io.PrintWriter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import tools.jackson.databind.JsonNode;

/** {@code node drain --wait}: polls the node until it no longer reads Draining, or {@code --timeout} passed. */
final class NodeDrainWait {
    private NodeDrainWait() {
    }

    /**
     * Prints how many instances are left each time that changes, then the node as it ends up (Cordoned once drained;
     * Down or Ready if someone changed it meanwhile). Returns 0, or {@link CliException#TIMED_OUT} once {@code clock} is past {@code limit}.
     */
    static int await(ApiClient api, String node, Duration limit, PrintWriter out, PrintWriter err, Watch.Pause pause, Clock clock) {
        Instant deadline = limit == null ? null : clock.instant().plus(limit);
        JsonNode last = Watch.run(() -> api.get(NodeCommand.path(node)), view -> {
            boolean draining = view.get("state").asString().equals("Draining");
            boolean over = deadline != null && clock.instant().isAfter(deadline);
            String line = "node " + node + ": " + view.get("state").asString() + ", " + view.path("instances").asInt() + " instance(s) there";
            return new Watch.Frame(draining ? line + "\n" : "", line, !draining || over);
        }, err, Duration.ofMillis(200), Duration.ofSeconds(2), pause);
        if (last.get("state").asString().equals("Draining")) {
            err.println("stopped waiting after " + (limit == null ? "an interrupt" : io.slipstream.api.spec.Durations.format(limit))
                    + "; the drain goes on");
            err.flush();
            NodeCommand.print(out, last, "Draining");
            return CliException.TIMED_OUT;
        }
        NodeCommand.print(out, last, "Cordoned");
        return 0;
    }
}
