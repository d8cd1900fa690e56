package io.slipstream.cli;

import io.slipstream.api.codec.Json;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import tools.jackson.databind.JsonNode;

/** Prints what the API returned as an aligned table, JSON or YAML. */
public final class Output {
    public enum Format {
        table,
        json,
        yaml
    }

    private Output() {
    }

    public static void print(PrintWriter out, JsonNode node, Format format) {
        if (format == Format.json) {
            out.println(Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(node));
        } else {
            out.print(Json.yaml().writeValueAsString(node));
        }
        out.flush();
    }

    /** Prints rows under a header, each column as wide as its widest cell. */
    public static void table(PrintWriter out, List<String> header, List<List<String>> rows) {
        table(out, header, rows, true);
    }

    /** Prints rows, under the header if {@code withHeader} ({@code --no-headers} leaves it out, for scripts). */
    public static void table(PrintWriter out, List<String> header, List<List<String>> rows, boolean withHeader) {
        List<List<String>> all = new ArrayList<>();
        if (withHeader) {
            all.add(header);
        }
        all.addAll(rows);
        int[] widths = new int[header.size()];
        for (List<String> row : all) {
            for (int i = 0; i < row.size(); i++) {
                widths[i] = Math.max(widths[i], row.get(i) == null ? 1 : row.get(i).length());
            }
        }
        for (List<String> row : all) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.size(); i++) {
                String cell = row.get(i) == null || row.get(i).isEmpty() ? "-" : row.get(i);
                line.append(cell);
                if (i < row.size() - 1) {
                    line.append(" ".repeat(widths[i] - cell.length() + 3));
                }
            }
            out.println(line.toString().stripTrailing());
        }
    }

    /** {@code 5s}, {@code 3m}, {@code 2h}, {@code 4d}: how long ago, or how long something took. */
    public static String age(Instant from, Instant to) {
        if (from == null) {
            return "";
        }
        Duration duration = Duration.between(from, to == null ? Instant.now() : to);
        long seconds = Math.max(0, duration.getSeconds());
        if (seconds < 120) {
            return seconds + "s";
        }
        if (seconds < 7200) {
            return seconds / 60 + "m";
        }
        if (seconds < 172_800) {
            return seconds / 3600 + "h";
        }
        return seconds / 86_400 + "d";
    }

    public static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? "" : value.asString();
    }
}
