package io.slipstream.api.spec;

import io.slipstream.api.problem.Problems;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * Turns a parsed JSON/YAML tree into a validated {@link Document}, recording every problem with its field path.
 * Only syntax and self-consistency are checked here; references to other objects (shapes, workspaces) are
 * checked by the server, which knows them.
 */
public final class SpecReader {
    /** How much the reader accepts: what users write, or what the server stored (shapes already resolved). */
    public enum Mode {
        USER,
        STORED
    }

    static final long MAX_INSTANCE_MILLI_CPU = 4096L * 1000;
    static final long MAX_INSTANCE_MEMORY = 64L << 40; // 64Ti
    static final long MAX_INSTANCE_GPU = 64;
    static final long MAX_QUOTA_MILLI_CPU = 100_000_000L * 1000;
    static final long MAX_QUOTA_MEMORY = 1L << 60; // 1Ei
    static final long MAX_QUOTA_GPU = 10_000_000;
    static final int MAX_REPLICAS = 10_000;
    static final int MAX_NODE_GROUPS = 64;
    static final int MAX_STORAGE = 16;
    static final int MAX_PORTS = 16;
    static final int MAX_ARG_LENGTH = 128 * 1024;
    static final int MAX_ENV_VALUE_LENGTH = 128 * 1024;
    static final int MAX_SECRET_MOUNTS = 16;

    private SpecReader() {
    }

    /**
     * Reads one document. Returns {@code null} if it has problems (all of them recorded, prefixed with
     * {@code pathPrefix}, e.g. {@code "documents[1]."}).
     */
    public static Document<?> read(JsonNode tree, Mode mode, String pathPrefix, Problems problems) {
        if (tree == null || !tree.isObject()) {
            problems.add(pathPrefix.isEmpty() ? "" : pathPrefix.substring(0, pathPrefix.length() - 1),
                    "a document must be an object with apiVersion, kind, metadata and spec, not " + FieldReader.describe(tree));
            return null;
        }
        Problems local = new Problems();
        FieldReader root = FieldReader.of(tree, "", local);
        String apiVersion = root.string("apiVersion", true, 64);
        if (apiVersion != null && !apiVersion.equals(Document.API_VERSION)) {
            local.add("apiVersion", "must be " + Document.API_VERSION + " (is '" + apiVersion + "')");
        }
        Kind kind = root.enumValue("kind", Kind.class, true);
        ObjectMeta metadata = readMetadata(root.object("metadata", true), kind);
        FieldReader specReader = root.object("spec", kind != Kind.Workspace);
        root.finish();
        Spec spec = null;
        if (kind != null) {
            spec = switch (kind) {
                case Workspace -> readWorkspace(specReader);
                case Shape -> readShape(specReader);
                case Quota -> readQuota(specReader);
                case Job -> readJob(specReader, mode);
                case Secret -> readSecret(specReader);
            };
        }
        for (var problem : local.list()) {
            problems.add(pathPrefix + problem.field(), problem.message());
        }
        if (!local.isEmpty() || metadata == null || spec == null) {
            return null;
        }
        return new Document<>(metadata, spec);
    }

    private static ObjectMeta readMetadata(FieldReader meta, Kind kind) {
        if (meta == null) {
            return null;
        }
        Problems problems = meta.problems();
        String name = meta.string("name", true, 253);
        if (name != null) {
            String problem = kind == Kind.Shape ? Names.dnsSubdomainProblem(name) : Names.dnsLabelProblem(name);
            if (problem != null) {
                problems.add(meta.pathOf("name"), problem);
                name = null;
            }
        }
        String workspace = null;
        if (kind != null && kind.workspaced()) {
            workspace = meta.string("workspace", true, 63);
            if (workspace != null && Names.dnsLabelProblem(workspace) != null) {
                problems.add(meta.pathOf("workspace"), Names.dnsLabelProblem(workspace));
                workspace = null;
            }
        } else if (kind != null && meta.has("workspace")) {
            problems.add(meta.pathOf("workspace"), "must not be set: a " + kind + " is not part of a workspace");
        }
        Long version = meta.integer("version", false, 1, Long.MAX_VALUE);
        meta.finish();
        return name == null ? null : new ObjectMeta(name, workspace, version);
    }

