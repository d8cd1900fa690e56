package io.slipstream.cli.command;

import io.slipstream.cli.ClientOptions;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

@Command(name = "logs", description = "Print a run's output; each line starts with [instance|rank|node].")
public final class LogsCommand implements Callable<Integer> {
    @Mixin
    ClientOptions client;

    @Parameters(paramLabel = "RUN", description = "The run's id.")
    String runId;

    @Option(names = {"-f", "--follow"}, description = "Keep printing until the run ends.")
    boolean follow;

    @Option(names = "--instance", paramLabel = "NAME", description = "Only this instance, e.g. worker-2.")
    String instance;

    @Option(names = "--stream", paramLabel = "STREAM", defaultValue = "all", description = "stdout, stderr or all (default: ${DEFAULT-VALUE}).")
    String stream;

    @Option(names = "--attempt", paramLabel = "N", description = "Only this attempt's output (default: the current one; with -f every attempt, in order).")
    Integer attempt;

    @Option(names = "--no-prefix", description = "Print lines without the [instance|rank|node] prefix.")
    boolean noPrefix;

    @Option(names = {"-o", "--output"}, defaultValue = "text", description = "text or jsonl (default: ${DEFAULT-VALUE}).")
    String format;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        Map<String, String> query = new LinkedHashMap<>();
        query.put("follow", Boolean.toString(follow));
        query.put("instance", instance);
        query.put("stream", stream);
        query.put("attempt", attempt == null ? null : attempt.toString());
        query.put("prefix", Boolean.toString(!noPrefix));
        query.put("format", format);
        PrintWriter out = spec.commandLine().getOut();
        io.slipstream.cli.ApiClient api = client.client();
        try (Reader in = new InputStreamReader(api.stream("/api/v1/runs/" + Runs.encode(runId) + "/logs", query), StandardCharsets.UTF_8)) {
            char[] buffer = new char[8192];
            int read;
            while ((read = in.read(buffer)) >= 0) {
                out.write(buffer, 0, read);
                out.flush();
            }
        }
        if (!follow && attempt == null) {
            // Only the current attempt was printed: the notice of a preemption, or the failure a restart followed, is
            // in an earlier one. Said on stderr, so that what is piped stays the output.
            earlierAttempts(Runs.get(api, runId)).forEach(spec.commandLine().getErr()::println);
            spec.commandLine().getErr().flush();
        }
        return 0;
    }

    /** A line per earlier attempt of the run, with how it ended, and how to see it; none for a first attempt. */
    static java.util.List<String> earlierAttempts(io.slipstream.api.wire.RunView run) {
        if (run.attempt() <= 1) {
            return java.util.List.of();
        }
        java.util.List<String> lines = new java.util.ArrayList<>();
        lines.add("(the output above is attempt " + run.attempt() + "'s; see an earlier one with --attempt N, or all of them with -f:)");
        for (int earlier = 1; earlier < run.attempt(); earlier++) {
            int n = earlier;
            java.util.List<io.slipstream.api.wire.InstanceView> of = run.instances().stream().filter(i -> i.attempt() == n).toList();
            String ended = of.stream().filter(i -> i.state() != io.slipstream.api.run.InstanceState.SUCCEEDED && i.reason() != null)
                    .map(i -> i.nodeGroup() + "-" + i.groupRank() + " " + i.state() + ": " + i.reason()).findFirst()
                    .orElse(of.isEmpty() ? "ended" : "all instances succeeded");
            lines.add("  attempt " + n + ": " + ended);
        }
        return lines;
    }
}
