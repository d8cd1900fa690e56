package io.slipstream.cli.command;

import io.slipstream.api.wire.RunView;
import io.slipstream.cli.ApiClient;
import io.slipstream.cli.CliException;
import io.slipstream.cli.ClientOptions;
import io.slipstream.cli.Output;
import java.io.PrintWriter;
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

    @Option(names = {"-o", "--output"}, defaultValue = "table", description = "table, json or yaml (default: ${DEFAULT-VALUE}).")
    Output.Format format;

    @Override
    public Integer call() {
        workspace = workspaceOption.get(spec.commandLine().getErr());
        ApiClient api = client.client();
        String kind = switch (type) {
            case "run", "runs" -> "runs";
            case "job", "jobs" -> "jobs";
            case "quota", "quotas" -> "quotas";
            case "node", "nodes" -> "nodes";
            case "workspace", "workspaces", "ws" -> "workspaces";
            case "shape", "shapes" -> "shapes";
            case "secret", "secrets" -> "secrets";
            case "leader" -> "leader";
            case "pool", "pools" -> "pools";
            case "pending" -> "pending";
            default -> throw new CliException(CliException.REJECTED,
                    "unknown type '" + type + "': use runs, jobs, quotas, pending, pools, secrets, nodes, workspaces, shapes or leader");
        };
        if (watch) {
            if (!kind.equals("runs")) {
                throw new CliException(CliException.REJECTED, "--watch works with get runs and get run ID");
            }
            return watchRuns(api);
        }
        if (kind.equals("leader")) {
            return leader(api);
        }
        if (kind.equals("pending")) {
            return pending(api);
        }
        JsonNode result = name == null ? list(api, kind) : one(api, kind);
        PrintWriter out = spec.commandLine().getOut();
        if (format != Output.Format.table) {
            Output.print(out, result, format);
            return 0;
        }
        if (kind.equals("runs") && name != null) {
            Runs.describe(out, ApiClient.read(result, RunView.class));
            return 0;
        }
        List<JsonNode> items = new ArrayList<>();
        if (name == null) {
            result.get("items").forEach(items::add);
        } else {
            items.add(result);
        }
        table(out, kind, items);
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

    private int watchRuns(ApiClient api) {
        Duration every = Watch.interval("--watch-interval", watchInterval);
        PrintWriter out = spec.commandLine().getOut();
        if (name != null) {
            Watch.run(() -> api.get("/api/v1/runs/" + Runs.encode(name)), node -> {
                RunView run = ApiClient.read(node, RunView.class);
                String text = format == Output.Format.table ? Runs.statusLine(run) + "\n" : printed(node);
                return new Watch.Frame(text, text, run.state().isFinal());
            }, out, every, every, Watch.SLEEP);
            return 0;
        }
        Watch.run(() -> list(api, "runs"), result -> {
            if (format != Output.Format.table) {
                String text = printed(result);
                return new Watch.Frame(text, text, false);
            }
            List<List<String>> rows = new ArrayList<>();
            List<List<String>> ageless = new ArrayList<>(); // AGE changes every second: not a change worth printing
            for (JsonNode item : result.get("items")) {
                List<String> row = Runs.row(ApiClient.read(item, RunView.class));
                rows.add(row);
                List<String> key = new ArrayList<>(row);
                key.remove(Runs.HEADER.indexOf("AGE"));
                ageless.add(key);
            }
            java.io.StringWriter text = new java.io.StringWriter();
            PrintWriter table = new PrintWriter(text);
            Output.table(table, Runs.HEADER, rows);
            table.println();
            table.flush();
            return new Watch.Frame(text.toString(), ageless.toString(), false);
        }, out, every, every, Watch.SLEEP);
        return 0;
    }

    /** The node as -o json or yaml prints it; a YAML stream of documents when watched. */
    private String printed(JsonNode node) {
        java.io.StringWriter text = new java.io.StringWriter();
        PrintWriter writer = new PrintWriter(text);
        if (format == Output.Format.yaml) {
            writer.println("---");
        }
        Output.print(writer, node, format);
        return text.toString();
    }

    /** Which replica leads the control loop (replicas over one store take turns). */
    private int leader(ApiClient api) {
        if (name != null) {
            throw new CliException(CliException.REJECTED, "get leader takes no name");
        }
        JsonNode lease = api.get("/api/v1/leader");
        PrintWriter out = spec.commandLine().getOut();
        if (format != Output.Format.table) {
            Output.print(out, lease, format);
            return 0;
        }
        Output.table(out, List.of("LEADER", "EPOCH", "RENEWED", "EXPIRES", "STATE"), List.of(List.of(Output.text(lease, "holder"),
                Output.text(lease, "epoch"), Output.text(lease, "renewedAt"), Output.text(lease, "expiresAt"),
                lease.path("expired").asBoolean() ? "expired (no replica leads now)" : "leading")));
        return 0;
    }

    /** A quota's queued runs in the order the scheduler takes them, with why each waits. */
    private int pending(ApiClient api) {
        if (name == null) {
            throw new CliException(CliException.REJECTED, "name the quota: get pending WORKSPACE/QUOTA (or QUOTA with --workspace)");
        }
        String[] qualified = qualified("quota", name, workspace);
        JsonNode result = api.get("/api/v1/workspaces/" + Runs.encode(qualified[0]) + "/quotas/" + Runs.encode(qualified[1]) + "/pending");
        PrintWriter out = spec.commandLine().getOut();
        if (format != Output.Format.table) {
            Output.print(out, result, format);
            return 0;
        }
        List<List<String>> rows = new ArrayList<>();
        int order = 0;
        for (JsonNode run : result.get("items")) {
            rows.add(List.of(Integer.toString(++order), run.get("id").asString(), run.get("job").asString(), run.get("priority").asString(),
                    usage(run.get("resources")), run.get("idleResources").asString(), run.path("createdAt").asString(),
                    run.has("reason") ? run.get("reason").asString() + ": " + run.path("message").asString() : "(not scheduled yet)"));
        }
        Output.table(out, List.of("#", "RUN", "JOB", "PRIORITY", "ASKS", "IDLE", "CREATED", "WAITS BECAUSE"), rows);
        out.flush();
        return 0;
    }

    private JsonNode list(ApiClient api, String kind) {
        Map<String, String> query = new LinkedHashMap<>();
        if (kind.equals("runs")) {
            query.put("workspace", workspace);
            query.put("job", job);
            query.put("state", state);
            query.put("since", since);
            query.put("until", until);
            query.put("limit", Integer.toString(limit));
        } else if (kind.equals("jobs") || kind.equals("quotas") || kind.equals("secrets")) {
            query.put("workspace", workspace);
        }
        return api.get("/api/v1/" + kind, query);
    }

    private JsonNode one(ApiClient api, String kind) {
        String encoded = Runs.encode(name);
        return switch (kind) {
            case "runs" -> api.get("/api/v1/runs/" + encoded);
            case "jobs", "quotas", "secrets" -> {
                String[] qualified = qualified(type, name, workspace);
                yield api.get("/api/v1/workspaces/" + Runs.encode(qualified[0]) + "/" + kind + "/" + Runs.encode(qualified[1]));
            }
            default -> api.get("/api/v1/" + kind + "/" + encoded);
        };
    }

    private static void table(PrintWriter out, String kind, List<JsonNode> items) {
        List<List<String>> rows = new ArrayList<>();
        switch (kind) {
            case "runs" -> {
                for (JsonNode item : items) {
                    rows.add(Runs.row(ApiClient.read(item, RunView.class)));
                }
                Output.table(out, Runs.HEADER, rows);
            }
            case "jobs" -> {
                for (JsonNode item : items) {
                    JsonNode groups = item.path("spec").path("nodeGroups");
                    int instances = 0;
                    List<String> names = new ArrayList<>();
                    for (JsonNode group : groups) {
                        instances += group.path("replicas").asInt(1);
                        names.add(group.path("name").asString() + "x" + group.path("replicas").asInt(1));
                    }
                    rows.add(List.of(meta(item, "workspace"), meta(item, "name"), meta(item, "version"), String.join(",", names),
                            Integer.toString(instances), item.path("spec").path("priority").asString("0")));
                }
                Output.table(out, List.of("WORKSPACE", "NAME", "VERSION", "GROUPS", "INSTANCES", "PRIORITY"), rows);
            }
            case "quotas" -> {
                for (JsonNode item : items) {
                    JsonNode spec = item.path("spec");
                    JsonNode status = item.path("status");
                    rows.add(List.of(meta(item, "workspace"), meta(item, "name"), spec.path("type").asString(),
                            resources(spec.path("min")), spec.has("max") ? resources(spec.path("max")) : "", spec.path("parent").asString(""),
                            usage(status.path("used")), usage(status.path("borrowed")), usage(status.path("lent")),
                            status.path("admittedRuns").asString("0"), status.path("pendingRuns").asString("0")));
                }
                Output.table(out, List.of("WORKSPACE", "NAME", "TYPE", "MIN", "MAX", "PARENT", "USED", "BORROWED", "LENT", "ADMITTED", "PENDING"), rows);
            }
            case "pools" -> {
                for (JsonNode item : items) {
                    rows.add(List.of(item.path("name").asString(), usage(item.path("guaranteed")), usage(item.path("used")),
                            usage(item.path("borrowed")), usage(item.path("lent")), usage(item.path("pending")),
                            item.path("admittedRuns").asString("0"), item.path("pendingRuns").asString("0")));
                }
                Output.table(out, List.of("POOL", "GUARANTEED", "USED", "BORROWED", "LENT", "PENDING", "ADMITTED", "QUEUED"), rows);
            }
            case "secrets" -> {
                for (JsonNode item : items) {
                    List<String> keys = new ArrayList<>(item.path("spec").path("data").propertyNames());
                    rows.add(List.of(meta(item, "workspace"), meta(item, "name"), String.join(",", keys), meta(item, "version"),
                            meta(item, "updatedAt")));
                }
                Output.table(out, List.of("WORKSPACE", "NAME", "KEYS", "VERSION", "UPDATED"), rows);
            }
            case "nodes" -> {
                for (JsonNode item : items) {
                    JsonNode capacity = item.path("capacity");
                    JsonNode allocated = item.path("allocated");
                    rows.add(List.of(item.path("name").asString(), item.path("state").asString(),
                            allocated.path("cpu").asString() + "/" + capacity.path("cpu").asString(),
                            allocated.path("memory").asString() + "/" + capacity.path("memory").asString(),
                            allocated.path("gpu").asString() + "/" + capacity.path("gpu").asString(),
                            capacity.path("gpuModel").asString(""), item.path("instances").asString()));
                }
                Output.table(out, List.of("NAME", "STATE", "CPU", "MEMORY", "GPU", "GPU MODEL", "INSTANCES"), rows);
            }
            case "workspaces" -> {
                for (JsonNode item : items) {
                    List<String> members = new ArrayList<>();
                    item.path("spec").path("members").forEach(m -> members.add(m.asString()));
                    rows.add(List.of(meta(item, "name"), String.join(",", members), meta(item, "version")));
                }
                Output.table(out, List.of("NAME", "MEMBERS", "VERSION"), rows);
            }
            default -> {
                for (JsonNode item : items) {
                    JsonNode spec = item.path("spec");
                    rows.add(List.of(meta(item, "name"), spec.path("cpu").asString(), spec.path("memory").asString(),
                            spec.path("gpu").asString("0"), spec.path("gpuModel").asString("")));
                }
                Output.table(out, List.of("NAME", "CPU", "MEMORY", "GPU", "GPU MODEL"), rows);
            }
        }
        out.flush();
    }

    /** {workspace, name} of {@code WORKSPACE/NAME}, or of {@code NAME} with {@code -w}. */
    static String[] qualified(String type, String name, String workspace) {
        int slash = name.indexOf('/');
        if (slash > 0 && workspace == null) {
            return new String[] {name.substring(0, slash), name.substring(slash + 1)};
        }
        if (workspace == null) {
            throw new CliException(CliException.REJECTED, "name the workspace to get one " + type + ": WORKSPACE/NAME, or --workspace WORKSPACE");
        }
        return new String[] {workspace, name};
    }

    private static String meta(JsonNode item, String field) {
        return item.path("metadata").path(field).asString("");
    }

    /** Live figures, short: the dimensions that are not zero ({@code gpu=6 cpu=2 memory=2Gi}), or 0. */
    static String usage(JsonNode resources) {
        List<String> parts = new ArrayList<>();
        if (resources.path("gpu").asInt(0) > 0) {
            parts.add("gpu=" + resources.get("gpu").asInt());
        }
        for (String field : List.of("cpu", "memory")) {
            String value = resources.path(field).asString("0");
            if (!value.equals("0")) {
                parts.add(field + "=" + value);
            }
        }
        return parts.isEmpty() ? "0" : String.join(" ", parts);
    }

    private static String resources(JsonNode resources) {
        List<String> parts = new ArrayList<>();
        for (String field : List.of("cpu", "memory", "gpu")) {
            if (resources.has(field)) {
                parts.add(field + "=" + resources.get(field).asString());
            }
        }
        return String.join(" ", parts);
    }

}