    private static WorkspaceSpec readWorkspace(FieldReader spec) {
        List<String> members = new ArrayList<>();
        if (spec == null) {
            return new WorkspaceSpec(members);
        }
        List<JsonNode> items = spec.array("members", false, 10_000);
        if (items != null) {
            Set<String> seen = new HashSet<>();
            for (int i = 0; i < items.size(); i++) {
                String path = spec.pathOf("members") + "[" + i + "]";
                String member = spec.text(path, items.get(i), 128);
                if (member == null) {
                    continue;
                }
                String problem = Names.userNameProblem(member);
                if (problem != null) {
                    spec.problems().add(path, problem);
                } else if (!seen.add(member)) {
                    spec.problems().add(path, "'" + member + "' is listed twice");
                } else {
                    members.add(member);
                }
            }
        }
        spec.finish();
        return new WorkspaceSpec(members);
    }

    /**
     * {@code data}: key to value, both strings. Problems name the key, never the value; a value of {@code ***} (how
     * the API shows a hidden value) is refused, so a secret fetched and applied again cannot lose its values.
     */
    private static SecretSpec readSecret(FieldReader spec) {
        if (spec == null) {
            return null;
        }
        Problems problems = spec.problems();
        int before = problems.list().size();
        var entries = spec.entries("data", true, SecretSpec.MAX_KEYS);
        Map<String, SecretValue> data = new LinkedHashMap<>();
        long total = 0;
        if (entries != null) {
            for (var entry : entries) {
                String path = spec.pathOf("data") + "." + entry.getKey();
                String problem = Names.secretKeyProblem(entry.getKey());
                if (problem != null) {
                    problems.add(path, problem);
                    continue;
                }
                JsonNode value = entry.getValue();
                if (value == null || !value.isString()) {
                    problems.add(path, "must be a string (the secret's value, quoted), not " + FieldReader.describe(value));
                    continue;
                }
                String text = spec.checkString(path, value.asString(), Integer.MAX_VALUE); // NUL, lone surrogates; size below
                if (text == null) {
                    continue;
                }
                if (text.equals(SecretValue.MASK)) {
                    problems.add(path, "is " + SecretValue.MASK + ", which is how Slipstream shows a hidden value: give the value itself");
                    continue;
                }
                SecretValue secret = SecretValue.of(text);
                if (secret.utf8Length() > SecretSpec.MAX_VALUE_BYTES) {
                    problems.add(path, "must be at most " + SecretSpec.MAX_VALUE_BYTES + " bytes (is " + secret.utf8Length() + ")");
                    continue;
                }
                total += secret.utf8Length();
                data.put(entry.getKey(), secret);
            }
        }
        if (total > SecretSpec.MAX_TOTAL_BYTES) {
            problems.add(spec.pathOf("data"), "a secret's values must be at most " + SecretSpec.MAX_TOTAL_BYTES + " bytes together (are " + total + ")");
        }
        spec.finish();
        return problems.list().size() > before ? null : new SecretSpec(data);
    }

    private static ShapeSpec readShape(FieldReader spec) {
        if (spec == null) {
            return null;
        }
        Resources resources = readInstanceResources(spec);
        spec.finish();
        return resources == null ? null : new ShapeSpec(resources);
    }

    private static QuotaSpec readQuota(FieldReader spec) {
        if (spec == null) {
            return null;
        }
        QuotaType type = spec.enumValue("type", QuotaType.class, false);
        boolean typeGiven = spec.has("type");
        Resources min = readQuotaResources(spec.object("min", true), 0);
        FieldReader maxReader = spec.object("max", false);
        Resources max = maxReader == null ? null : readQuotaResources(maxReader, QuotaSpec.UNCAPPED);
        String parent = spec.string("parent", false, 127);
        if (parent != null) {
            String[] parts = parent.split("/", -1);
            for (String part : parts) {
                if (parts.length > 2 || Names.dnsLabelProblem(part) != null) {
                    spec.problems().add(spec.pathOf("parent"), "must name a quota: 'name' (same workspace) or 'workspace/name', not '" + parent + "'");
                    break;
                }
            }
        }
        Boolean overcommit = spec.bool("overcommit", false);
        WithinQuota withinQuota = spec.enumValue("withinQuota", WithinQuota.class, false);
        String gpuModel = spec.string("gpuModel", false, 128);
        QuotaType effectiveType = typeGiven ? type : QuotaType.General;
        if (effectiveType == QuotaType.Dedicated && gpuModel == null && (min == null || min.gpuModel() == null)) {
            spec.problems().add(spec.pathOf("gpuModel"), "is required for a Dedicated quota (the hardware spec it reserves)");
        }
        if (min != null && max != null) {
            if (max.milliCpu() < min.milliCpu() && maxReader.has("cpu")) {
                spec.problems().add(spec.pathOf("max.cpu"), "must be at least min.cpu");
            }
            if (max.memoryBytes() < min.memoryBytes() && maxReader.has("memory")) {
                spec.problems().add(spec.pathOf("max.memory"), "must be at least min.memory");
            }
            if (max.gpu() < min.gpu() && maxReader.has("gpu")) {
                spec.problems().add(spec.pathOf("max.gpu"), "must be at least min.gpu");
            }
        }
        spec.finish();
        if (effectiveType == null || min == null) {
            return null;
        }
        String model = gpuModel != null ? gpuModel : min.gpuModel();
        return new QuotaSpec(effectiveType, new Resources(min.milliCpu(), min.memoryBytes(), min.gpu(), model), max, parent,
                overcommit != null && overcommit, withinQuota);
    }

