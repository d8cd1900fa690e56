package io.slipstream.simulator.input;

import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.FieldReader;
import io.slipstream.api.spec.IdleMode;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;

/**
 * Which CSV columns hold what, so a public trace in its own format (pod lists, per-virtual-cluster job lists)
 * replays without code. Column names are compared without case.
 *
 * @param submit          submission: seconds, or timestamps (ISO-8601, or {@code yyyy-MM-dd HH:mm:ss} in UTC) made
 *                        relative to the earliest submission; the column's first cell decides which
 * @param duration        seconds the job runs; exactly one of {@code duration} and {@code end}
 * @param end             when the job ended, in the submit column's kind; duration = end - submit
 * @param gpus            GPUs per instance, or the job's total with {@code gpusAreTotal}
 * @param gpusAreTotal    the gpus column is the job's total: split by the instances column (it must divide evenly),
 *                        else into instances of {@code gpusPerInstance} (ceil(total / it), like the ElasticFlow traces),
 *                        else one instance
 * @param instances       instances of the gang ({@code null}: 1)
 * @param gpusPerInstance with {@code gpusAreTotal} and no instances column ({@code null}: one instance)
 * @param tenant          the team; {@code tenantValues} renames values (those not in it are kept)
 * @param idleMode        {@code null}: the policy decides; with {@code idleModeValues}, every value must be in it (an
 *                        empty cell: the policy's); without, the values are the mode names
 * @param priority        {@code null}: 0
 * @param placement       where the job asks its instances to be: {@code rack}, {@code rack:Preferred},
 *                        {@code rack:Required} (a level alone: Required), empty for nowhere in particular ({@code null}:
 *                        no such column)
 * @param skipIncomplete  rows with no end time (still running when the trace was taken) or no GPUs are skipped and
 *                        counted (a warning), not errors: true for every mapping, false for the default columns
 */
