package io.slipstream.executor.slurm;

import io.slipstream.api.label.Labels;
import io.slipstream.api.spec.Names;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.NodeInfo;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * One node of the partition as {@code sinfo} describes it: what Slipstream may place on it, where instances reach it,
 * and whether Slurm lets jobs start there now.
 *
 * @param info     its name, CPUs, memory, GPUs (its {@code gpu} GRES) and features (as labels)
 * @param address  its {@code NodeAddr}
 * @param hostname its {@code NodeHostName}
 * @param state    Slurm's state of it, as {@code sinfo %T} says ({@code idle}, {@code mixed}, {@code drained}, {@code down*})
 * @param reason   why an administrator or Slurm took it out ({@code null}: none)
 */
record SlurmNode(NodeInfo info, String address, String hostname, String state, String reason) {
    /** The label each feature of a node becomes, with the value {@code true}: {@code feature.slurm.slipstream.io/ib}. */
    static final String FEATURE_LABEL = "feature.slurm.slipstream.io/";
    /**
     * The states in which Slurm starts jobs on a node. A suffix says more and each keeps jobs off ({@code *} not responding,
     * {@code ~} powered down, {@code #} powering up, {@code %} powering down, {@code !} to be powered down, {@code @} to be
     * rebooted, {@code ^} rebooting, {@code $} in a maintenance reservation); drained, draining, down, failing, reserved
     * and every other state do too.
     */
    private static final Set<String> PLACEABLE = Set.of("idle", "mixed", "allocated", "completing", "planned");

    /** The fields {@link #parse} reads, in {@code sinfo --format} syntax: '|' apart, the reason (free text) last. */
    static final String SINFO_FORMAT = "%N|%c|%m|%G|%f|%T|%o|%n|%E";

    String name() {
        return info.name();
    }

    /** The same node with {@code more} labels besides its features' (its place in Slurm's topology). */
    SlurmNode withLabels(Map<String, String> more) {
        if (more.isEmpty()) {
            return this;
        }
        Map<String, String> labels = new java.util.TreeMap<>(info.labels());
        labels.putAll(more);
        return new SlurmNode(new NodeInfo(info.name(), info.capacity(), info.gpuIds(), labels, info.gpuDevices(), info.cpuset()), address,
                hostname, state, reason);
    }

    /** Whether Slurm would start a job there now. */
    boolean placeable() {
        return PLACEABLE.contains(state);
    }

    /** Why no instance may be placed on it, or {@code null} when one may. */
    String unavailable() {
        if (placeable()) {
            return null;
        }
        return "Slurm has node " + name() + " " + state + (reason == null ? "" : " (" + reason + ")");
    }

    /**
     * One line of {@code sinfo --Node --format=}{@link #SINFO_FORMAT}, or {@code null} (with {@code why} told) for a
     * node Slipstream cannot name: Slipstream's node names are DNS labels.
     *
     * @param gpuModel the model of GPUs whose GRES has no type
     */
    static SlurmNode parse(String line, String gpuModel, java.util.function.Consumer<String> why) {
        String[] fields = line.split("\\|", 9);
        if (fields.length < 9) {
            throw new IllegalArgumentException("not a line of sinfo --format=" + SINFO_FORMAT + ": " + line);
        }
        String name = fields[0].trim();
        String problem = Names.dnsLabelProblem(name);
        if (problem != null) {
            why.accept("node " + name + " of the partition is left out: Slipstream names nodes with DNS labels (" + problem + ")");
            return null;
        }
        long cpus = Long.parseLong(fields[1].trim());
        long memoryMiB = Long.parseLong(fields[2].trim().replaceAll("\\+$", ""));
        Gpus gpus = Gpus.of(fields[3].trim(), gpuModel);
        Resources capacity = new Resources(cpus * 1000, memoryMiB << 20, gpus.count(), gpus.count() == 0 ? null : gpus.model());
        Map<String, String> labels = new LinkedHashMap<>();
        for (String feature : list(fields[4])) {
            String key = FEATURE_LABEL + feature;
            if (Labels.keyProblem(key) == null) {
                labels.put(key, "true");
            } else {
                why.accept("feature " + feature + " of node " + name + " is not a label: " + Labels.keyProblem(key));
            }
        }
        String state = fields[5].trim().toLowerCase(Locale.ROOT);
        String reason = fields[8].trim();
        return new SlurmNode(new NodeInfo(name, capacity, null, labels), nullIfNone(fields[6].trim()), nullIfNone(fields[7].trim()), state,
                reason.isEmpty() || reason.equals("none") ? null : reason);
    }

    private static List<String> list(String field) {
        String text = field.trim();
        if (text.isEmpty() || text.equals("(null)")) {
            return List.of();
        }
        return List.of(text.split(","));
    }

    private static String nullIfNone(String text) {
        return text.isEmpty() || text.equals("(null)") ? null : text;
    }

    /**
     * The GPUs of a node's GRES ({@code gpu:a100:4(S:0-1),nic:1}): how many, and their model (the GRES type, or
     * {@code gpuModel} without one; nodes of mixed types are described by the first, with all their GPUs counted).
     */
    record Gpus(int count, String model) {
        static Gpus of(String gres, String gpuModel) {
            int count = 0;
            String model = null;
            for (String item : list(gres)) {
                String plain = item.replaceAll("\\(.*\\)$", ""); // socket affinity: (S:0-1)
                String[] parts = plain.split(":");
                if (!parts[0].equals("gpu") || parts.length < 2) {
                    continue;
                }
                String number = parts[parts.length - 1];
                if (!number.matches("\\d+")) {
                    continue; // gpu:a100 without a count is not a GRES sinfo prints
                }
                count += Integer.parseInt(number);
                if (model == null) {
                    model = parts.length >= 3 ? modelName(parts[1]) : gpuModel;
                }
            }
            return new Gpus(count, model == null ? gpuModel : model);
        }
    }

    /** {@code A100_80GB} → {@code a100-80gb}: the way quotas and shapes name models. */
    static String modelName(String type) {
        return type.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("^-|-$", "");
    }
}