    /** Dimensions not given are {@code absent} (0 for a guarantee, {@link QuotaSpec#UNCAPPED} for a cap). */
    private static Resources readQuotaResources(FieldReader reader, int absent) {
        if (reader == null) {
            return null;
        }
        Long milliCpu = readCpu(reader, false, 0, MAX_QUOTA_MILLI_CPU);
        Long memory = readMemory(reader, false, 0, MAX_QUOTA_MEMORY);
        Long gpu = reader.integer("gpu", false, 0, MAX_QUOTA_GPU);
        reader.finish();
        return new Resources(milliCpu == null ? (absent == 0 ? 0 : Long.MAX_VALUE) : milliCpu,
                memory == null ? (absent == 0 ? 0 : Long.MAX_VALUE) : memory,
                gpu == null ? absent : gpu.intValue(), null);
    }

    /** cpu and memory required, gpu and gpuModel optional; sizes bounded to what one machine can have. */
    private static Resources readInstanceResources(FieldReader reader) {
        int before = reader.problems().list().size();
        Long milliCpu = readCpu(reader, true, 1, MAX_INSTANCE_MILLI_CPU);
        Long memory = readMemory(reader, true, 1, MAX_INSTANCE_MEMORY);
        Long gpu = reader.integer("gpu", false, 0, MAX_INSTANCE_GPU);
        String gpuModel = reader.string("gpuModel", false, 128);
        if (gpuModel != null && gpuModel.isBlank()) {
            reader.problems().add(reader.pathOf("gpuModel"), "must not be blank");
        }
        if (reader.problems().list().size() > before || milliCpu == null || memory == null) {
            return null;
        }
        return new Resources(milliCpu, memory, gpu == null ? 0 : gpu.intValue(), gpuModel);
    }

    /** A cpu quantity in millicores within [min, max]. */
    public static Long readCpu(FieldReader reader, boolean required, long min, long max) {
        return readQuantity(reader, "cpu", required, min, max, Quantities.CPU);
    }

    /** A memory quantity in bytes within [min, max]. */
    public static Long readMemory(FieldReader reader, boolean required, long min, long max) {
        return readQuantity(reader, "memory", required, min, max, Quantities.MEMORY);
    }

    private static Long readQuantity(FieldReader reader, String field, boolean required, long min, long max, Quantities.Kind kind) {
        JsonNode value = reader.get(field);
        if (value == null) {
            reader.missing(field, required);
            return null;
        }
        String path = reader.pathOf(field);
        if (!value.isString() && !value.isNumber()) {
            reader.problems().add(path, "must be a " + field + " quantity (" + kind.examples() + "), not " + FieldReader.describe(value));
            return null;
        }
        try {
            return checkRange(reader, path, kind.parse(value.asString()), min, max, kind.format(max));
        } catch (IllegalArgumentException e) {
            reader.problems().add(path, e.getMessage());
            return null;
        }
    }

    private static Long checkRange(FieldReader reader, String path, long value, long min, long max, String maxText) {
        if (value < min) {
            reader.problems().add(path, min <= 1 ? "must be greater than zero" : "is too small");
            return null;
        }
        if (value > max) {
            reader.problems().add(path, "must be at most " + maxText);
            return null;
        }
        return value;
    }

