package io.slipstream.cli.command;

import io.slipstream.cli.ClientOptions;
import io.slipstream.cli.Output;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import tools.jackson.databind.JsonNode;

/** {@code slipstream usage}: GPU- and CPU-hours from {@code GET /api/v1/usage}, as a table, CSV or JSON. */
@Command(name = "usage", description = {"Show GPU- and CPU-hours in quota, borrowed, lent and lost to preemption, the CPU-hours",
        "instances used as measured, and time queued, by workspace, quota, user or job, over a window (default: the last 7 days)."})
public final class UsageCommand implements Callable<Integer> {
    /** What a report is grouped by: the API's names. */
    public enum By {
        workspace,
        quota,
        user,
        job
    }

    /** How it is printed. */
    public enum Format {
        table,
        csv,
        json
    }

    @Spec
    CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Option(names = "--since", paramLabel = "TIME", description = "Start: 2026-11-01T00:00:00Z or a duration ago (7d, 12h). Default: 7 days before --until.")
    String since;

    @Option(names = "--until", paramLabel = "TIME", description = "End (not included): a time or a duration ago. Default: now.")
    String until;

    @Option(names = "--by", defaultValue = "workspace", paramLabel = "GROUPING", description = "workspace, quota, user or job (default: ${DEFAULT-VALUE}).")
    By by;

    @Option(names = "--workspace", paramLabel = "WORKSPACE", description = "Only this workspace.")
    String workspace;

    @Option(names = {"-o", "--output"}, defaultValue = "table", paramLabel = "FORMAT", description = "table, csv or json (default: ${DEFAULT-VALUE}).")
    Format format;

    @Option(names = "--no-headers", description = "Leave out the header line (table and csv).")
    boolean noHeaders;

    @Override
    public Integer call() {
        Map<String, String> query = new LinkedHashMap<>();
        query.put("by", by.name());
        if (since != null) {
            query.put("since", since);
        }
        if (until != null) {
            query.put("until", until);
        }
        if (workspace != null) {
            query.put("workspace", workspace);
        }
        JsonNode report = client.client().get("/api/v1/usage", query);
        PrintWriter out = spec.commandLine().getOut();
        if (format == Format.json) {
            Output.print(out, report, Output.Format.json);
            return 0;
        }
        List<List<String>> rows = new ArrayList<>();
        for (JsonNode line : report.get("lines")) {
            rows.add(row(line, by, format == Format.table));
        }
        if (format == Format.csv) {
            if (!noHeaders) {
                out.println(String.join(",", header(by, false)));
            }
            rows.forEach(row -> out.println(String.join(",", row.stream().map(UsageCommand::csv).toList())));
        } else {
            List<String> total = row(report.get("total"), by, true);
            for (int key = 0; key < keyColumns(by, true).size(); key++) {
                total.set(key, key == 0 ? "TOTAL" : ""); // not a line of runs without a quota (or of schedules)
            }
            rows.add(total);
            out.println("GPU- and CPU-hours from " + report.get("since").asString() + " until " + report.get("until").asString() + ":");
            Output.table(out, header(by, true), rows, !noHeaders);
        }
        out.flush();
        return 0;
    }

    /** The columns: the grouping's key, then the hours (a table says less about CPU: its width matters). */
    static List<String> header(By by, boolean table) {
        List<String> header = new ArrayList<>(keyColumns(by, table));
        if (table) {
            header.addAll(List.of("GPU-H IN QUOTA", "GPU-H BORROWED", "GPU-H LENT", "GPU-H LOST", "CPU-H", "CPU-H USED", "QUEUED-H"));
        } else {
            // A new column goes last, so that a spreadsheet that reads the older ones by position still reads them.
            header.addAll(List.of("gpu_hours_in_quota", "gpu_hours_borrowed", "gpu_hours_lent", "gpu_hours_lost_to_preemption",
                    "cpu_hours_in_quota", "cpu_hours_borrowed", "cpu_hours_lent", "cpu_hours_lost_to_preemption", "queued_hours", "queued_gpu_hours",
                    "cpu_hours_measured"));
        }
        return header;
    }

    private static List<String> keyColumns(By by, boolean table) {
        List<String> columns = switch (by) {
            case workspace -> List.of("workspace");
            case quota -> List.of("workspace", "quota");
            case user -> List.of("user");
            case job -> List.of("workspace", "job");
        };
        return table ? columns.stream().map(c -> c.toUpperCase(Locale.ROOT)).toList() : columns;
    }

    static List<String> row(JsonNode line, By by, boolean table) {
        List<String> row = new ArrayList<>();
        for (String key : keyColumns(by, false)) {
            // By quota, runs without one; by user, the runs schedules started.
            row.add(line.has(key) ? line.get(key).asString() : table ? "(" + (key.equals("user") ? "schedule" : "none") + ")" : "");
        }
        JsonNode gpu = line.get("gpuHours");
        JsonNode cpu = line.get("cpuHours");
        JsonNode queued = line.get("queued");
        if (table) {
            double cpuHours = cpu.get("inQuota").asDouble() + cpu.get("borrowed").asDouble();
            row.addAll(List.of(hours(gpu, "inQuota", 2), hours(gpu, "borrowed", 2), hours(gpu, "lent", 2), hours(gpu, "lostToPreemption", 2),
                    String.format(Locale.ROOT, "%.2f", cpuHours), hours(line, "measuredCpuHours", 2), hours(queued, "hours", 2)));
        } else {
            for (JsonNode hours : List.of(gpu, cpu)) {
                for (String field : List.of("inQuota", "borrowed", "lent", "lostToPreemption")) {
                    row.add(hours(hours, field, 6));
                }
            }
            row.add(hours(queued, "hours", 6));
            row.add(hours(queued, "gpuHours", 6));
            row.add(hours(line, "measuredCpuHours", 6));
        }
        return row;
    }

    /** A figure; 0 where the server does not give it (measuredCpuHours, before servers measured). */
    private static String hours(JsonNode node, String field, int decimals) {
        return String.format(Locale.ROOT, "%." + decimals + "f", node.path(field).asDouble(0));
    }

    /** A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break; a leading formula sign defused. */
    static String csv(String field) {
        String safe = !field.isEmpty() && "=+-@".indexOf(field.charAt(0)) >= 0 && !field.matches("-?[0-9.]+") ? "'" + field : field;
        if (safe.contains(",") || safe.contains("\"") || safe.contains("\n") || safe.contains("\r")) {
            return "\"" + safe.replace("\"", "\"\"") + "\"";
        }
        return safe;
    }
}
