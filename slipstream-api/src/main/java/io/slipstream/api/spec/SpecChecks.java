package io.slipstream.api.spec;

import io.slipstream.api.problem.Problem;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * What a schema cannot say: rules across fields (names unique, shape or resources, counts that depend on other
 * fields), and the text every string must be (no NUL, whole characters). Runs on the document as sent, beside the
 * schema, so that a user sees every problem at once; a rule looks only at fields that have no problem yet.
 */
final class SpecChecks {
    private final List<Problem> problems = new ArrayList<>();
    private final Set<String> bad = new HashSet<>();

    private SpecChecks(List<Problem> found) {
        found.forEach(p -> bad.add(p.field()));
    }

    /** NUL characters and lone surrogates, in any string of the document (they have no place in what leaves the server). */
    static List<Problem> strings(JsonNode document) {
        List<Problem> found = new ArrayList<>();
        walkStrings(document, "", found);
        return found;
    }

    private static void walkStrings(JsonNode node, String path, List<Problem> found) {
        if (node.isString()) {
            String text = node.asString();
            if (text.indexOf('\0') >= 0) {
                found.add(new Problem(path, "must not contain NUL characters"));
            } else {
                int surrogate = FieldReader.loneSurrogate(text);
                if (surrogate >= 0) {
                    found.add(new Problem(path, "must be valid Unicode: a lone surrogate (\\u" + Integer.toHexString(text.charAt(surrogate))
                            + ") is at character " + surrogate));
                }
            }
        } else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                walkStrings(node.get(i), path + "[" + i + "]", found);
            }
        } else if (node.isObject()) {
            node.properties().forEach(entry -> walkStrings(entry.getValue(), path.isEmpty() ? entry.getKey() : path + "." + entry.getKey(), found));
        }
    }

    /** The rules across fields of a document of {@code kind}; {@code found}: the problems found so far. */
    static List<Problem> check(Kind kind, JsonNode document, SpecReader.Mode mode, List<Problem> found) {
        SpecChecks checks = new SpecChecks(found);
        JsonNode spec = document.path("spec");
        if (spec.isObject()) {
            switch (kind) {
                case Workspace -> checks.workspace(spec);
                case Quota -> checks.quota(spec);
                case Job -> checks.job(spec, mode);
                case Secret -> checks.secret(spec);
                case Topology -> checks.topology(spec);
                case Shape -> {
                }
            }
        }
        return checks.problems;
    }

    private void add(String field, String message) {
        problems.add(new Problem(field, message));
        bad.add(field);
    }

    /** Whether nothing at or under {@code path} has a problem. */
    private boolean clean(String path) {
        for (String field : bad) {
            if (field.equals(path) || field.startsWith(path + ".") || field.startsWith(path + "[")) {
                return false;
            }
        }
        return true;
    }

    /** The string at {@code field} of {@code node} when it has no problem, else {@code null}. */
    private String text(JsonNode node, String path, String field) {
        JsonNode value = node.get(field);
        return value != null && value.isString() && clean(path + "." + field) ? value.asString() : null;
    }

    private void workspace(JsonNode spec) {
        JsonNode members = spec.path("members");
        Set<String> seen = new HashSet<>();
        for (int i = 0; members.isArray() && i < members.size(); i++) {
            String path = "spec.members[" + i + "]";
            if (members.get(i).isString() && clean(path) && !seen.add(members.get(i).asString())) {
                add(path, "'" + members.get(i).asString() + "' is listed twice");
            }
        }
    }

    /** A topology's level names and labels are unique: a node's place at two levels is two labels. */
    private void topology(JsonNode spec) {
        JsonNode levels = spec.path("levels");
        Set<String> names = new HashSet<>();
        Set<String> labels = new HashSet<>();
        for (int i = 0; levels.isArray() && i < levels.size(); i++) {
            String path = "spec.levels[" + i + "]";
            JsonNode level = levels.get(i);
            if (level.path("name").isString() && clean(path + ".name") && !names.add(level.path("name").asString())) {
                add(path + ".name", "'" + level.path("name").asString() + "' is a level already");
            }
            if (level.path("nodeLabel").isString() && clean(path + ".nodeLabel") && !labels.add(level.path("nodeLabel").asString())) {
                add(path + ".nodeLabel", "'" + level.path("nodeLabel").asString() + "' carries another level already");
            }
        }
    }

    private void secret(JsonNode spec) {
        long total = 0;
        for (var entry : spec.path("data").isObject() ? spec.path("data").properties() : java.util.Set.<java.util.Map.Entry<String, JsonNode>>of()) {
            if (entry.getValue().isString()) {
                total += SecretValue.of(entry.getValue().asString()).utf8Length();
            }
        }
        if (total > SecretSpec.MAX_TOTAL_BYTES && clean("spec.data")) {
            add("spec.data", "a secret's values must be at most " + SecretSpec.MAX_TOTAL_BYTES + " bytes together (are " + total + ")");
        }
    }

    private void quota(JsonNode spec) {
        if ("Dedicated".equals(text(spec, "spec", "type")) && !spec.hasNonNull("gpuModel")) {
            add("spec.gpuModel", "is required for a Dedicated quota (the hardware spec it reserves)");
        }
        JsonNode min = spec.path("min");
        JsonNode max = spec.path("max");
        for (String dimension : List.of("cpu", "memory", "gpu")) {
            Long floor = amount(min, "spec.min", dimension);
            Long cap = amount(max, "spec.max", dimension);
            if (cap != null && cap < (floor == null ? 0 : floor) && min.has(dimension)) {
                add("spec.max." + dimension, "must be at least min." + dimension);
            }
        }
        // A weight divides a pool among the quotas at one level; a General quota without a parent is alone at the top of
        // its own pool (its tree), so a weight there would do nothing: saying so beats ignoring it.
        JsonNode weight = spec.path("fairSharing").path("weight");
        if (weight.isNumber() && clean("spec.fairSharing.weight") && weight.asDouble() > 0 && weight.asDouble() < FairSharing.MIN_WEIGHT) {
            add("spec.fairSharing.weight", "must be 0 or at least " + BigDecimal.valueOf(FairSharing.MIN_WEIGHT).toPlainString() + " (is "
                    + weight.asString() + "): a smaller weight makes its share too large to compare; 0 borrows only what no other quota asks for");
        }
        boolean general = !spec.has("type") || "General".equals(text(spec, "spec", "type"));
        if (general && spec.path("fairSharing").isObject() && clean("spec.fairSharing") && !spec.hasNonNull("parent")) {
            add(spec.path("fairSharing").has("weight") ? "spec.fairSharing.weight" : "spec.fairSharing",
                    "has no effect on a General quota without a parent: it is the root of its sharing pool and shares with no other quota;"
                            + " set weights on its children (or on Dedicated quotas, which share by GPU model)");
        }
    }

    /** An amount of one dimension of resources (a quota's, a group's request or limit), when given and without a problem. */
    private Long amount(JsonNode resources, String path, String dimension) {
        JsonNode value = resources.get(dimension);
        if (value == null || value.isNull() || !clean(path + "." + dimension) || !(value.isString() || value.isNumber())) {
            return null;
        }
        return switch (dimension) {
            case "cpu" -> Quantities.parseMilliCpu(value.asString());
            case "memory" -> Quantities.parseBytes(value.asString());
            default -> value.asLong();
        };
    }

    private void job(JsonNode spec, SpecReader.Mode mode) {
        String idle = text(spec, "spec", "idleResources");
        if (!spec.hasNonNull("quota") && idle != null && !idle.equals(IdleMode.OnlyIdle.name())) {
            add("spec.idleResources", idle + " needs a quota: set spec.quota, or use OnlyIdle");
        }
        Set<String> storagePaths = new HashSet<>();
        JsonNode storage = spec.path("storage");
        Set<String> storageNames = new HashSet<>();
        for (int i = 0; storage.isArray() && i < storage.size(); i++) {
            String path = "spec.storage[" + i + "]";
            JsonNode item = storage.get(i);
            String name = text(item, path, "name");
            if (name != null && !storageNames.add(name)) {
                add(path + ".name", "'" + name + "' is used by another storage");
            }
            String mountPath = text(item, path, "mountPath");
            if (mountPath != null && !storagePaths.add(Path.of(mountPath).normalize().toString())) {
                add(path + ".mountPath", "'" + mountPath + "' is used by another storage");
            }
        }
        JsonNode faultTolerance = spec.path("faultTolerance");
        JsonNode backoff = faultTolerance.path("backoff");
        if (backoff.isObject() && clean("spec.faultTolerance.backoff")) {
            Duration base = backoff.hasNonNull("base") ? Durations.parse(backoff.get("base").asString()) : FaultTolerance.DEFAULT_BACKOFF_BASE;
            Duration cap = backoff.hasNonNull("cap") ? Durations.parse(backoff.get("cap").asString()) : FaultTolerance.DEFAULT_BACKOFF_CAP;
            if (cap.compareTo(base) < 0) {
                add("spec.faultTolerance.backoff.cap", "must be at least backoff.base (" + Durations.format(base) + ")");
            }
        }
        JsonNode groups = spec.path("nodeGroups");
        Set<String> names = new HashSet<>();
        long total = 0;
        int cleanGroups = 0;
        boolean anyNeedsSuccess = false;
        boolean anyElastic = false;
        List<String> successCounts = new ArrayList<>();
        for (int i = 0; groups.isArray() && i < groups.size(); i++) {
            String path = "spec.nodeGroups[" + i + "]";
            JsonNode group = groups.get(i);
            if (!group.isObject()) {
                continue;
            }
            boolean shape = group.hasNonNull("shape");
            boolean resources = group.hasNonNull("resources");
            if (mode == SpecReader.Mode.USER && shape && resources) {
                add(path + ".resources", "give either shape or resources, not both");
            } else if (!shape && !resources) {
                add(path + ".shape", "either shape or resources is required");
            }
            // Any number the schema let through is whole (4.0 and 4e0 are 4): checked as the value it binds to.
            int replicas = group.path("replicas").isNumber() && clean(path + ".replicas") ? group.get("replicas").asInt() : 1;
            JsonNode minSuccess = group.get("minSuccessReplicas");
            if (minSuccess != null && minSuccess.isNumber() && clean(path + ".minSuccessReplicas") && clean(path + ".replicas")
                    && minSuccess.asLong() > replicas) {
                add(path + ".minSuccessReplicas", "must be at most replicas (" + replicas + ")");
            }
            minReplicas(spec, group, path, replicas);
            JsonNode min = group.get("minReplicas");
            anyElastic |= min != null && min.isNumber() && min.asLong() < replicas;
            if (group.hasNonNull("minSuccessReplicas")) {
                successCounts.add(path + ".minSuccessReplicas");
            }
            JsonNode sliceSize = group.path("placement").get("sliceSize");
            if (sliceSize != null && sliceSize.isNumber() && clean(path + ".placement") && clean(path + ".replicas")
                    && sliceSize.asLong() > 0 && replicas % sliceSize.asLong() != 0) {
                add(path + ".placement.sliceSize", "must divide replicas (" + replicas + ") into whole slices");
            }
            secretMounts(group, path, storagePaths);
            memoryLimit(group, path);
            String name = text(group, path, "name");
            if (!clean(path)) {
                continue;
            }
            if (!names.add(name)) {
                add(path + ".name", "'" + name + "' is used by another node group");
                continue;
            }
            cleanGroups++;
            total += replicas;
            anyNeedsSuccess |= minSuccess == null || minSuccess.asLong() > 0;
        }
        if (anyElastic) { // its own group's is named at its minReplicas
            successCounts.stream().filter(field -> clean(field.replace(".minSuccessReplicas", ".minReplicas"))).forEach(field -> add(field,
                    "a run with an elastic group succeeds when every instance of its world does: minSuccessReplicas cannot be combined with it"));
        }
        if (cleanGroups > 0 && groups.isArray() && cleanGroups == groups.size() && !anyNeedsSuccess) {
            add("spec.nodeGroups", "at least one node group must need an instance to succeed (minSuccessReplicas >= 1)");
        } else if (total > SpecReader.MAX_REPLICAS && clean("spec.nodeGroups")) {
            add("spec.nodeGroups", "a run may have at most " + SpecReader.MAX_REPLICAS + " instances (has " + total + ")");
        }
    }

    /**
     * An elastic group ({@code minReplicas} below {@code replicas}) has at most its replicas, and nothing a group whose
     * size changes could not keep: an order of startup (every change of size restarts the world at once), a topology
     * placement (its extras could not be kept in one domain), a number of successes (its world is what must succeed),
     * restarts of one rank in place (a change of size restarts every rank).
     */
    private void minReplicas(JsonNode spec, JsonNode group, String path, int replicas) {
        String field = path + ".minReplicas";
        JsonNode min = group.get("minReplicas");
        // Any number the schema let through is whole: 2.0 and 1e0 are minimums too, and are checked as 2 and 1 are.
        if (min == null || !min.isNumber() || !clean(field) || !clean(path + ".replicas")) {
            return;
        }
        if (min.asLong() > replicas) {
            add(field, "must be at most replicas (" + replicas + ")");
        } else if (min.asLong() == replicas) {
            return; // rigid, as without it
        } else if (isText(spec.path("startupOrder"), StartupOrder.InOrder.name())) {
            add(field, "an elastic group cannot be started InOrder (every change of size restarts all instances at once): "
                    + "use startupOrder InParallel or leave minReplicas out");
        } else if (group.hasNonNull("placement")) {
            add(field, "an elastic group cannot have a placement (its extra instances could not be kept in one topology domain)");
        } else if (group.hasNonNull("minSuccessReplicas")) {
            add(field, "an elastic group cannot have minSuccessReplicas (the instances of its current size are what must succeed)");
        } else if (isText(spec.path("faultTolerance").path("runType"), FaultTolerance.RunType.Async.name())) {
            add(field, "an elastic run cannot be runType Async (every change of size restarts all its instances together): use Sync");
        }
    }

    private static boolean isText(JsonNode node, String text) {
        return node.isString() && node.asString().equals(text);
    }

    /** {@code limits.memory} is at least {@code resources.memory} (a group with a shape is checked where the shape is resolved). */
    private void memoryLimit(JsonNode group, String path) {
        Long limit = amount(group.path("limits"), path + ".limits", "memory");
        Long request = amount(group.path("resources"), path + ".resources", "memory");
        String problem = limit == null || request == null ? null : Limits.memoryProblem(limit, request);
        if (problem != null) {
            add(path + ".limits.memory", problem);
        }
    }

    private void secretMounts(JsonNode group, String groupPath, Set<String> storagePaths) {
        JsonNode secrets = group.path("secrets");
        Set<String> names = new HashSet<>();
        Set<String> mountPaths = new HashSet<>();
        for (int i = 0; secrets.isArray() && i < secrets.size(); i++) {
            String path = groupPath + ".secrets[" + i + "]";
            JsonNode item = secrets.get(i);
            String name = text(item, path, "name");
            if (name != null && !names.add(name)) {
                add(path + ".name", "'" + name + "' is mounted twice");
            }
            String mountPath = text(item, path, "mountPath");
            if (mountPath != null) {
                String normalized = Path.of(mountPath).normalize().toString();
                if (storagePaths.contains(normalized)) {
                    add(path + ".mountPath", "'" + mountPath + "' is the mountPath of a storage");
                } else if (!mountPaths.add(normalized)) {
                    add(path + ".mountPath", "'" + mountPath + "' is used by another secret");
                }
            }
        }
    }
}