    private static JobSpec readJob(FieldReader spec, Mode mode) {
        if (spec == null) {
            return null;
        }
        Problems problems = spec.problems();
        int before = problems.list().size();
        Long priority = spec.integer("priority", false, -1_000_000, 1_000_000);
        String quota = spec.string("quota", false, 63);
        if (quota != null && Names.dnsLabelProblem(quota) != null) {
            problems.add(spec.pathOf("quota"), Names.dnsLabelProblem(quota) + " (a quota of the job's workspace)");
        }
        IdleMode idleResources = spec.enumValue("idleResources", IdleMode.class, false);
        if (quota == null && idleResources != null && idleResources != IdleMode.OnlyIdle) {
            problems.add(spec.pathOf("idleResources"), idleResources + " needs a quota: set spec.quota, or use OnlyIdle");
        }
        Duration grace = readDuration(spec, "preemptionGracePeriod", Duration.ZERO, Duration.ofDays(1));
        Duration maxRuntime = readDuration(spec, "maxRuntime", Duration.ofSeconds(1), JobSpec.MAX_RUNTIME);
        Boolean perAttempt = spec.bool("maxRuntimePerAttempt", false);
        ScheduleSpec schedule = readSchedule(spec.object("schedule", false));
        StartupOrder startupOrder = spec.enumValue("startupOrder", StartupOrder.class, false);
        List<StorageSpec> storage = readStorage(spec);
        FaultTolerance faultTolerance = readFaultTolerance(spec.object("faultTolerance", false));
        List<JsonNode> groups = spec.array("nodeGroups", true, MAX_NODE_GROUPS);
        List<NodeGroupSpec> nodeGroups = new ArrayList<>();
        if (groups != null) {
            if (groups.isEmpty()) {
                problems.add(spec.pathOf("nodeGroups"), "must have at least one node group");
            }
            Set<String> names = new HashSet<>();
            Set<String> storagePaths = new HashSet<>();
            storage.stream().map(StorageSpec::mountPath).filter(java.util.Objects::nonNull).forEach(storagePaths::add);
            for (int i = 0; i < groups.size(); i++) {
                FieldReader group = FieldReader.of(groups.get(i), spec.pathOf("nodeGroups") + "[" + i + "]", problems);
                NodeGroupSpec nodeGroup = readNodeGroup(group, mode, storagePaths);
                if (nodeGroup != null && !names.add(nodeGroup.name())) {
                    problems.add(group.pathOf("name"), "'" + nodeGroup.name() + "' is used by another node group");
                } else if (nodeGroup != null) {
                    nodeGroups.add(nodeGroup);
                }
            }
            if (!nodeGroups.isEmpty() && nodeGroups.size() == groups.size() && nodeGroups.stream().allMatch(g -> g.requiredSuccesses() == 0)) {
                problems.add(spec.pathOf("nodeGroups"), "at least one node group must need an instance to succeed (minSuccessReplicas >= 1)");
            }
            long total = nodeGroups.stream().mapToLong(NodeGroupSpec::replicas).sum();
            if (total > MAX_REPLICAS) {
                problems.add(spec.pathOf("nodeGroups"), "a run may have at most " + MAX_REPLICAS + " instances (has " + total + ")");
            }
        }
        spec.finish();
        if (problems.list().size() > before) {
            return null;
        }
        return new JobSpec(priority == null ? 0 : priority.intValue(), quota, idleResources, grace, maxRuntime,
                perAttempt != null && perAttempt, schedule, startupOrder, storage, faultTolerance, nodeGroups);
    }

