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
 *   <li>{@code idle_mode}: {@code Disabled}, {@code Acceptable} or {@code OnlyIdle} (empty: the policy's);</li>
 *   <li>{@code placement}: {@code rack}, {@code rack:Preferred} or {@code rack:Required}: its instances in one domain of
 *       that level of the cluster's topology (a level alone: Required; empty: anywhere);</li>
 *   <li>{@code min_instances}: the fewest instances the job runs with, for policies whose elastic rule reads it (empty: none).</li>
 * </ul>
 * Other columns are ignored. Every bad cell is reported with its line and column.
 */
public final class CsvTrace {
    static final int MAX_JOBS = 5_000_000;
    /** The longest time a trace may span or a job may run: 1e10 seconds, as for times given in seconds. */
    static final long MAX_MILLIS = 10_000_000_000_000L;
    static final int MAX_GPUS_PER_INSTANCE = 1024;
    static final int MAX_INSTANCES = 10_000;
    private static final Pattern PLACEMENT = Pattern.compile("([a-z]([-a-z0-9]{0,30}[a-z0-9])?)(:(Required|Preferred))?");
    private static final Pattern TENANT = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(/[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)?");

    private CsvTrace() {
    }

    public static Trace read(Path file, String field) {
        return read(file, field, ColumnMapping.DEFAULT, field);
    }

    /**
     * Reads a trace through a column mapping ({@code mappingPath}: where the mapping is in the experiment, for messages
     * about it). Rows the mapping skips are counted in {@link Trace#skipped()}.
     */
    public static Trace read(Path file, String field, ColumnMapping mapping, String mappingPath) {
        List<Parsed> parsed = new ArrayList<>();
        List<io.slipstream.api.problem.Problem> problems = new ArrayList<>();
        Map<Trace.SkipReason, int[]> skipped = new java.util.EnumMap<>(Trace.SkipReason.class); // {rows, first line}
        Boolean timestamps = null;
        try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String header = reader.readLine();
            if (header == null) {
                throw new InvalidInputException(field, file + " is empty: expected a header row (" + String.join(",",
                        mapping.requiredColumns().stream().map(Map.Entry::getValue).toList()) + ",...)");
            }
            Map<String, Integer> columns = columns(header, file);
            List<io.slipstream.api.problem.Problem> headerProblems = new ArrayList<>();
            for (Map.Entry<String, String> required : mapping.requiredColumns()) {
                if (!columns.containsKey(required.getValue().toLowerCase(Locale.ROOT))) {
                    if (mapping == ColumnMapping.DEFAULT) {
                        throw new InvalidInputException(field, file + " line 1: column '" + required.getValue() + "' is missing (have: " + columns.keySet() + ")");
                    }
                    String named = mapping == ColumnMapping.DEFAULT ? "" : " (" + mappingPath + "." + required.getKey() + ")";
                    headerProblems.add(new io.slipstream.api.problem.Problem(mapping == ColumnMapping.DEFAULT ? field : mappingPath + "." + required.getKey(),
                            file + " line 1: column '" + required.getValue() + "'" + named + " is missing (have: " + new java.util.TreeSet<>(columns.keySet()) + ")"));
                }
            }
            if (!headerProblems.isEmpty()) {
                throw new InvalidInputException("the trace " + file + " does not have the columns its mapping names", headerProblems);
            }
            String line;
            int number = 1;
            while ((line = reader.readLine()) != null) {
                number++;
                if (line.isBlank()) {
                    continue;
                }
                if (parsed.size() >= MAX_JOBS) {
                    throw new InvalidInputException(field, file + ": more than " + MAX_JOBS + " jobs");
                }
                Row row = new Row(file, number, split(line), columns, problems);
                String submitText = row.cell(mapping.submit());
                if (timestamps == null && !submitText.isEmpty() && mapping != ColumnMapping.DEFAULT) {
                    timestamps = !isNumber(submitText); // the column's first cell decides: seconds or timestamps
                }
                boolean stamped = Boolean.TRUE.equals(timestamps);
                long submit = row.time(mapping.submit(), true, stamped);
                long duration;
                boolean noEnd = false;
                if (mapping.duration() != null) {
                    duration = row.seconds(mapping.duration(), true);
                } else if (row.cell(mapping.end()).isEmpty() && mapping.skipIncomplete()) {
                    noEnd = true;
                    duration = 0;
                } else {
                    long end = row.time(mapping.end(), true, stamped);
                    duration = end - submit;
                    if (!row.bad && duration < 0) {
                        row.problem(mapping.end(), "is before the submission (" + row.cell(mapping.end()) + " < " + submitText + ")");
                    } else if (!row.bad && duration > MAX_MILLIS) {
                        row.problem(mapping.end(), "is more than 1e10 seconds after the submission (" + row.cell(mapping.end()) + ", " + submitText + ")");
                    }
                }
                String tenant = row.tenant(mapping.tenant(), mapping.tenantValues());
                long gpus = row.integer(mapping.gpus(), true, 0, mapping.gpusAreTotal() ? (long) MAX_GPUS_PER_INSTANCE * MAX_INSTANCES : MAX_GPUS_PER_INSTANCE, 0);
                long instances = mapping.instances() == null ? 1 : row.integer(mapping.instances(), false, 1, MAX_INSTANCES, 1);
                long priority = mapping.priority() == null ? 0 : row.integer(mapping.priority(), false, -1_000_000, 1_000_000, 0);
                IdleMode idle = mapping.idleMode() == null ? null : row.idleMode(mapping.idleMode(), mapping.idleModeValues(), mappingPath + ".idleModeValues");
                JobPlacement placement = mapping.placement() == null ? null : row.placement(mapping.placement());
                long minInstances = mapping.minInstances() == null ? 0 : row.integer(mapping.minInstances(), false, 1, MAX_INSTANCES, 0);
                if (problems.size() > 20) {
                    break;
                }
                if (row.bad) {
                    continue;
                }
                Trace.SkipReason skip = noEnd ? Trace.SkipReason.NO_END : mapping.skipIncomplete() && gpus == 0 ? Trace.SkipReason.NO_GPUS : null;
                if (skip != null) {
                    int at = number;
                    skipped.computeIfAbsent(skip, r -> new int[] {0, at})[0]++;
                    continue;
                }
                long perInstance = gpus;
                if (mapping.gpusAreTotal()) {
                    if (mapping.instances() != null) {
                        if (gpus % instances != 0) {
                            row.problem(mapping.gpus(), "a total of " + gpus + " GPUs does not split evenly over " + instances + " instances");
                            continue;
                        }
                        perInstance = gpus / instances;
                    } else if (mapping.gpusPerInstance() != null && gpus > mapping.gpusPerInstance()) {
                        perInstance = mapping.gpusPerInstance();
                        instances = (gpus + perInstance - 1) / perInstance;
                    }
                    if (perInstance > MAX_GPUS_PER_INSTANCE || instances > MAX_INSTANCES) {
                        row.problem(mapping.gpus(), "at most " + MAX_GPUS_PER_INSTANCE + " GPUs per instance and " + MAX_INSTANCES + " instances, is " + gpus);
                        continue;
                    }
                }
                if (minInstances > instances) {
                    row.problem(mapping.minInstances(), "is more than the job's " + instances + " instances");
                    continue;
                }
                parsed.add(new Parsed(submit, duration, tenant, (int) perInstance, (int) instances, (int) priority, idle, placement, (int) minInstances));
            }
        } catch (NoSuchFileException e) {
            throw new InvalidInputException(field, "no such file: " + file);
        } catch (IOException e) {
            throw new UncheckedIOException("could not read " + file, e);
        }
        if (!problems.isEmpty()) {
            throw new InvalidInputException("the trace " + file + " has errors", problems);
        }
        // Timestamps are made relative to the earliest submission; seconds are taken as they are.
        long origin = Boolean.TRUE.equals(timestamps) ? parsed.stream().mapToLong(Parsed::submit).min().orElse(0) : 0;
        long last = parsed.stream().mapToLong(Parsed::submit).max().orElse(0);
        if (last - origin > MAX_MILLIS) {
            // One stray far-future timestamp would stretch the replay and make every figure meaningless.
            throw new InvalidInputException("the trace " + file + " has errors", List.of(new io.slipstream.api.problem.Problem(file.getFileName() + " "
                    + mapping.submit(), "submissions span more than 1e10 seconds (from " + java.time.Instant.ofEpochMilli(origin) + " to "
                    + java.time.Instant.ofEpochMilli(last) + "): is a timestamp wrong?")));
        }
        List<TraceJob> jobs = new ArrayList<>(parsed.size());
        for (Parsed p : parsed) {
            jobs.add(new TraceJob(jobs.size(), p.submit() - origin, p.duration(), p.tenant(), p.gpus(), p.instances(), p.priority(), p.idleMode(),
                    p.placement(), p.minInstances()));
        }
        List<Trace.Skipped> skips = new ArrayList<>();
        skipped.forEach((reason, counts) -> skips.add(new Trace.Skipped(reason, counts[0], counts[1])));
        return new Trace(file.toString(), jobs, skips);
    }

    private record Parsed(long submit, long duration, String tenant, int gpus, int instances, int priority, IdleMode idleMode, JobPlacement placement,
                          int minInstances) {
    }

    /** A plain decimal number (Java's parser would also take {@code 10d}, {@code 0x1p3}, {@code NaN}). */
    private static final Pattern DECIMAL = Pattern.compile("[-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?");

    private static boolean isNumber(String text) {
        return DECIMAL.matcher(text).matches();
    }

    /** Milliseconds since the epoch of an ISO-8601 timestamp (with or without an offset: UTC then) or yyyy-MM-dd HH:mm:ss. */
    static long parseTimestamp(String text) {
        try {
            return java.time.OffsetDateTime.parse(text).toInstant().toEpochMilli();
        } catch (java.time.format.DateTimeParseException e) {
            // no offset: read as UTC below
        }
        String iso = text.length() > 10 && text.charAt(10) == ' ' ? text.substring(0, 10) + 'T' + text.substring(11) : text;
        return java.time.LocalDateTime.parse(iso).toInstant(java.time.ZoneOffset.UTC).toEpochMilli();
    }

    private static Map<String, Integer> columns(String header, Path file) {
        Map<String, Integer> columns = new HashMap<>();
        List<String> names = split(header.startsWith("\uFEFF") ? header.substring(1) : header);
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i).trim().toLowerCase(Locale.ROOT);
            if (columns.putIfAbsent(name, i) != null && !name.isEmpty()) {
                // Which of the two would be meant cannot be known: say so rather than take the first.
                throw new InvalidInputException("the trace " + file + " has errors", List.of(new io.slipstream.api.problem.Problem(file.getFileName() + ":1",
                        "names the column '" + name + "' twice (columns " + (columns.get(name) + 1) + " and " + (i + 1) + ")")));
            }
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
            Integer index = columns.get(column.toLowerCase(Locale.ROOT));
            return index == null || index >= cells.size() ? "" : cells.get(index);
        }

        void problem(String column, String message) {
            bad = true;
            problems.add(new io.slipstream.api.problem.Problem(file.getFileName() + ":" + line + " " + column, message));
        }

        /** Whether the cell is empty; a problem too if it is required. */
        private boolean missing(String column, String text, boolean required) {
            if (text.isEmpty() && required) {
                problem(column, "is required");
            }
            return text.isEmpty();
        }

        long seconds(String column, boolean required) {
            String text = cell(column);
            if (missing(column, text, required)) {
                return 0;
            }
            try {
                if (!isNumber(text)) {
                    throw new NumberFormatException(text);
                }
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

        /** Seconds, or with {@code stamped} a timestamp (epoch ms then). */
        long time(String column, boolean required, boolean stamped) {
            if (!stamped) {
                return seconds(column, required);
            }
            String text = cell(column);
            if (missing(column, text, required)) {
                return 0;
            }
            try {
                return parseTimestamp(text);
            } catch (java.time.DateTimeException | ArithmeticException e) {
                // Unparsable, or a year too far out for milliseconds since 1970.
                problem(column, "must be a timestamp like the column's first (2024-03-01T09:30:00Z, 2024-03-01 09:30:00), is '" + text + "'");
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

        String tenant(String column, Map<String, String> values) {
            String raw = cell(column);
            String text = values.getOrDefault(raw, raw);
            if (text.isEmpty()) {
                problem(column, "is required");
            } else if (!TENANT.matcher(text).matches()) {
                problem(column, "must be a workspace name (lowercase letters, digits, '-') or workspace/quota" + (values.isEmpty() ? "" : " (or a key of tenantValues)")
                        + ", is '" + text + "'");
            }
            return text;
        }

        IdleMode idleMode(String column, Map<String, IdleMode> values, String valuesPath) {
            String text = cell(column);
            if (text.isEmpty()) {
                return null;
            }
            if (!values.isEmpty()) {
                IdleMode mode = values.get(text);
                if (mode == null) {
                    problem(column, "'" + text + "' is not in " + valuesPath + " (have: " + new java.util.TreeSet<>(values.keySet()) + ")");
                }
                return mode;
            }
            for (IdleMode mode : IdleMode.values()) {
                if (mode.name().equals(text)) {
                    return mode;
                }
            }
            problem(column, "must be one of Disabled, Acceptable, OnlyIdle, is '" + text + "'");
            return null;
        }

        /** {@code rack}, {@code rack:Preferred}, {@code rack:Required}, or empty (none). */
        JobPlacement placement(String column) {
            String text = cell(column);
            if (text.isEmpty()) {
                return null;
            }
            java.util.regex.Matcher matcher = PLACEMENT.matcher(text);
            if (!matcher.matches()) {
                problem(column, "must be a level of the cluster's topology, alone or with :Required or :Preferred (rack, rack:Preferred), is '" + text + "'");
                return null;
            }
            return new JobPlacement(matcher.group(1), !"Preferred".equals(matcher.group(4)));
        }
    }
}
