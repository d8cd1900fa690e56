package io.slipstream.simulator.input;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.codec.DocumentParser;
import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.Durations;
import io.slipstream.api.spec.FieldReader;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.SpecReader;
import io.slipstream.scheduler.Defragmentation;
import io.slipstream.scheduler.FairSharingPreemption;
import io.slipstream.scheduler.QuotaState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;

/**
 * Reads an experiment file (YAML). Paths inside it are relative to the file's folder. Every problem is reported
 * with its field path; nothing runs unless the whole file is valid.
 *
 * <pre>
 * name: elasticflow
 * seed: 1
 * trace: {elasticflow: traces/elasticflow}          # or {csv: jobs.csv}
 * cluster: {sizeToPeakDemand: 0.65, gpusPerNode: 8}  # or a cluster file, or {nodes: [...]}, or "16 x 8"
 *   topology: [{level: block, nodes: 32}, {level: rack, nodes: 4}]   # optional, broadest first
 * quotas: {proportionalTo: gpuHours}                 # or a file of Quota documents
 * defaults: {gracePeriod: 30s, ...}                  # policy fields every policy starts from
 * policies:
 *   - {name: fixed-quotas, idleMode: Disabled}
 *   - {name: borrowing, idleMode: Acceptable, checkpoint: {interval: 30m, save: 30s}}
 * </pre>
 */