    private static FaultTolerance readFaultTolerance(FieldReader policy) {
        if (policy == null) {
            return null;
        }
        Problems problems = policy.problems();
        int before = problems.list().size();
        FaultTolerance.RunType runType = policy.enumValue("runType", FaultTolerance.RunType.class, false);
        Long maxRestarts = policy.integer("maxRestarts", false, 0, 1000);
        Long maxPreemptions = policy.integer("maxPreemptions", false, 0, 1_000_000);
        Long maxNodeLost = policy.integer("maxNodeLostRestarts", false, 0, 1000);
        Long maxHangs = policy.integer("maxHangRestarts", false, 0, 1000);
        Duration base = FaultTolerance.DEFAULT_BACKOFF_BASE;
        Duration cap = FaultTolerance.DEFAULT_BACKOFF_CAP;
        FieldReader backoff = policy.object("backoff", false);
        if (backoff != null) {
            Duration readBase = readDuration(backoff, "base", Duration.ZERO, Duration.ofHours(1));
            Duration readCap = readDuration(backoff, "cap", Duration.ZERO, Duration.ofDays(1));
            backoff.finish();
            base = readBase == null ? base : readBase;
            cap = readCap == null ? cap : readCap;
            if (cap.compareTo(base) < 0) {
                problems.add(backoff.pathOf("cap"), "must be at least backoff.base (" + Durations.format(base) + ")");
            }
        }
        List<FaultTolerance.ExitCodeRange> exitCodes = new ArrayList<>();
        List<String> patterns = new ArrayList<>();
        FieldReader retryOn = policy.object("retryOn", false);
        if (retryOn != null) {
            List<JsonNode> codes = retryOn.array("exitCodes", false, 64);
            for (int i = 0; codes != null && i < codes.size(); i++) {
                FaultTolerance.ExitCodeRange range = exitCodeRange(codes.get(i));
                if (range == null) {
                    problems.add(retryOn.pathOf("exitCodes") + "[" + i + "]",
                            "must be an exit code (0-255) or a range like \"128-255\", not " + describeExitCode(codes.get(i)));
                } else {
                    exitCodes.add(range);
                }
            }
            List<JsonNode> regexes = retryOn.array("errorPatterns", false, 32);
            for (int i = 0; regexes != null && i < regexes.size(); i++) {
                String path = retryOn.pathOf("errorPatterns") + "[" + i + "]";
                String text = retryOn.text(path, regexes.get(i), 512);
                if (text == null) {
                    continue;
                }
                try {
                    java.util.regex.Pattern.compile(text);
                    patterns.add(text);
                } catch (java.util.regex.PatternSyntaxException e) {
                    problems.add(path, "is not a regular expression: " + e.getDescription() + " near index " + e.getIndex());
                }
            }
            retryOn.finish();
        }
        FaultTolerance.FailureAction other = policy.enumValue("otherFailures", FaultTolerance.FailureAction.class, false);
        Long sameErrorLimit = policy.integer("sameErrorLimit", false, 0, 1000);
        Duration hangTimeout = readDuration(policy, "hangTimeout", Duration.ofSeconds(1), Duration.ofDays(7));
        Duration exitHangTimeout = readDuration(policy, "exitHangTimeout", Duration.ofSeconds(1), Duration.ofDays(7));
        policy.finish();
        if (problems.list().size() > before) {
            return null;
        }
        int restarts = maxRestarts == null ? FaultTolerance.DEFAULT_MAX_RESTARTS : maxRestarts.intValue();
        return new FaultTolerance(runType, restarts, maxPreemptions == null ? null : maxPreemptions.intValue(),
                maxNodeLost == null ? FaultTolerance.DEFAULT_MAX_RESTARTS : maxNodeLost.intValue(),
                maxHangs == null ? FaultTolerance.DEFAULT_MAX_RESTARTS : maxHangs.intValue(), base, cap, exitCodes, patterns, other,
                sameErrorLimit == null ? 0 : sameErrorLimit.intValue(), hangTimeout, exitHangTimeout);
    }

    /** What an exit code that is none was: its kind, and for a number or a string its value. */
    private static String describeExitCode(JsonNode node) {
        if (node.isNumber() || node.isString()) {
            String text = node.asString();
            return FieldReader.describe(node) + " (" + (text.length() > 20 ? text.substring(0, 20) + "..." : text) + ")";
        }
        return FieldReader.describe(node);
    }

