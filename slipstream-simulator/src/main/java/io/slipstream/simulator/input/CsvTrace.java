package io.slipstream.simulator.input;

import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.spec.IdleMode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The simulator's trace format: CSV with a header row naming the columns, in any order.
 *
 * <ul>
 *   <li>{@code submit_time}: seconds from the trace's start (decimals allowed), required;</li>
 *   <li>{@code duration}: seconds the job runs when nothing interrupts it, required;</li>
 *   <li>{@code tenant}: the team (its quota is {@code <tenant>/gpus}, or the quota id itself if it has a slash), required;</li>
 *   <li>{@code gpus}: GPUs per instance, required;</li>
 *   <li>{@code instances}: instances of the gang (default 1);</li>
 *   <li>{@code priority}: default 0;</li>
 *   <li>{@code idle_mode}: {@code Disabled}, {@code Acceptable} or {@code OnlyIdle} (empty: the policy's).</li>
 * </ul>
 * Other columns are ignored. Every bad cell is reported with its line and column.
 */
public final class CsvTrace {
    static final int MAX_JOBS = 5_000_000;
    static final int MAX_GPUS_PER_INSTANCE = 1024;
    static final int MAX_INSTANCES = 10_000;
    private static final Pattern TENANT = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(/[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)?");

    private CsvTrace() {
    }

    public static Trace read(Path file, String field) {
        List<TraceJob> jobs = new ArrayList<>();
        List<io.slipstream.api.problem.Problem> problems = new ArrayList<>();
        try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String header = reader.readLine();
            if (header == null) {
                throw new InvalidInputException(field, file + " is empty: expected a header row (submit_time,duration,tenant,gpus,...)");
            }
            Map<String, Integer> columns = columns(header);
            for (String required : List.of("submit_time", "duration", "tenant", "gpus")) {
                if (!columns.containsKey(required)) {
                    throw new InvalidInputException(field, file + " line 1: column '" + required + "' is missing (have: " + columns.keySet() + ")");
                }
            }
            String line;
            int number = 1;
            while ((line = reader.readLine()) != null) {
                number++;
                if (line.isBlank()) {
                    continue;
                }
                if (jobs.size() >= MAX_JOBS) {
                    throw new InvalidInputException(field, file + ": more than " + MAX_JOBS + " jobs");
                }
                Row row = new Row(file, number, split(line), columns, problems);
                long submit = row.seconds("submit_time", true);
                long duration = row.seconds("duration", true);
                String tenant = row.tenant();
                long gpus = row.integer("gpus", true, 0, MAX_GPUS_PER_INSTANCE, 0);
                long instances = row.integer("instances", false, 1, MAX_INSTANCES, 1);
                long priority = row.integer("priority", false, -1_000_000, 1_000_000, 0);
                IdleMode idle = row.idleMode();
                if (problems.size() > 20) {
                    break;
                }
                if (!row.bad) {
                    jobs.add(new TraceJob(jobs.size(), submit, duration, tenant, (int) gpus, (int) instances, (int) priority, idle));
                }
            }
        } catch (NoSuchFileException e) {
            throw new InvalidInputException(field, "no such file: " + file);
        } catch (IOException e) {
            throw new UncheckedIOException("could not read " + file, e);
        }
        if (!problems.isEmpty()) {
            throw new InvalidInputException("the trace " + file + " has errors", problems);
        }
        return new Trace(file.toString(), jobs);
    }

    private static Map<String, Integer> columns(String header) {
        Map<String, Integer> columns = new HashMap<>();
        List<String> names = split(header.startsWith("\uFEFF") ? header.substring(1) : header);
        for (int i = 0; i < names.size(); i++) {
            columns.putIfAbsent(names.get(i).trim().toLowerCase(Locale.ROOT), i);
        }
        return columns;
    }

    /** Splits one CSV line: commas separate, double quotes enclose a cell that holds commas ({@code ""} is a quote). */
    static List<String> split(String line) {
        List<String> cells = new ArrayList<>();
        StringBuilder cell = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted) {
                if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
                    cell.append('"');
                    i++;
                } else if (c == '"') {
                    quoted = false;
                } else {
                    cell.append(c);
                }
            } else if (c == '"') {
                quoted = true;
            } else if (c == ',') {
                cells.add(cell.toString().trim());
                cell.setLength(0);
            } else {
                cell.append(c);
            }
        }
        cells.add(cell.toString().trim());
        return cells;
    }

    /** One data row, recording a problem per bad cell. */
    private static final class Row {
        private final Path file;
        private final int line;
        private final List<String> cells;
        private final Map<String, Integer> columns;
        private final List<io.slipstream.api.problem.Problem> problems;
        boolean bad;

        Row(Path file, int line, List<String> cells, Map<String, Integer> columns, List<io.slipstream.api.problem.Problem> problems) {
            this.file = file;
            this.line = line;
            this.cells = cells;
            this.columns = columns;
            this.problems = problems;
        }

        String cell(String column) {
            Integer index = columns.get(column);
            return index == null || index >= cells.size() ? "" : cells.get(index);
        }

        void problem(String column, String message) {
            bad = true;
            problems.add(new io.slipstream.api.problem.Problem(file.getFileName() + ":" + line + " " + column, message));
        }

        long seconds(String column, boolean required) {
            String text = cell(column);
            if (text.isEmpty()) {
                if (required) {
                    problem(column, "is required");
                }
                return 0;
            }
            try {
                double seconds = Double.parseDouble(text);
                if (!(seconds >= 0) || seconds > 1e10) {
                    problem(column, "must be a number of seconds from 0 to 1e10, is '" + text + "'");
                    return 0;
                }
                return Math.round(seconds * 1000);
            } catch (NumberFormatException e) {
                problem(column, "must be a number of seconds, is '" + text + "'");
                return 0;
            }
        }

        long integer(String column, boolean required, long min, long max, long absent) {
            String text = cell(column);
            if (text.isEmpty()) {
                if (required) {
                    problem(column, "is required");
                }
                return absent;
            }
            try {
                long value = Long.parseLong(text);
                if (value < min || value > max) {
                    problem(column, "must be from " + min + " to " + max + ", is " + value);
                    return absent;
                }
                return value;
            } catch (NumberFormatException e) {
                problem(column, "must be a whole number, is '" + text + "'");
                return absent;
            }
        }

        String tenant() {
            String text = cell("tenant");
            if (text.isEmpty()) {
                problem("tenant", "is required");
            } else if (!TENANT.matcher(text).matches()) {
                problem("tenant", "must be a workspace name (lowercase letters, digits, '-') or workspace/quota, is '" + text + "'");
            }
            return text;
        }

        IdleMode idleMode() {
            String text = cell("idle_mode");
            if (text.isEmpty()) {
                return null;
            }
            for (IdleMode mode : IdleMode.values()) {
                if (mode.name().equals(text)) {
                    return mode;
                }
            }
            problem("idle_mode", "must be one of Disabled, Acceptable, OnlyIdle, is '" + text + "'");
            return null;
        }
    }
}
