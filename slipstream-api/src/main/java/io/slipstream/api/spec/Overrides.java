package io.slipstream.api.spec;

import io.slipstream.api.codec.Json;
import io.slipstream.api.problem.Problems;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Per-run changes to a job, as {@code path=value}: {@code nodeGroups.worker.replicas=8},
 * {@code nodeGroups.worker.env.LR=0.1}, {@code priority=5}, {@code maxRuntime=2h}. Paths name a node group by its name.
 * Values are read as YAML ({@code 8} a number, {@code [a, b]} a list, {@code true} a boolean), except under {@code env},
 * where they stay strings. The result is validated like any job: a bad override is rejected with the override's key.
 */
public final class Overrides {
    private Overrides() {
    }

    /** The job with the overrides applied; throws with every problem, each named by its override's key. */
    public static JobSpec apply(Document<JobSpec> job, Map<String, String> overrides) {
        if (overrides.isEmpty()) {
            return job.spec();
        }
        ObjectNode tree = SpecWriter.write(job);
        ObjectNode spec = (ObjectNode) tree.get("spec");
        Problems problems = new Problems();
        overrides.forEach((key, value) -> {
            String problem = set(spec, key, value);
            if (problem != null) {
                problems.add("overrides." + key, problem);
            }
        });
        problems.throwIfAny("the overrides are invalid");
        Problems invalid = new Problems();
        Document<?> result = SpecReader.read(tree, SpecReader.Mode.USER, "", invalid);
        if (!invalid.isEmpty()) {
            Problems named = new Problems();
            invalid.list().forEach(p -> named.add("overrides." + keyFor(p.field(), job.spec(), overrides), p.message()));
            named.throwIfAny("the job with these overrides is invalid");
        }
        return (JobSpec) result.spec();
    }

    /** Sets one value; returns why it cannot be set, or {@code null}. */
    private static String set(ObjectNode spec, String key, String value) {
        String[] path = key.split("\\.");
        if (key.isBlank() || path.length == 0) {
            return "is not a path";
        }
        ObjectNode target = spec;
        int i = 0;
        if (path[0].equals("nodeGroups")) {
            if (path.length < 3) {
                return "name a node group and a field: nodeGroups.<group>.<field>";
            }
            target = null;
            for (JsonNode group : (ArrayNode) spec.get("nodeGroups")) {
                if (group.path("name").asString("").equals(path[1])) {
                    target = (ObjectNode) group;
                }
            }
            if (target == null) {
                return "the job has no node group '" + path[1] + "'";
            }
            i = 2;
            if (path[2].equals("name")) {
                return "a node group's name cannot be overridden";
            }
        }
        for (; i < path.length - 1; i++) {
            JsonNode next = target.get(path[i]);
            if (next == null || next.isNull()) {
                next = target.putObject(path[i]);
            }
            if (!next.isObject()) {
                return "'" + path[i] + "' has no fields to set";
            }
            target = (ObjectNode) next;
        }
        String field = path[path.length - 1];
        boolean underEnv = path.length >= 2 && path[path.length - 2].equals("env");
        if (field.equals("shape") || field.equals("resources")) {
            target.remove(field.equals("shape") ? "resources" : "shape");
        }
        if (underEnv) {
            target.put(field, value);
            return null;
        }
        try {
            JsonNode parsed = Json.yaml().readTree(value);
            target.set(field, parsed == null || parsed.isMissingNode() ? Json.mapper().nullNode() : parsed);
            return null;
        } catch (RuntimeException e) {
            return "'" + value + "' is not a value (write numbers as 8, lists as [a, b], strings as they are)";
        }
    }

    /** Which override a problem's field path ({@code spec.nodeGroups[1].maxRuntime}) comes from: the longest override path that leads to it. */
    public static String keyFor(String field, JobSpec job, Map<String, String> overrides) {
        String readable = field;
        if (field.startsWith("spec.nodeGroups[")) {
            int close = field.indexOf(']');
            int index = Integer.parseInt(field.substring("spec.nodeGroups[".length(), close));
            String name = index < job.nodeGroups().size() ? job.nodeGroups().get(index).name() : Integer.toString(index);
            readable = "nodeGroups." + name + field.substring(close + 1);
        } else if (field.startsWith("spec.")) {
            readable = field.substring("spec.".length());
        }
        String best = null;
        for (String key : overrides.keySet()) {
            if ((readable.equals(key) || readable.startsWith(key + ".")) && (best == null || key.length() > best.length())) {
                best = key;
            }
        }
        return best != null ? best : readable;
    }
}
