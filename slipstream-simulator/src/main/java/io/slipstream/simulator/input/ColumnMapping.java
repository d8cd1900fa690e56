package io.slipstream.simulator.input;

import io.slipstream.api.spec.IdleMode;
import java.util.List;
import java.util.Map;

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
}
