package io.slipstream.cli.command;

import io.slipstream.api.wire.RunView;
import io.slipstream.cli.ApiClient;
import io.slipstream.cli.CliException;
import io.slipstream.cli.ClientOptions;
import io.slipstream.cli.GetFormat;
import io.slipstream.cli.Output;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;
import tools.jackson.databind.JsonNode;

@Command(name = "get", description = {"Show objects: runs, run ID, jobs, job NAME, quotas (with what they use, borrow and lend now), pending WS/QUOTA"
        + " (its queue in order), pools, secrets, secret WS/NAME, nodes, workspaces, shapes, leader.",
        "Jobs, quotas and secrets of one workspace with --workspace. A secret shows its keys, never its values (***)."})
public final class GetCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Parameters(index = "0", paramLabel = "TYPE",
            description = "runs | run | jobs | job | quotas | quota | pending | pools | secrets | secret | nodes | node | workspaces | workspace | shapes | shape | leader")
    String type;

    @Parameters(index = "1", arity = "0..1", paramLabel = "NAME",
            description = "The run id or object name, for one object; WORKSPACE/NAME for a job, quota or secret (or NAME with --workspace).")
    String name;

    @Mixin
    WorkspaceOption workspaceOption;

    /** Resolved from {@link #workspaceOption} when the command starts. */
    private String workspace;

    @Option(names = "--watch", description = {"get runs, get run ID: print again whenever it changes, polling every --watch-interval,",
            "until Ctrl-C (for one run: until it ends)."})
    boolean watch;

    @Option(names = "--watch-interval", paramLabel = "DURATION", defaultValue = "2s",
            description = "How often --watch asks the server: 500ms, 2s, 1m (default: ${DEFAULT-VALUE}).")
    String watchInterval;

    @Option(names = "--job", paramLabel = "JOB", description = "Runs of this job only.")
    String job;

    @Option(names = "--state", paramLabel = "STATE", description = "Runs in these states only, e.g. RUNNING,QUEUED.")
    String state;

    @Option(names = "--since", paramLabel = "TIME", description = "Runs created since TIME: 2026-11-29T10:00:00Z, or a duration ago (2h, 7d).")
    String since;

    @Option(names = "--until", paramLabel = "TIME", description = "Runs created before TIME (same forms as --since).")
    String until;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "100", description = "At most this many runs (default: ${DEFAULT-VALUE}).")
    int limit;

    @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "table",
            description = {"table, wide (more columns), name (run/ID, job/WS/NAME..., one per line), json, yaml,",
                    "or jsonpath=EXPR, e.g. jsonpath='{.items[*].id}' (the subset in docs/cli.md). Default: ${DEFAULT-VALUE}."})
    String output;

    @Option(names = "--no-headers", description = "Tables without their header line (for scripts).")
    boolean noHeaders;

    @Option(names = {"-l", "--selector"}, paramLabel = "SELECTOR",
            description = {"get runs, get jobs: only those whose labels match, kubectl's syntax: k=v, k!=v, 'k in (a,b)',",
                    "'k notin (a,b)', k, '!k'; commas join requirements that must all hold."})
    String selector;

    @Option(names = "--show-labels", description = "get runs, get jobs: add a LABELS column to the table (-o wide has it).")
    boolean showLabels;

    /** Parsed from {@link #output} when the command starts. */
    private GetFormat format;

    @Override
    public Integer call() {
        format = GetFormat.parse(output);
        workspace = workspaceOption.get(spec.commandLine().getErr());
        String kind = switch (type) {
            case "run", "runs" -> "runs";
            case "job", "jobs" -> "jobs";
            case "quota", "quotas" -> "quotas";
            case "node", "nodes" -> "nodes";
            case "workspace", "workspaces", "ws" -> "workspaces";
            case "shape", "shapes" -> "shapes";
            case "topology", "topologies" -> "topologies";
            case "secret", "secrets" -> "secrets";
            case "leader" -> "leader";
            case "pool", "pools" -> "pools";
            case "pending" -> "pending";
            default -> throw new CliException(CliException.REJECTED,
                    "unknown type '" + type + "': use runs, jobs, quotas, pending, pools, secrets, nodes, workspaces, shapes, topologies or leader");
        };
        if (selector != null && (name != null || !kind.equals("runs") && !kind.equals("jobs"))) {
            throw new CliException(CliException.REJECTED, "-l/--selector selects in get runs and get jobs (not with a NAME)");
        }
        ApiClient api = client.client();
        if (watch) {
            if (!kind.equals("runs")) {
                throw new CliException(CliException.REJECTED, "--watch works with get runs and get run ID");
            }
            return watchRuns(api);
        }
        JsonNode result = switch (kind) {
            case "leader" -> leader(api);
            case "pending" -> pending(api);
            default -> name == null ? list(api, kind) : one(api, kind);
        };
        PrintWriter out = spec.commandLine().getOut();
        out.print(render(kind, result));
        out.flush();
        if (result.has("unreadable")) {
            // Runs the server cannot read (docs/operations.md): not in the table, but never hidden.
            PrintWriter err = spec.commandLine().getErr();
            for (JsonNode run : result.get("unreadable")) {
                err.println("run " + run.get("id").asString() + " (" + run.get("workspace").asString() + "/" + run.get("job").asString() + ", "
                        + run.get("state").asString() + ") cannot be read by the server: " + run.get("storedDataError").asString());
            }
            err.flush();
        }
        return 0;
    }

    /** The result as the format asks: a list ({@code items}) or one object. */
    private String render(String kind, JsonNode result) {
        StringWriter text = new StringWriter();
        PrintWriter out = new PrintWriter(text);
        boolean one = name != null && !kind.equals("pending");
        List<JsonNode> items = new ArrayList<>();
        if (one || kind.equals("leader")) {
            items.add(result);
        } else {
            result.get("items").forEach(items::add);
        }
        switch (format.kind()) {
            case json, yaml -> Output.print(out, result, format.document());
            case jsonpath -> out.println(format.path().evaluate(result));
            case name -> GetTables.names(kind, items).forEach(out::println);
            case table, wide -> {
                if (kind.equals("runs") && one) {
                    Runs.describe(out, ApiClient.read(result, RunView.class));
                } else {
                    GetTables.Table table = GetTables.table(kind, items, format.kind() == GetFormat.Kind.wide, showLabels, one);
                    Output.table(out, table.header(), table.rows(), !noHeaders);
                }
            }
        }
        out.flush();
        return text.toString();
    }

    private int watchRuns(ApiClient api) {
        Duration every = Watch.interval("--watch-interval", watchInterval);
        PrintWriter out = spec.commandLine().getOut();
        if (name != null) {
            try (StreamPause changes = new StreamPause(api, Map.of("run", name), Watch.SLEEP)) {
                Watch.run(() -> api.get("/api/v1/runs/" + Runs.encode(name)), node -> {
                    RunView run = ApiClient.read(node, RunView.class);
                    String text = format.tabular() ? Runs.statusLine(run) + "\n" : watched(render("runs", node));
                    return new Watch.Frame(text, text, run.state().isFinal());
                }, out, every, every, changes);
            }
            return 0;
        }
        try (StreamPause changes = new StreamPause(api, runQuery(), Watch.SLEEP)) {
            Watch.run(() -> list(api, "runs"), result -> {
                if (!format.tabular()) {
                    String text = watched(render("runs", result));
                    return new Watch.Frame(text, text, false);
                }
                List<List<String>> ageless = new ArrayList<>(); // AGE changes every second: not a change worth printing
                for (JsonNode item : result.get("items")) {
                    List<String> key = new ArrayList<>(Runs.row(ApiClient.read(item, RunView.class)));
                    key.remove(Runs.HEADER.indexOf("AGE"));
                    ageless.add(key);
                }
                return new Watch.Frame(render("runs", result) + "\n", ageless.toString(), false);
            }, out, every, every, changes);
        }
        return 0;
    }

    /** Each YAML document of a watch starts with {@code ---}, so that the output is one YAML stream. */
    private String watched(String text) {
        return format.kind() == GetFormat.Kind.yaml ? "---\n" + text : text;
    }

    /** Which replica leads the control loop (replicas over one store take turns). */
    private JsonNode leader(ApiClient api) {
        if (name != null) {
            throw new CliException(CliException.REJECTED, "get leader takes no name");
        }
        return api.get("/api/v1/leader");
    }

    /** A quota's queued runs in the order the scheduler takes them, with why each waits. */
    private JsonNode pending(ApiClient api) {
        if (name == null) {
            throw new CliException(CliException.REJECTED, "name the quota: get pending WORKSPACE/QUOTA (or QUOTA with --workspace)");
        }
        return api.get(WorkspaceName.parse("quota", name, workspace).path("quotas") + "/pending");
    }

    private JsonNode list(ApiClient api, String kind) {
        Map<String, String> query = new LinkedHashMap<>();
        if (kind.equals("runs")) {
            query = runQuery();
        } else if (kind.equals("jobs") || kind.equals("quotas") || kind.equals("secrets")) {
            query.put("workspace", workspace);
            if (kind.equals("jobs")) {
                query.put("labelSelector", selector);
            }
        }
        return api.get("/api/v1/" + kind, query);
    }

    /** The filters of get runs: the list's query, and the watch stream's (which shows the same runs). */
    private Map<String, String> runQuery() {
        Map<String, String> query = new LinkedHashMap<>();
        query.put("workspace", workspace);
        query.put("job", job);
        query.put("state", state);
        query.put("since", since);
        query.put("until", until);
        query.put("limit", Integer.toString(limit));
        query.put("labelSelector", selector);
        return query;
    }

    private JsonNode one(ApiClient api, String kind) {
        String encoded = Runs.encode(name);
        return switch (kind) {
            case "runs" -> api.get("/api/v1/runs/" + encoded);
            case "jobs", "quotas", "secrets" -> api.get(WorkspaceName.parse(kind.substring(0, kind.length() - 1), name, workspace).path(kind));
            default -> api.get("/api/v1/" + kind + "/" + encoded);
        };
    }
}