    /** {@code 137} or {@code "137"} or {@code "128-255"}; {@code null} if it is none of them. */
    private static FaultTolerance.ExitCodeRange exitCodeRange(JsonNode node) {
        if (node.isIntegralNumber()) {
            long code = node.asLong();
            return code >= 0 && code <= 255 ? new FaultTolerance.ExitCodeRange((int) code, (int) code) : null;
        }
        if (!node.isString()) {
            return null;
        }
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d{1,3})(?:-(\\d{1,3}))?").matcher(node.asString().trim());
        if (!m.matches()) {
            return null;
        }
        int from = Integer.parseInt(m.group(1));
        int to = m.group(2) == null ? from : Integer.parseInt(m.group(2));
        return from <= to && to <= 255 ? new FaultTolerance.ExitCodeRange(from, to) : null;
    }

    private static List<StorageSpec> readStorage(FieldReader spec) {
        List<JsonNode> items = spec.array("storage", false, MAX_STORAGE);
        List<StorageSpec> storage = new ArrayList<>();
        if (items == null) {
            return storage;
        }
        Set<String> names = new HashSet<>();
        Set<String> mountPaths = new HashSet<>();
        for (int i = 0; i < items.size(); i++) {
            FieldReader item = FieldReader.of(items.get(i), spec.pathOf("storage") + "[" + i + "]", spec.problems());
            int before = item.problems().list().size();
            String name = item.string("name", true, 63);
            if (name != null && Names.dnsLabelProblem(name) != null) {
                item.problems().add(item.pathOf("name"), Names.dnsLabelProblem(name));
            } else if (name != null && !names.add(name)) {
                item.problems().add(item.pathOf("name"), "'" + name + "' is used by another storage");
            }
            StorageScope scope = item.enumValue("scope", StorageScope.class, true);
            String subPath = item.string("subPath", false, 1024);
            if (subPath != null) {
                String problem = relativePathProblem(subPath);
                if (problem != null) {
                    item.problems().add(item.pathOf("subPath"), problem.replace("the instance's directory", "the workspace's storage"));
                } else {
                    subPath = Path.of(subPath).normalize().toString();
                }
            }
            String mountPath = item.string("mountPath", false, 1024);
            if (mountPath != null) {
                String problem = mountPathProblem(mountPath);
                if (problem != null) {
                    item.problems().add(item.pathOf("mountPath"), problem);
                } else if (!mountPaths.add(Path.of(mountPath).normalize().toString())) {
                    item.problems().add(item.pathOf("mountPath"), "'" + mountPath + "' is used by another storage");
                }
            }
            item.finish();
            if (item.problems().list().size() == before) {
                storage.add(new StorageSpec(name, scope, subPath, mountPath == null ? null : Path.of(mountPath).normalize().toString()));
            }
        }
        return storage;
    }

    private static String mountPathProblem(String path) {
        if (!path.startsWith("/")) {
            return "must be an absolute path in the container, like /data";
        }
        for (String segment : path.split("/")) {
            if (segment.equals("..") || segment.equals(".")) {
                return "must not contain '.' or '..' segments";
            }
        }
        if (Path.of(path).normalize().toString().equals("/")) {
            return "must not be the root directory";
        }
        return null;
    }

    private static StartupProbe readStartupProbe(FieldReader group) {
        FieldReader probe = group.object("startupProbe", false);
        if (probe == null) {
            return null;
        }
        int before = probe.problems().list().size();
        List<String> command = readCommand(probe);
        Long period = probe.integer("periodSeconds", false, 1, 3600);
        Long failures = probe.integer("failureThreshold", false, 1, 1000);
        Long delay = probe.integer("initialDelaySeconds", false, 0, 3600);
        probe.finish();
        if (probe.problems().list().size() > before || command.isEmpty()) {
            return null;
        }
        return new StartupProbe(command, period == null ? 10 : period.intValue(), failures == null ? 3 : failures.intValue(),
                delay == null ? 0 : delay.intValue());
    }

    private static ScheduleSpec readSchedule(FieldReader schedule) {
        if (schedule == null) {
            return null;
        }
        Problems problems = schedule.problems();
        int before = problems.list().size();
        String cron = schedule.string("cron", true, 256);
        String zoneText = schedule.string("timeZone", false, 64);
        ZoneId zone = ZoneId.of("UTC");
        if (zoneText != null) {
            try {
                zone = ZoneId.of(zoneText);
            } catch (java.time.DateTimeException e) {
                problems.add(schedule.pathOf("timeZone"), "'" + zoneText + "' is not a time zone (examples: UTC, Europe/Berlin, America/New_York)");
            }
        }
        if (cron != null) {
            String problem = Cron.problem(cron);
            if (problem != null) {
                problems.add(schedule.pathOf("cron"), problem);
            }
        }
        ConcurrencyPolicy policy = schedule.enumValue("concurrencyPolicy", ConcurrencyPolicy.class, false);
        Duration deadline = readDuration(schedule, "startingDeadline", Duration.ofSeconds(1), Duration.ofDays(30));
        Boolean suspend = schedule.bool("suspend", false);
        schedule.finish();
        if (problems.list().size() > before || cron == null) {
            return null;
        }
        return new ScheduleSpec(cron.trim(), zone, policy == null ? ConcurrencyPolicy.Allow : policy, deadline, suspend != null && suspend);
    }

    /** A duration within [min, max]; {@code null} when absent or invalid (the problem is recorded). */
    public static Duration readDuration(FieldReader reader, String field, Duration min, Duration max) {
        String text = reader.string(field, false, 32);
        if (text == null) {
            return null;
        }
        try {
            Duration duration = Durations.parse(text);
            if (duration.compareTo(min) < 0 || duration.compareTo(max) > 0) {
                reader.problems().add(reader.pathOf(field), "must be between " + Durations.format(min) + " and " + Durations.format(max));
                return null;
            }
            return duration;
        } catch (IllegalArgumentException e) {
            reader.problems().add(reader.pathOf(field), e.getMessage());
            return null;
        }
    }

    private static NodeGroupSpec readNodeGroup(FieldReader group, Mode mode, Set<String> storagePaths) {
        Problems problems = group.problems();
        int before = problems.list().size();
        String name = group.string("name", true, 63);
        if (name != null && Names.dnsLabelProblem(name) != null) {
            problems.add(group.pathOf("name"), Names.dnsLabelProblem(name));
        }
        Long replicas = group.integer("replicas", false, 1, MAX_REPLICAS);
        String shape = group.string("shape", false, 253);
        if (shape != null && Names.dnsSubdomainProblem(shape) != null) {
            problems.add(group.pathOf("shape"), Names.dnsSubdomainProblem(shape));
        }
        FieldReader resourcesReader = group.object("resources", false);
        Resources resources = null;
        if (resourcesReader != null) {
            resources = readInstanceResources(resourcesReader);
            resourcesReader.finish();
        }
        if (mode == Mode.USER && shape != null && resourcesReader != null) {
            problems.add(group.pathOf("resources"), "give either shape or resources, not both");
        } else if (shape == null && resourcesReader == null) {
            problems.add(group.pathOf("shape"), "either shape or resources is required");
        }
        List<String> command = readCommand(group);
        Map<String, String> env = new LinkedHashMap<>();
        Map<String, SecretRef> secretEnv = new LinkedHashMap<>();
        readEnv(group, env, secretEnv);
        List<SecretMount> secrets = readSecretMounts(group, storagePaths);
        String image = group.string("image", false, 1024);
        if (image != null && (image.isBlank() || image.chars().anyMatch(Character::isWhitespace))) {
            problems.add(group.pathOf("image"), "must be an image reference without spaces");
        }
        String workingDir = readWorkingDir(group);
        Duration maxRuntime = readDuration(group, "maxRuntime", Duration.ofSeconds(1), JobSpec.MAX_RUNTIME);
        Long minSuccess = group.integer("minSuccessReplicas", false, 0, MAX_REPLICAS);
        int count = replicas == null ? 1 : replicas.intValue();
        if (minSuccess != null && minSuccess > count) {
            problems.add(group.pathOf("minSuccessReplicas"), "must be at most replicas (" + count + ")");
        }
        StartupProbe probe = readStartupProbe(group);
        Long ports = group.integer("ports", false, 1, MAX_PORTS);
        group.finish();
        if (problems.list().size() > before) {
            return null;
        }
        return new NodeGroupSpec(name, count, shape, resources, command, env, image, workingDir, maxRuntime,
                minSuccess == null ? null : minSuccess.intValue(), probe, ports == null ? 1 : ports.intValue(), secretEnv, secrets);
    }

    private static List<String> readCommand(FieldReader group) {
        List<JsonNode> items = group.array("command", true, 4096);
        if (items == null) {
            return List.of();
        }
        String path = group.pathOf("command");
        if (items.isEmpty()) {
            group.problems().add(path, "must name the program to run");
        }
        List<String> command = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
            String itemPath = path + "[" + i + "]";
            String arg = group.text(itemPath, items.get(i), MAX_ARG_LENGTH);
            if (arg != null && i == 0 && arg.isBlank()) {
                group.problems().add(itemPath, "must name the program to run");
            }
            command.add(arg);
        }
        return command;
    }

    /**
     * {@code env}: each value exactly a string (a plain variable) or exactly {@code {secretRef: <secret>/<key>}} (its
     * value comes from a Secret of the job's workspace when the instance starts).
     */
    private static void readEnv(FieldReader group, Map<String, String> env, Map<String, SecretRef> secretEnv) {
        var entries = group.entries("env", false, 1000);
        if (entries == null) {
            return;
        }
        for (var entry : entries) {
            String path = group.pathOf("env") + "." + entry.getKey();
            String problem = Names.envNameProblem(entry.getKey());
            if (problem != null) {
                group.problems().add(path, problem);
                continue;
            }
            JsonNode value = entry.getValue();
            if (value != null && value.isObject()) {
                SecretRef ref = readSecretRef(FieldReader.of(value, path, group.problems()));
                if (ref != null) {
                    secretEnv.put(entry.getKey(), ref);
                }
                continue;
            }
            if (value == null || !value.isString()) {
                group.problems().add(path, "must be a string (quote numbers and booleans), or {secretRef: <secret>/<key>} for a value from a "
                        + "Secret, not " + FieldReader.describe(value));
                continue;
            }
            String text = readEnvValue(group, path, value);
            if (text != null) {
                env.put(entry.getKey(), text);
            }
        }
    }

    /** {@code {secretRef: "<secret>/<key>"}} and nothing else. */
    private static SecretRef readSecretRef(FieldReader reader) {
        String text = reader.string("secretRef", true, 256);
        reader.finish();
        if (text == null) {
            return null;
        }
        int slash = text.indexOf('/');
        String secret = slash < 0 ? text : text.substring(0, slash);
        String key = slash < 0 ? "" : text.substring(slash + 1);
        if (slash < 0 || Names.dnsLabelProblem(secret) != null || Names.secretKeyProblem(key) != null) {
            reader.problems().add(reader.pathOf("secretRef"), "must be <secret>/<key>: a Secret of the job's workspace and one of its keys, not '"
                    + text + "'" + (slash < 0 ? "" : Names.dnsLabelProblem(secret) != null ? " (" + Names.dnsLabelProblem(secret) + ")"
                    : " (" + Names.secretKeyProblem(key) + ")"));
            return null;
        }
        return new SecretRef(secret, key);
    }

    /** {@code secrets: [{name: hf, mountPath: /var/run/secrets/hf}]}: Secrets given to the instances as files. */
    private static List<SecretMount> readSecretMounts(FieldReader group, Set<String> storagePaths) {
        List<JsonNode> items = group.array("secrets", false, MAX_SECRET_MOUNTS);
        List<SecretMount> mounts = new ArrayList<>();
        if (items == null) {
            return mounts;
        }
        Set<String> names = new HashSet<>();
        Set<String> mountPaths = new HashSet<>();
        for (int i = 0; i < items.size(); i++) {
            FieldReader item = FieldReader.of(items.get(i), group.pathOf("secrets") + "[" + i + "]", group.problems());
            int before = item.problems().list().size();
            String name = item.string("name", true, 63);
            if (name != null && Names.dnsLabelProblem(name) != null) {
                item.problems().add(item.pathOf("name"), Names.dnsLabelProblem(name) + " (a Secret of the job's workspace)");
            } else if (name != null && !names.add(name)) {
                item.problems().add(item.pathOf("name"), "'" + name + "' is mounted twice");
            }
            String mountPath = item.string("mountPath", false, 1024);
            if (mountPath != null) {
                String problem = mountPathProblem(mountPath);
                if (problem != null) {
                    item.problems().add(item.pathOf("mountPath"), problem);
                } else if (storagePaths.contains(Path.of(mountPath).normalize().toString())) {
                    item.problems().add(item.pathOf("mountPath"), "'" + mountPath + "' is the mountPath of a storage");
                } else if (!mountPaths.add(Path.of(mountPath).normalize().toString())) {
                    item.problems().add(item.pathOf("mountPath"), "'" + mountPath + "' is used by another secret");
                }
            }
            item.finish();
            if (item.problems().list().size() == before) {
                mounts.add(new SecretMount(name, mountPath == null ? null : Path.of(mountPath).normalize().toString()));
            }
        }
        return mounts;
    }

    /** One env value: a string. Anything else (an object, a list, a number, true/false, null) is refused with its path. */
    private static String readEnvValue(FieldReader group, String path, JsonNode value) {
        return group.text(path, value, MAX_ENV_VALUE_LENGTH);
    }

    private static String readWorkingDir(FieldReader group) {
        String dir = group.string("workingDir", false, 1024);
        if (dir == null) {
            return null;
        }
        String problem = relativePathProblem(dir);
        if (problem != null) {
            group.problems().add(group.pathOf("workingDir"), problem);
            return null;
        }
        return Path.of(dir).normalize().toString();
    }

    /** Why {@code path} could leave the directory it is relative to, or {@code null} if it stays inside. */
    public static String relativePathProblem(String path) {
        if (path.isBlank()) {
            return "must not be blank";
        }
        if (path.startsWith("/") || path.startsWith("\\") || path.startsWith("~")) {
            return "must be a relative path inside the instance's directory, not '" + path + "'";
        }
        for (String segment : path.split("[/\\\\]")) {
            if (segment.equals("..")) {
                return "must not contain '..': paths stay inside the instance's directory";
            }
        }
        return null;
    }
}
