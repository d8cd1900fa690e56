package io.slipstream.api.spec;

import io.slipstream.api.codec.DocumentParser;
import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problem;
import io.slipstream.api.problem.Problems;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Per-run changes to a job, as {@code path=value}: {@code nodeGroups.worker.replicas=8},
 * {@code nodeGroups.worker.env.LR=0.1}, {@code priority=5}, {@code maxRuntime=2h}. Paths name a node group by its name;
 * every part of a path is a name (letters, digits, {@code -}, {@code _}). Values are read as YAML, as strictly as a
 * document ({@code 8} a number, {@code [a, b]} a list, {@code true} a boolean; no tags, aliases or duplicate keys),
 * except under {@code env}, where they stay strings. The result is validated like any job: a bad override is rejected
 * with the override's key.
 */
public final class Overrides {
    /** The most parts a path may have ({@code nodeGroups.worker.startupProbe.periodSeconds} has four). */
    public static final int MAX_PATH_PARTS = 8;
    /** The longest path that is reported whole in a problem's field. */
    private static final int MAX_REPORTED_KEY = 256;
    private static final java.util.regex.Pattern PART = java.util.regex.Pattern.compile("[A-Za-z0-9_-]{1,253}");

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
                problems.add(field(key), problem);
            }
        });
        problems.throwIfAny("the overrides are invalid");
        Problems invalid = new Problems();
        Document<?> result = SpecReader.read(tree, SpecReader.Mode.USER, "", invalid);
        if (!invalid.isEmpty()) {
            Problems named = new Problems();
            invalid.list().forEach(p -> named.add(field(keyFor(p.field(), job.spec(), overrides)), p.message()));
            named.throwIfAny("the job with these overrides is invalid");
        }
        return (JobSpec) result.spec();
    }

    /** The field of a problem with the override {@code key}: {@code overrides.<key>}, a huge key cut short. */
    private static String field(String key) {
        return "overrides." + (key.length() > MAX_REPORTED_KEY ? key.substring(0, MAX_REPORTED_KEY) + "..." : key);
    }

    /** Whether {@code key} sets one env value ({@code nodeGroups.<group>.env.<NAME>}), which is a string as given. */
    public static boolean isEnvValue(String key) {
        String[] path = key.split("\\.", -1);
        return path.length == 4 && path[0].equals("nodeGroups") && path[2].equals("env");
    }

    /** Why {@code key} is not a path, or {@code null}. */
    static String pathProblem(String key) {
        String[] path = key.split("\\.", -1);
        if (path.length > MAX_PATH_PARTS) {
            return "is not a path: it has " + path.length + " parts, at most " + MAX_PATH_PARTS + " are possible";
        }
        for (String part : path) {
            if (!PART.matcher(part).matches()) {
                return "is not a path: every part between dots must be a name of letters, digits, '-' and '_', as in nodeGroups.worker.replicas";
            }
        }
        return null;
    }

    /** Sets one value; returns why it cannot be set, or {@code null}. */
    private static String set(ObjectNode spec, String key, String value) {
        String problem = pathProblem(key);
        if (problem != null) {
            return problem;
        }
        String[] path = key.split("\\.", -1);
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
            if (path[2].equals("env") && path.length == 5 && path[4].equals("secretRef")) {
                ObjectNode env = target.get("env") instanceof ObjectNode existing ? existing : target.putObject("env");
                env.putObject(path[3]).put("secretRef", value); // replaces a plain value; checked when the job is read
                return null;
            }
            if (path[2].equals("env") && path.length > 4) {
                return "env values are strings: there is nothing under env." + path[3] + " to set but secretRef";
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
        if (field.equals("shape") || field.equals("resources")) {
            target.remove(field.equals("shape") ? "resources" : "shape");
        }
        if (isEnvValue(key)) {
            target.put(field, value); // checked as any env value when the job is read
            return null;
        }
        try {
            target.set(field, DocumentParser.parseValue(value));
            return null;
        } catch (InvalidInputException e) {
            Problem first = e.problems().get(0);
            return "'" + shorten(value) + "' is not a value (write numbers as 8, lists as [a, b], strings as they are): "
                    + (first.field().isEmpty() ? "" : first.field() + " ") + first.message();
        }
    }

    private static String shorten(String value) {
        return value.length() > 64 ? value.substring(0, 64) + "..." : value;
    }

    /**
     * Which override a problem's field path ({@code spec.nodeGroups[1].maxRuntime}) comes from, in the overrides' own
     * terms ({@code nodeGroups.worker.maxRuntime}): the path itself when it is an override's or lies under one, else the
     * override under it (an unknown field {@code colour} from {@code colour.shade=red} is the override's).
     */
    public static String keyFor(String field, JobSpec job, Map<String, String> overrides) {
        String readable = field;
        int close = field.indexOf(']');
        if (field.startsWith("spec.nodeGroups[") && close > 0) {
            String index = field.substring("spec.nodeGroups[".length(), close);
            String name = index;
            try {
                int i = Integer.parseInt(index);
                name = i >= 0 && i < job.nodeGroups().size() ? job.nodeGroups().get(i).name() : index;
            } catch (NumberFormatException e) {
                // not an index after all: keep it as written
            }
            readable = "nodeGroups." + name + field.substring(close + 1);
        } else if (field.startsWith("spec.")) {
            readable = field.substring("spec.".length());
        }
        for (String key : overrides.keySet()) {
            if (readable.equals(key) || readable.startsWith(key + ".") || readable.startsWith(key + "[")) {
                return readable;
            }
        }
        String under = null;
        for (String key : overrides.keySet()) {
            if (key.startsWith(readable + ".") && (under == null || key.length() < under.length())) {
                under = key;
            }
        }
        return under != null ? under : readable;
    }
}
