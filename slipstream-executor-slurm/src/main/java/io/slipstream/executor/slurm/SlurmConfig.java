package io.slipstream.executor.slurm;

import io.slipstream.executor.Executor;
import io.slipstream.executor.ResourceEnforcement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What of the cluster's configuration decides what ending and fencing an instance guarantee, as
 * {@code scontrol show config} says: {@code ProctrackType} (with {@code proctrack/cgroup} every process of a job is
 * found and killed, even one that left its session), {@code TaskPlugin} and cgroup.conf's {@code Constrain*} settings
 * (with {@code task/cgroup}, the job's memory, cores and devices are fenced). Slipstream sets none of these: the admin does.
 */
record SlurmConfig(Map<String, String> values) {
    static SlurmConfig parse(String output) {
        Map<String, String> values = new LinkedHashMap<>();
        for (String line : output.split("\n")) {
            int equals = line.indexOf(" = ");
            if (equals > 0) {
                values.put(line.substring(0, equals).trim(), line.substring(equals + 3).trim());
            }
        }
        return new SlurmConfig(Map.copyOf(values));
    }

    private String value(String key) {
        return values.getOrDefault(key, "").toLowerCase(Locale.ROOT);
    }

    private boolean taskCgroup() {
        return value("TaskPlugin").contains("task/cgroup");
    }

    private boolean constrains(String key) {
        return taskCgroup() && value(key).equals("yes");
    }

    /** With proctrack/cgroup every process of a job is in its cgroup and goes with it; otherwise its process tree. */
    Executor.Containment containment() {
        return value("ProctrackType").equals("proctrack/cgroup") ? Executor.Containment.EVERY_PROCESS : Executor.Containment.PROCESS_TREE;
    }

    ResourceEnforcement enforcement() {
        List<String> enforced = new ArrayList<>();
        List<String> not = new ArrayList<>();
        (constrains("ConstrainRAMSpace") ? enforced : not).add("memory");
        (constrains("ConstrainCores") ? enforced : not).add("cpu");
        (constrains("ConstrainDevices") ? enforced : not).add("devices");
        (containment() == Executor.Containment.EVERY_PROCESS ? enforced : not).add("kill");
        String how = "Slurm (" + values.getOrDefault("ProctrackType", "?") + ", " + values.getOrDefault("TaskPlugin", "?") + ")";
        String summary = how + ": " + (enforced.isEmpty() ? "nothing" : String.join(", ", enforced)) + " enforced"
                + (not.isEmpty() ? "" : "; not " + String.join(", ", not) + " (task/cgroup with cgroup.conf's ConstrainRAMSpace, ConstrainCores"
                + " and ConstrainDevices, and proctrack/cgroup, enforce them: docs/slurm.md)");
        return new ResourceEnforcement(enforced, summary);
    }
}