public record ColumnMapping(
        String submit,
        String duration,
        String end,
        String gpus,
        boolean gpusAreTotal,
        String instances,
        Integer gpusPerInstance,
        String tenant,
        Map<String, String> tenantValues,
        String idleMode,
        Map<String, IdleMode> idleModeValues,
        String priority,
        boolean skipIncomplete,
        String placement,
        String minInstances) {
    /** The simulator's own columns: {@code submit_time, duration, tenant, gpus, instances, priority, idle_mode, placement, min_instances}. */
    public static final ColumnMapping DEFAULT = new ColumnMapping("submit_time", "duration", null, "gpus", false, "instances", null, "tenant", Map.of(),
            "idle_mode", Map.of(), "priority", false, "placement", "min_instances");

    /** A mapping without a minimum column. */
    public ColumnMapping(String submit, String duration, String end, String gpus, boolean gpusAreTotal, String instances, Integer gpusPerInstance,
            String tenant, Map<String, String> tenantValues, String idleMode, Map<String, IdleMode> idleModeValues, String priority,
            boolean skipIncomplete, String placement) {
        this(submit, duration, end, gpus, gpusAreTotal, instances, gpusPerInstance, tenant, tenantValues, idleMode, idleModeValues, priority,
                skipIncomplete, placement, null);
    }

    public ColumnMapping {
        tenantValues = Map.copyOf(tenantValues);
        idleModeValues = Map.copyOf(idleModeValues);
    }

    /** A mapping without a placement column. */
    public ColumnMapping(String submit, String duration, String end, String gpus, boolean gpusAreTotal, String instances, Integer gpusPerInstance,
            String tenant, Map<String, String> tenantValues, String idleMode, Map<String, IdleMode> idleModeValues, String priority,
            boolean skipIncomplete) {
        this(submit, duration, end, gpus, gpusAreTotal, instances, gpusPerInstance, tenant, tenantValues, idleMode, idleModeValues, priority,
                skipIncomplete, null);
    }

    /** The columns that must be in the header, with the mapping field that names each. */
    List<Map.Entry<String, String>> requiredColumns() {
        List<Map.Entry<String, String>> required = new java.util.ArrayList<>();
        required.add(Map.entry("submit", submit));
        required.add(duration != null ? Map.entry("duration", duration) : Map.entry("end", end));
        required.add(Map.entry("gpus", gpus));
        required.add(Map.entry("tenant", tenant));
        if (this != DEFAULT) {
            // The default's optional columns may be absent; a mapping's are named on purpose.
            if (instances != null) {
                required.add(Map.entry("instances", instances));
            }
            if (idleMode != null) {
                required.add(Map.entry("idleMode", idleMode));
            }
            if (priority != null) {
                required.add(Map.entry("priority", priority));
            }
            if (placement != null) {
                required.add(Map.entry("placement", placement));
            }
            if (minInstances != null) {
                required.add(Map.entry("minInstances", minInstances));
            }
        }
        return required;
    }

    /**
     * {@code trace.columns}: which column holds what (see {@link ColumnMapping}). Every problem is added with its path;
     * {@code null} when there was one.
     */
    static ColumnMapping read(FieldReader reader) {
        Problems problems = reader.problems();
        int before = problems.list().size();
        String submit = reader.string("submit", true, 128);
        String duration = reader.string("duration", false, 128);
        String end = reader.string("end", false, 128);
        String gpus = reader.string("gpus", true, 128);
        String gpusAre = reader.string("gpusAre", false, 16);
        String instances = reader.string("instances", false, 128);
        Long perInstance = reader.integer("gpusPerInstance", false, 1, CsvTrace.MAX_GPUS_PER_INSTANCE);
        String tenant = reader.string("tenant", true, 128);
        Map<String, String> tenantValues = new java.util.HashMap<>();
        List<Map.Entry<String, JsonNode>> tenantEntries = reader.entries("tenantValues", false, 10_000);
        if (tenantEntries != null) {
            tenantEntries.forEach(e -> {
                String value = reader.text(reader.pathOf("tenantValues") + "." + e.getKey(), e.getValue(), 128);
                if (value != null) {
                    tenantValues.put(e.getKey(), value);
                }
            });
        }
        String idleMode = reader.string("idleMode", false, 128);
        Map<String, IdleMode> idleValues = new java.util.HashMap<>();
        List<Map.Entry<String, JsonNode>> idleEntries = reader.entries("idleModeValues", false, 1_000);
        if (idleEntries != null) {
            for (Map.Entry<String, JsonNode> e : idleEntries) {
                String path = reader.pathOf("idleModeValues") + "." + e.getKey();
                String value = reader.text(path, e.getValue(), 32);
                IdleMode mode = null;
                for (IdleMode candidate : IdleMode.values()) {
                    if (candidate.name().equals(value)) {
                        mode = candidate;
                    }
                }
                if (mode != null) {
                    idleValues.put(e.getKey(), mode);
                } else if (value != null) {
                    problems.add(path, "must be one of Disabled, Acceptable, OnlyIdle, is '" + value + "'");
                }
            }
        }
        String priority = reader.string("priority", false, 128);
        String placement = reader.string("placement", false, 128);
        String minInstances = reader.string("minInstances", false, 128);
        reader.finish();
        if ((duration == null) == (end == null)) {
            problems.add(reader.path(), "must name exactly one of duration (a column of seconds) or end (a column of end times)");
        }
        if (gpusAre != null && !gpusAre.equals("perInstance") && !gpusAre.equals("total")) {
            problems.add(reader.pathOf("gpusAre"), "must be perInstance or total, is '" + gpusAre + "'");
        }
        boolean total = "total".equals(gpusAre);
        if (perInstance != null && !total) {
            problems.add(reader.pathOf("gpusPerInstance"), "splits a total: needs gpusAre: total");
        }
        if (perInstance != null && instances != null) {
            problems.add(reader.pathOf("gpusPerInstance"), "give either an instances column or gpusPerInstance, not both");
        }
        if (!idleValues.isEmpty() && idleMode == null) {
            problems.add(reader.pathOf("idleModeValues"), "maps the values of the idleMode column: name it too");
        }
        if (!tenantValues.isEmpty() && tenant == null) {
            problems.add(reader.pathOf("tenantValues"), "maps the values of the tenant column: name it too");
        }
        if (problems.list().size() > before) {
            return null;
        }
        return new ColumnMapping(submit, duration, end, gpus, total, instances, perInstance == null ? null : perInstance.intValue(), tenant, tenantValues,
                idleMode, idleValues, priority, true, placement, minInstances);
    }
}
