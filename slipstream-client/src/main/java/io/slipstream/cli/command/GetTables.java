package io.slipstream.cli.command;

import io.slipstream.api.wire.RunView;
import io.slipstream.cli.ApiClient;
import io.slipstream.cli.CliException;
import io.slipstream.cli.Output;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import tools.jackson.databind.JsonNode;

/** What {@code get} shows of each kind of object: the table (plain or wide) and the names ({@code -o name}). */
final class GetTables {
    record Table(List<String> header, List<List<String>> rows) {
    }

    private GetTables() {
    }

    /** The kinds whose wide table has more columns than the plain one (the others print the same table for both). */
    static final List<String> WIDER = List.of("runs", "jobs");
    /** The kinds that have labels: {@code --show-labels} adds their LABELS column, as kubectl's does ({@code -o wide} has it). */
    static final List<String> LABELLED = List.of("runs", "jobs");

    /** @param one whether it shows one object asked for by name ({@code get job NAME} also shows when it runs next) */
    static Table table(String kind, List<JsonNode> items, boolean wide, boolean showLabels, boolean one) {
        Table table = table(kind, items, wide, one);
        if (!showLabels || wide || !LABELLED.contains(kind)) {
            return table;
        }
        List<String> header = new ArrayList<>(table.header());
        header.add("LABELS");
        List<List<String>> rows = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
            List<String> row = new ArrayList<>(table.rows().get(i));
            row.add(labels(kind, items.get(i)));
            rows.add(row);
        }
        return new Table(header, rows);
    }

    /** {@code k=v,k2=v2} or {@code <none>}: a run's {@code labels}, a job's {@code metadata.labels}. */
    static String labels(String kind, JsonNode item) {
        JsonNode labels = kind.equals("runs") ? item.path("labels") : item.path("metadata").path("labels");
        java.util.Map<String, String> map = new java.util.TreeMap<>();
        labels.properties().forEach(e -> map.put(e.getKey(), e.getValue().asString()));
        return io.slipstream.api.label.Labels.format(map);
    }

    static Table table(String kind, List<JsonNode> items, boolean wide) {
        return table(kind, items, wide, false);
    }

    private static Table table(String kind, List<JsonNode> items, boolean wide, boolean one) {
        List<List<String>> rows = new ArrayList<>();
        switch (kind) {
            case "runs" -> {
                for (JsonNode item : items) {
                    RunView run = ApiClient.read(item, RunView.class);
                    rows.add(wide ? Runs.wideRow(run) : Runs.row(run));
                }
                return new Table(wide ? Runs.WIDE_HEADER : Runs.HEADER, rows);
            }
            case "pending" -> {
                int order = 0;
                for (JsonNode run : items) {
                    rows.add(List.of(Integer.toString(++order), run.get("id").asString(), run.get("job").asString(), run.get("priority").asString(),
                            usage(run.get("resources")), run.get("idleResources").asString(), run.path("createdAt").asString(),
                            run.has("reason") ? run.get("reason").asString() + ": " + run.path("message").asString() : "(not scheduled yet)"));
                }
                return new Table(List.of("#", "RUN", "JOB", "PRIORITY", "ASKS", "IDLE", "CREATED", "WAITS BECAUSE"), rows);
            }
            case "leader" -> {
                for (JsonNode lease : items) {
                    rows.add(List.of(Output.text(lease, "holder"), Output.text(lease, "epoch"), Output.text(lease, "renewedAt"),
                            Output.text(lease, "expiresAt"), lease.path("expired").asBoolean() ? "expired (no replica leads now)" : "leading"));
                }
                return new Table(List.of("LEADER", "EPOCH", "RENEWED", "EXPIRES", "STATE"), rows);
            }
            case "jobs" -> {
                for (JsonNode item : items) {
                    JsonNode groups = item.path("spec").path("nodeGroups");
                    int instances = 0;
                    List<String> names = new ArrayList<>();
                    for (JsonNode group : groups) {
                        instances += group.path("replicas").asInt(1);
                        names.add(group.path("name").asString() + "(" + group.path("replicas").asInt(1) + ")");
                    }
                    JsonNode schedule = item.path("spec").path("schedule");
                    List<String> row = new ArrayList<>(List.of(meta(item, "workspace"), meta(item, "name"), meta(item, "version"), String.join(",", names),
                            Integer.toString(instances), item.path("spec").path("priority").asString("0"),
                            schedule.isMissingNode() ? "" : schedule.path("cron").asString("") + (schedule.has("timeZone")
                                    ? " " + schedule.path("timeZone").asString() : "")));
                    if (wide || one) {
                        row.add(nextRun(item, Instant.now()));
                    }
                    if (wide) {
                        row.add(labels(kind, item));
                    }
                    rows.add(row);
                }
                List<String> header = new ArrayList<>(List.of("WORKSPACE", "NAME", "VERSION", "GROUPS", "INSTANCES", "PRIORITY", "SCHEDULE"));
                if (wide || one) {
                    header.add("NEXT RUN");
                }
                if (wide) {
                    header.add("LABELS");
                }
                return new Table(header, rows);
            }
            case "quotas" -> {
                for (JsonNode item : items) {
                    JsonNode spec = item.path("spec");
                    JsonNode status = item.path("status");
                    rows.add(List.of(meta(item, "workspace"), meta(item, "name"), spec.path("type").asString(),
                            resources(spec.path("min")), spec.has("max") ? resources(spec.path("max")) : "", spec.path("parent").asString(""),
                            status.has("subtreeUsed") ? usage(status.path("subtreeUsed")) + " (tree)" : usage(status.path("used")),
                            usage(status.path("borrowed")), usage(status.path("lent")), share(spec, status),
                            status.path("fairShare").isNumber() ? String.format(Locale.ROOT, "%.2f", status.path("fairShare").asDouble()) : "-",
                            status.path("admittedRuns").asString("0"), status.path("pendingRuns").asString("0")));
                }
                return new Table(List.of("WORKSPACE", "NAME", "TYPE", "MIN", "MAX", "PARENT", "USED", "BORROWED", "LENT", "SHARE", "FAIR", "ADMITTED",
                        "PENDING"), rows);
            }
            case "pools" -> {
                for (JsonNode item : items) {
                    rows.add(List.of(item.path("name").asString(), usage(item.path("guaranteed")), usage(item.path("lendable")), usage(item.path("used")),
                            usage(item.path("borrowed")), usage(item.path("lent")), usage(item.path("pending")),
                            item.path("admittedRuns").asString("0"), item.path("pendingRuns").asString("0")));
                }
                return new Table(List.of("POOL", "GUARANTEED", "LENDABLE", "USED", "BORROWED", "LENT", "PENDING", "ADMITTED", "QUEUED"), rows);
            }
            case "secrets" -> {
                for (JsonNode item : items) {
                    List<String> keys = new ArrayList<>(item.path("spec").path("data").propertyNames());
                    rows.add(List.of(meta(item, "workspace"), meta(item, "name"), String.join(",", keys), meta(item, "version"),
                            meta(item, "updatedAt")));
                }
                return new Table(List.of("WORKSPACE", "NAME", "KEYS", "VERSION", "UPDATED"), rows);
            }
            case "nodes" -> {
                // Where each node is in the topology, when the cluster has one: block=b1,rack=r2.
                boolean placed = items.stream().anyMatch(item -> item.path("topology").size() > 0);
                for (JsonNode item : items) {
                    JsonNode capacity = item.path("capacity");
                    JsonNode allocated = item.path("allocated");
                    List<String> row = new ArrayList<>(List.of(item.path("name").asString(), item.path("state").asString(),
                            allocated.path("cpu").asString() + "/" + capacity.path("cpu").asString(),
                            allocated.path("memory").asString() + "/" + capacity.path("memory").asString(),
                            allocated.path("gpu").asString() + "/" + capacity.path("gpu").asString(),
                            capacity.path("gpuModel").asString(""), item.path("instances").asString(), enforced(item.path("enforced"))));
                    if (placed) {
                        List<String> place = new ArrayList<>();
                        item.path("topology").properties().forEach(level -> place.add(level.getKey() + "=" + level.getValue().asString()));
                        row.add(String.join(",", place));
                    }
                    row.add(item.path("reason").asString(""));
                    rows.add(row);
                }
                List<String> header = new ArrayList<>(List.of("NAME", "STATE", "CPU", "MEMORY", "GPU", "GPU MODEL", "INSTANCES", "ENFORCED"));
                if (placed) {
                    header.add("PLACE");
                }
                header.add("REASON");
                return new Table(header, rows);
            }
            case "topologies" -> {
                for (JsonNode item : items) {
                    List<String> levels = new ArrayList<>();
                    item.path("spec").path("levels").forEach(l -> levels.add(l.path("name").asString() + "(" + l.path("nodeLabel").asString() + ")"));
                    rows.add(List.of(meta(item, "name"), String.join(",", levels), meta(item, "version")));
                }
                return new Table(List.of("NAME", "LEVELS", "VERSION"), rows);
            }
            case "workspaces" -> {
                for (JsonNode item : items) {
                    List<String> members = new ArrayList<>();
                    item.path("spec").path("members").forEach(m -> members.add(m.asString()));
                    rows.add(List.of(meta(item, "name"), String.join(",", members), meta(item, "version")));
                }
                return new Table(List.of("NAME", "MEMBERS", "VERSION"), rows);
            }
            default -> {
                for (JsonNode item : items) {
                    JsonNode spec = item.path("spec");
                    rows.add(List.of(meta(item, "name"), spec.path("cpu").asString(), spec.path("memory").asString(),
                            spec.path("gpu").asString("0"), spec.path("gpuModel").asString("")));
                }
                return new Table(List.of("NAME", "CPU", "MEMORY", "GPU", "GPU MODEL"), rows);
            }
        }
    }

    /**
     * When a job runs next, as the server computed it ({@code status.nextRunAt}) and how far ahead:
     * {@code 2026-12-07T01:00:00Z (in 17h)}; {@code suspended} for a suspended schedule; empty without a schedule;
     * {@code -} where the server gave none.
     */
    static String nextRun(JsonNode job, Instant now) {
        JsonNode schedule = job.path("spec").path("schedule");
        if (!schedule.isObject()) {
            return "";
        }
        if (schedule.path("suspend").asBoolean(false)) {
            return "suspended";
        }
        String next = job.path("status").path("nextRunAt").asString("");
        if (next.isEmpty()) {
            return "-";
        }
        try {
            return next + " (in " + Output.age(now, Instant.parse(next)) + ")";
        } catch (java.time.format.DateTimeParseException e) {
            return next;
        }
    }

    /**
     * A quota's weighted share of its pool's idle capacity, to two places; {@code inf} for weight 0 while it borrows
     * (the API leaves the figure out then); {@code -} when the server gave none.
     */
    private static String share(JsonNode spec, JsonNode status) {
        JsonNode share = status.path("weightedShare");
        if (share.isNumber()) {
            return String.format(Locale.ROOT, "%.2f", share.asDouble());
        }
        return status.isObject() && spec.path("fairSharing").path("weight").isNumber() && spec.path("fairSharing").path("weight").asDouble() == 0
                && status.has("borrowed") ? "inf" : "-";
    }

    /** {@code run/ID}, {@code job/WS/NAME}, {@code workspace/NAME}...: what {@code -o name} prints, one per line. */
    static List<String> names(String kind, List<JsonNode> items) {
        List<String> names = new ArrayList<>();
        for (JsonNode item : items) {
            names.add(switch (kind) {
                case "runs" -> "run/" + item.path("id").asString();
                case "pending" -> "run/" + item.path("id").asString();
                case "jobs", "quotas", "secrets" -> kind.substring(0, kind.length() - 1) + "/" + meta(item, "workspace") + "/" + meta(item, "name");
                case "workspaces", "shapes" -> kind.substring(0, kind.length() - 1) + "/" + meta(item, "name");
                case "topologies" -> "topology/" + meta(item, "name");
                case "nodes", "pools" -> kind.substring(0, kind.length() - 1) + "/" + item.path("name").asString();
                default -> throw new CliException(CliException.REJECTED, "-o name: get " + kind + " has no names; use -o jsonpath=EXPR");
            });
        }
        return names;
    }

    static String meta(JsonNode item, String field) {
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

    /** What a node's instances are held to: {@code memory,cpu,pids,kill}, {@code none}, or {@code -} where the executor cannot say. */
    private static String enforced(JsonNode enforced) {
        if (!enforced.isArray()) {
            return "-";
        }
        List<String> names = new ArrayList<>();
        enforced.forEach(name -> names.add(name.asString()));
        return names.isEmpty() ? "none" : String.join(",", names);
    }
}