public final class ExperimentReader {
    static final int MAX_POLICIES = 16;
    static final int MAX_NODES = 1_000_000;
    static final Duration MAX_DURATION = Duration.ofDays(3650);
    private static final Pattern SHORT_CLUSTER = Pattern.compile("(\\d{1,7})\\s*(?:nodes?)?\\s*[x×*]\\s*(\\d{1,4})\\s*(?:gpus?)?",
            Pattern.CASE_INSENSITIVE);
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][-A-Za-z0-9_.+]{0,62}");

    private ExperimentReader() {
    }

    public static Experiment read(Path file) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new InvalidInputException("file", "no such file: " + file);
        } catch (IOException e) {
            throw new InvalidInputException("file", "could not read " + file + ": " + e.getMessage());
        }
        Path base = file.toAbsolutePath().getParent();
        JsonNode tree = DocumentParser.parseOne(bytes);
        Problems problems = new Problems();
        FieldReader root = FieldReader.of(tree, "", problems);
        String name = root.string("name", false, 64);
        Long seed = root.integer("seed", false, Long.MIN_VALUE, Long.MAX_VALUE);
        FieldReader traceReader = root.object("trace", true);
        JsonNode clusterNode = root.get("cluster");
        if (clusterNode == null) {
            root.missing("cluster", true);
        }
        JsonNode quotasNode = root.get("quotas");
        if (quotasNode == null) {
            root.missing("quotas", true);
        }
        FieldReader defaultsReader = root.object("defaults", false);
        List<JsonNode> policyNodes = root.array("policies", true, MAX_POLICIES);
        root.finish();
        if (policyNodes != null && policyNodes.isEmpty()) {
            problems.add("policies", "must name at least one policy");
        }
        // The trace first: deriving the cluster and the quotas needs it.
        Trace trace = traceReader == null ? null : readTrace(traceReader, base, problems);
        if (trace == null) {
            problems.throwIfAny("the experiment " + file + " is not valid"); // the rest would only repeat it
        }

        List<String> notes = new ArrayList<>();
        ClusterSpec cluster = readCluster(clusterNode, "cluster", base, trace, notes, problems);
        if (cluster != null && cluster.gpus() == 0) {
            problems.add("cluster", "has no GPUs: the jobs of a trace ask for GPUs, and utilization would be 0 of 0");
        }
        List<QuotaState> quotas = readQuotas(quotasNode, "quotas", base, trace, cluster, notes, problems);
        String quotasSource = describeQuotas(quotasNode);
        PolicyFields defaults = new PolicyFields();
        if (defaultsReader != null) {
            defaults.read(defaultsReader, false, base, trace, cluster, notes);
            defaultsReader.finish();
        }
        List<Policy> policies = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; policyNodes != null && i < policyNodes.size(); i++) {
            FieldReader reader = FieldReader.of(policyNodes.get(i), "policies[" + i + "]", problems);
            PolicyFields fields = defaults.copy();
            String policyName = reader.string("name", true, 64);
            if (policyName != null && !NAME.matcher(policyName).matches()) {
                problems.add(reader.pathOf("name"), "must be letters, digits and - _ . + (is '" + policyName + "')");
            } else if (policyName != null && !names.add(policyName)) {
                problems.add(reader.pathOf("name"), "'" + policyName + "' names two policies");
            }
            fields.read(reader, true, base, trace, cluster, notes);
            reader.finish();
            List<QuotaState> policyQuotas = fields.quotas != null ? fields.quotas : quotas;
            String source = fields.quotas != null ? fields.quotasSource : quotasSource;
            if (policyQuotas != null && trace != null) {
                checkTenants(trace, policyQuotas, reader.path(), problems);
            }
            if (policyName != null && policyQuotas != null) {
                policies.add(fields.toPolicy(policyName, policyQuotas, source));
            }
        }
        problems.throwIfAny("the experiment " + file + " is not valid");
        String experimentName = name != null ? name : file.getFileName().toString().replaceFirst("\\.ya?ml$", "");
        return new Experiment(experimentName, seed == null ? 1 : seed, trace, cluster, policies, notes);
    }

    private static Trace readTrace(FieldReader reader, Path base, Problems problems) {
        int before = problems.list().size();
        String csv = reader.string("csv", false, 4096);
        String elasticflow = reader.string("elasticflow", false, 4096);
        Long gpusPerInstance = reader.integer("gpusPerInstance", false, 1, 1024);
        FieldReader columnsReader = reader.object("columns", false);
        ColumnMapping mapping = columnsReader == null ? null : ColumnMapping.read(columnsReader);
        reader.finish();
        if (columnsReader != null && csv == null) {
            problems.add(reader.pathOf("columns"), "maps the columns of a csv trace: give csv too");
        }
        if ((csv == null) == (elasticflow == null)) {
            problems.add(reader.path(), "must name exactly one of csv (a trace file) or elasticflow (a folder of ElasticFlow raw traces)");
            return null;
        }
        if (problems.list().size() > before) {
            return null;
        }
        try {
            Trace trace = csv != null
                    ? mapping == null ? CsvTrace.read(base.resolve(csv).normalize(), reader.pathOf("csv"))
                            : CsvTrace.read(base.resolve(csv).normalize(), reader.pathOf("csv"), mapping, reader.pathOf("columns"))
                    : ElasticFlowTrace.read(base.resolve(elasticflow).normalize(), gpusPerInstance == null ? 8 : gpusPerInstance.intValue(),
                            reader.pathOf("elasticflow"));
            if (trace.jobs().isEmpty()) {
                // A replay of nothing would report zeros as if they were figures.
                problems.add(reader.pathOf(csv != null ? "csv" : "elasticflow"), "has no jobs to replay (only a header, or every row skipped)");
                return null;
            }
            return trace;
        } catch (InvalidInputException e) {
            problems.addAll(e.problems());
            return null;
        }
    }

    static ClusterSpec readCluster(JsonNode node, String path, Path base, Trace trace, List<String> notes, Problems problems) {
        if (node == null) {
            return null;
        }
        if (node.isString()) {
            Matcher shorthand = SHORT_CLUSTER.matcher(node.asString().trim());
            if (shorthand.matches()) {
                return new ClusterSpec(List.of(pool("node", Long.parseLong(shorthand.group(1)), Long.parseLong(shorthand.group(2)), null, null, null,
                        path, problems)));
            }
            Path file = base.resolve(node.asString()).normalize();
            try {
                JsonNode tree = DocumentParser.parseOne(Files.readAllBytes(file));
                return readCluster(tree, path + " (" + file.getFileName() + ")", file.getParent(), trace, notes, problems);
            } catch (NoSuchFileException e) {
                problems.add(path, "is neither 'N x GPUS' nor an existing cluster file: " + file);
            } catch (IOException e) {
                problems.add(path, "could not read " + file + ": " + e.getMessage());
            } catch (InvalidInputException e) {
                e.problems().forEach(p -> problems.add(path + (p.field().isEmpty() ? "" : "." + p.field()), p.message()));
            }
            return null;
        }
        FieldReader reader = FieldReader.of(node, path, problems);
        List<JsonNode> pools = reader.array("nodes", false, 64);
        JsonNode fraction = reader.get("sizeToPeakDemand");
        Duration peakWindowRead = SpecReader.readDuration(reader, "peakWindow", Duration.ZERO, MAX_DURATION);
        Long gpusPerNode = reader.integer("gpusPerNode", false, 1, 1024);
        String gpuModel = reader.string("gpuModel", false, 128);
        Long milliCpu = SpecReader.readCpu(reader, false, 1, 4096L * 1000);
        Long memory = SpecReader.readMemory(reader, false, 1, 64L << 40);
        List<TopologyLevel> topology = TopologyFields.readLevels(reader);
        reader.finish();
        if ((pools == null) == (fraction == null)) {
            problems.add(path, "must give either nodes (a list of node pools) or sizeToPeakDemand (a fraction of the tenants' summed peaks)");
            return null;
        }
        if (pools != null) {
            List<NodePool> list = new ArrayList<>();
            for (int i = 0; i < pools.size(); i++) {
                FieldReader poolReader = FieldReader.of(pools.get(i), path + ".nodes[" + i + "]", problems);
                String name = poolReader.string("name", false, 32);
                Long count = poolReader.integer("count", true, 1, MAX_NODES);
                Long gpus = poolReader.integer("gpus", true, 0, 1024);
                String model = poolReader.string("gpuModel", false, 128);
                Long cpu = SpecReader.readCpu(poolReader, false, 1, 4096L * 1000);
                Long bytes = SpecReader.readMemory(poolReader, false, 1, 64L << 40);
                poolReader.finish();
                if (name != null && !name.matches("[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?")) {
                    problems.add(poolReader.pathOf("name"), "must be lowercase letters, digits and '-' (is '" + name + "')");
                }
                if (count != null && gpus != null) {
                    list.add(pool(name != null ? name : "pool" + i, count, gpus, model, cpu, bytes, poolReader.path(), problems));
                }
            }
            return list.isEmpty() ? null : new ClusterSpec(list, topology);
        }
        if (!fraction.isNumber() || !(fraction.asDouble() > 0) || fraction.asDouble() > 10) {
            problems.add(path + ".sizeToPeakDemand", "must be a number above 0 and at most 10, not " + FieldReader.describe(fraction));
            return null;
        }
        if (trace == null || trace.jobs().isEmpty()) {
            problems.add(path + ".sizeToPeakDemand", "needs a trace with jobs");
            return null;
        }
        Duration peakWindow = peakWindowRead == null ? Duration.ZERO : peakWindowRead;
        int perNode = gpusPerNode == null ? 8 : gpusPerNode.intValue();
        long peaks = trace.peakGpusByTenant(peakWindow.toMillis()).values().stream().mapToLong(Long::longValue).sum();
        long nodes = Math.max(1, Math.round(fraction.asDouble() * peaks / perNode));
        notes.add(String.format(Locale.ROOT, "cluster: %d nodes x %d GPUs = %.0f%% of the tenants' summed peak demands (%d GPUs, %s)",
                nodes, perNode, fraction.asDouble() * 100, peaks,
                peakWindow.isZero() ? "at any instant" : "averaged over " + Durations.format(peakWindow) + " windows"));
        return new ClusterSpec(List.of(pool("node", nodes, perNode, gpuModel, milliCpu, memory, path, problems)), topology);
    }

    private static NodePool pool(String name, long count, long gpus, String model, Long milliCpu, Long memory, String path, Problems problems) {
        if (count > MAX_NODES) {
            problems.add(path, "at most " + MAX_NODES + " nodes (is " + count + ")");
            count = MAX_NODES;
        }
        // Traces ask for GPUs only; cpu and memory default to a size that never binds.
        return new NodePool(name, (int) count, (int) gpus, model == null ? "gpu" : model, milliCpu == null ? 96_000 : milliCpu,
                memory == null ? 1L << 40 : memory);
    }

    static List<QuotaState> readQuotas(JsonNode node, String path, Path base, Trace trace, ClusterSpec cluster, List<String> notes, Problems problems) {
        if (node == null) {
            return null;
        }
        if (node.isString()) {
            try {
                return QuotaFiles.read(base.resolve(node.asString()).normalize(), path);
            } catch (InvalidInputException e) {
                problems.addAll(e.problems());
                return null;
            }
        }
        FieldReader reader = FieldReader.of(node, path, problems);
        String rule = reader.string("proportionalTo", true, 32);
        reader.finish();
        if (rule == null) {
            return null;
        }
        if (trace == null || cluster == null) {
            return null;
        }
        Map<String, Double> weights = new java.util.TreeMap<>();
        switch (rule) {
            case "gpuHours" -> weights.putAll(trace.gpuHoursByTenant());
            case "peakDemand" -> trace.peakGpusByTenant(0).forEach((t, p) -> weights.put(t, p.doubleValue()));
            case "equal" -> trace.tenants().forEach(t -> weights.put(t, 1.0));
            default -> {
                problems.add(reader.pathOf("proportionalTo"), "'" + rule + "' is not one of gpuHours, peakDemand, equal");
                return null;
            }
        }
        List<QuotaState> quotas = QuotaFiles.proportional(weights, cluster.gpus());
        StringBuilder note = new StringBuilder("quotas proportional to " + rule + " under " + QuotaFiles.SHARED_ROOT + ":");
        for (QuotaState quota : quotas) {
            if (quota.parent() != null) {
                note.append(' ').append(quota.id().toString().replace("/gpus", "")).append('=').append(quota.min().gpu());
            }
        }
        if (!notes.contains(note.toString())) {
            notes.add(note.toString());
        }
        return quotas;
    }

    private static String describeQuotas(JsonNode node) {
        if (node == null) {
            return "";
        }
        return node.isString() ? node.asString() : "proportionalTo " + node.path("proportionalTo").asString("");
    }

    private static void checkTenants(Trace trace, List<QuotaState> quotas, String path, Problems problems) {
        Set<QuotaId> ids = new HashSet<>();
        quotas.forEach(q -> ids.add(q.id()));
        for (String tenant : trace.tenants()) {
            if (!ids.contains(Policy.quotaOf(tenant))) {
                problems.add(path + ".quotas", "the trace's tenant '" + tenant + "' has no quota '" + Policy.quotaOf(tenant) + "'");
            }
        }
    }

    /** The policy fields, read over defaults. */
    private static final class PolicyFields {
        List<QuotaState> quotas;
        String quotasSource;
        IdleMode idleMode;
        Duration gracePeriod = Duration.ofSeconds(30);
        Duration checkpointInterval = Duration.ZERO;
        Duration checkpointSave = Duration.ZERO;
        boolean checkpointOnNotice;
        Duration restartOverhead = Duration.ZERO;
        Duration schedulingInterval = Duration.ofSeconds(10);
        Duration meanTimeBetweenFailures;
        Defragmentation defragmentation;
        FairSharingPreemption fairSharing = FairSharingPreemption.Never;
        PlacementRule placement;
        ElasticRule elastic;

        PolicyFields copy() {
            PolicyFields copy = new PolicyFields();
            copy.quotas = quotas;
            copy.quotasSource = quotasSource;
            copy.idleMode = idleMode;
            copy.gracePeriod = gracePeriod;
            copy.checkpointInterval = checkpointInterval;
            copy.checkpointSave = checkpointSave;
            copy.checkpointOnNotice = checkpointOnNotice;
            copy.restartOverhead = restartOverhead;
            copy.schedulingInterval = schedulingInterval;
            copy.meanTimeBetweenFailures = meanTimeBetweenFailures;
            copy.defragmentation = defragmentation;
            copy.fairSharing = fairSharing;
            copy.placement = placement;
            copy.elastic = elastic;
            return copy;
        }

        void read(FieldReader reader, boolean policy, Path base, Trace trace, ClusterSpec cluster, List<String> notes) {
            Problems problems = reader.problems();
            JsonNode quotaNode = reader.get("quotas");
            if (quotaNode != null) {
                quotas = readQuotas(quotaNode, reader.pathOf("quotas"), base, trace, cluster, notes, problems);
                quotasSource = describeQuotas(quotaNode);
            }
            if (reader.has("idleMode")) {
                idleMode = reader.enumValue("idleMode", IdleMode.class, false);
            }
            gracePeriod = duration(reader, "gracePeriod", gracePeriod, Duration.ZERO);
            FieldReader checkpoint = reader.object("checkpoint", false);
            if (checkpoint != null) {
                checkpointInterval = duration(checkpoint, "interval", checkpointInterval, Duration.ZERO);
                checkpointSave = duration(checkpoint, "save", checkpointSave, Duration.ZERO);
                Boolean onNotice = checkpoint.bool("onNotice", false);
                checkpointOnNotice = onNotice != null ? onNotice : checkpointOnNotice;
                checkpoint.finish();
            }
            restartOverhead = duration(reader, "restartOverhead", restartOverhead, Duration.ZERO);
            schedulingInterval = duration(reader, "schedulingInterval", schedulingInterval, Duration.ofMillis(1));
            FieldReader failures = reader.object("failures", false);
            if (failures != null) {
                meanTimeBetweenFailures = duration(failures, "meanTimeBetween", meanTimeBetweenFailures, Duration.ofMinutes(1));
                failures.finish();
            }
            FieldReader defrag = reader.object("defragmentation", false);
            if (defrag != null) {
                Boolean moves = defrag.bool("moves", false);
                Long perCycle = defrag.integer("maxMovesPerCycle", false, 1, 10_000);
                Duration cooldown = SpecReader.readDuration(defrag, "moveCooldown", Duration.ZERO, MAX_DURATION);
                defrag.finish();
                if (moves == null && defragmentation == null && (perCycle != null || cooldown != null)) {
                    // Bounds alone would silently move nothing.
                    problems.add(defrag.pathOf("moves"), "is needed to turn moves on (moves: true): the bounds alone move nothing");
                }
                Defragmentation current = defragmentation != null ? defragmentation : Defragmentation.DEFAULT;
                boolean on = moves != null ? moves : defragmentation != null;
                defragmentation = !on ? null : new Defragmentation(perCycle != null ? perCycle.intValue() : current.maxMovesPerCycle(),
                        cooldown != null ? cooldown : current.moveCooldown());
            }
            FieldReader fair = reader.object("fairSharing", false);
            if (fair != null) {
                FairSharingPreemption preemption = fair.enumValue("preemption", FairSharingPreemption.class, false);
                fairSharing = preemption != null ? preemption : fairSharing;
                fair.finish();
            }
            placement = TopologyFields.readRule(reader, placement, cluster, trace);
            elastic = readElastic(reader, elastic);
        }

        /** {@code elastic: {minFraction, fromTrace, worldChangePause, split}} over what the defaults said. */
        private static ElasticRule readElastic(FieldReader reader, ElasticRule current) {
            FieldReader fields = reader.object("elastic", false);
            if (fields == null) {
                return current;
            }
            Problems problems = reader.problems();
            double fraction = current == null ? 0 : current.minFraction();
            JsonNode node = fields.get("minFraction");
            if (node != null) {
                if (!node.isNumber() || !(node.asDouble() > 0) || node.asDouble() > 1) {
                    problems.add(fields.pathOf("minFraction"), "must be a number above 0 and at most 1, not " + FieldReader.describe(node));
                } else {
                    fraction = node.asDouble();
                }
            }
            Boolean fromTrace = fields.bool("fromTrace", false);
            Boolean split = fields.bool("split", false);
            Duration pause = duration(fields, "worldChangePause", current == null ? Duration.ofSeconds(30) : current.worldChangePause(), Duration.ZERO);
            fields.finish();
            boolean trace = fromTrace != null ? fromTrace : current != null && current.fromTrace();
            if (fraction == 0 && !trace) {
                problems.add(fields.path(), "needs minFraction, or fromTrace: true (the trace's min_instances column): otherwise no job is elastic");
                return current;
            }
            return new ElasticRule(fraction, trace, pause, split != null ? split : current != null && current.split());
        }

        private static Duration duration(FieldReader reader, String field, Duration current, Duration min) {
            Duration value = SpecReader.readDuration(reader, field, min, MAX_DURATION);
            return value == null ? current : value;
        }

        Policy toPolicy(String name, List<QuotaState> policyQuotas, String source) {
            // The simulator's opt-in applies to every quota: each lets its checkpointing guaranteed runs be moved.
            List<QuotaState> quotas = defragmentation == null ? policyQuotas : policyQuotas.stream().map(q -> q.withAllowMoves(true)).toList();
            return new Policy(name, quotas, source, idleMode, gracePeriod, checkpointInterval, checkpointSave, checkpointOnNotice, restartOverhead,
                    schedulingInterval, meanTimeBetweenFailures, defragmentation, fairSharing, placement, elastic);
        }
    }
}
