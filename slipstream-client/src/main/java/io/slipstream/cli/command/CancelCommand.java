package io.slipstream.cli.command;

import io.slipstream.api.run.RunState;
import io.slipstream.api.wire.RunView;
import io.slipstream.cli.ApiClient;
import io.slipstream.cli.CliException;
import io.slipstream.cli.ClientOptions;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import tools.jackson.databind.JsonNode;

@Command(name = "cancel", description = {"Cancel a run: its instances get SIGTERM, then SIGKILL after the grace period.",
        "With -l SELECTOR: every run not yet ended whose labels match, of the workspaces you may see (or of --workspace)."})
public final class CancelCommand implements Callable<Integer> {
    /** A page of the selection; the cursor goes on from its last run. */
    private static final int PAGE = 1000;

    @Spec
    CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Parameters(paramLabel = "RUN", arity = "0..1", description = "The run's id (or -l SELECTOR).")
    String runId;

    @Option(names = {"-l", "--selector"}, paramLabel = "SELECTOR",
            description = {"Cancel every run not yet ended whose labels match, kubectl's syntax: k=v, k!=v, 'k in (a,b)',",
                    "'k notin (a,b)', k, '!k'; commas join requirements that must all hold."})
    String selector;

    @Mixin
    WorkspaceOption workspaceOption;

    @Option(names = "--wait", description = "Wait until every instance is confirmed stopped.")
    boolean await;

    @Override
    public Integer call() {
        if ((runId == null) == (selector == null)) {
            throw new CliException(CliException.REJECTED, runId == null
                    ? "name the run to cancel, or select runs with -l SELECTOR (e.g. cancel -l team=nlp)"
                    : "give a run id or -l SELECTOR, not both");
        }
        if (selector != null && selector.isBlank()) { // the server reads an empty selector as every run: -l "$UNSET" must not cancel them all
            throw new CliException(CliException.REJECTED, "-l SELECTOR is empty; it would select every run (name the labels, e.g. cancel -l team=nlp)");
        }
        String workspace = workspaceOption.get(spec.commandLine().getErr());
        if (workspace != null && runId != null) {
            throw new CliException(CliException.REJECTED, "--workspace narrows -l SELECTOR; a run id names one run already");
        }
        ApiClient api = client.client();
        List<String> ids = runId != null ? List.of(runId) : selected(api, workspace);
        PrintWriter out = spec.commandLine().getOut();
        if (ids.isEmpty()) {
            out.println("no run that has not ended matches " + selector);
            out.flush();
            return 0;
        }
        List<String> stopping = new ArrayList<>();
        for (String id : ids) {
            JsonNode outcome = api.post("/api/v1/runs/" + Runs.encode(id) + "/cancel", new byte[0], "application/json");
            out.println(outcome.get("message").asString());
            out.flush();
            if (!RunState.valueOf(outcome.get("run").get("state").asString()).isFinal()) {
                stopping.add(id); // also when an earlier request started the cancel
            }
        }
        if (await) {
            for (String id : stopping) {
                RunView done = Runs.await(api, id, spec.commandLine().getErr());
                out.println("run " + done.id() + " is " + done.state() + " (" + done.reason() + ")");
            }
            out.flush();
        }
        return 0;
    }

    /** Every run not yet ended that the selector picks, newest first, each once (the server selects and pages). */
    private List<String> selected(ApiClient api, String workspace) {
        Set<String> ids = new LinkedHashSet<>();
        String states = Arrays.stream(RunState.values()).filter(s -> !s.isFinal()).map(Enum::name).collect(Collectors.joining(","));
        String cursor = null;
        do {
            Map<String, String> query = new LinkedHashMap<>();
            query.put("labelSelector", selector);
            query.put("workspace", workspace);
            query.put("state", states);
            query.put("limit", Integer.toString(PAGE));
            query.put("before", cursor);
            JsonNode page = api.get("/api/v1/runs", query);
            page.path("items").forEach(run -> ids.add(run.get("id").asString()));
            cursor = page.hasNonNull("next") ? page.get("next").asString() : null;
        } while (cursor != null);
        return new ArrayList<>(ids);
    }
}
