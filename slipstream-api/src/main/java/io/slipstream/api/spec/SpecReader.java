package io.slipstream.api.spec;

import io.slipstream.api.problem.Problem;
import io.slipstream.api.problem.Problems;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import tools.jackson.databind.JsonNode;

/**
 * Reads a document that a user sent: validated against the JSON Schema of its kind ({@link SpecValidator},
 * {@code schema/<kind>.json}), checked for what a schema cannot say ({@link SpecChecks}), and only then bound to its
 * records ({@link SpecBinding}). Every problem is recorded with its field path. References to other objects (shapes,
 * workspaces) are checked by the server, which knows them. What the server stored is read by {@link StoredSpecs}.
 */
public final class SpecReader {
    /** How much the reader accepts: what users write, or what the server stored (shapes already resolved). */
    public enum Mode {
        USER,
        /** Read as data, without validation: {@link StoredSpecs#read}. */
        STORED
    }

    /** The most instances a run may have, all node groups together. */
    static final int MAX_REPLICAS = 10_000;
    /** The most problems listed for one document (one more says how many were left out): the list is bounded. */
    public static final int MAX_PROBLEMS = 100;

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
        if (mode == Mode.STORED) {
            return StoredSpecs.read(tree);
        }
        Kind kind = kindOf(tree.get("kind"));
        List<Problem> found = new ArrayList<>(SpecChecks.strings(tree));
        java.util.Set<String> fields = new java.util.HashSet<>();
        found.forEach(p -> fields.add(p.field()));
        for (Problem problem : SpecValidator.validate(kind, tree)) {
            if (fields.add(problem.field())) {
                found.add(problem);
            }
        }
        if (kind != null && found.size() <= MAX_PROBLEMS) { // a document refused anyway is not checked further
            found.addAll(SpecChecks.check(kind, tree, mode, found));
        }
        if (found.size() > MAX_PROBLEMS) {
            int more = found.size() - MAX_PROBLEMS;
            found = new ArrayList<>(found.subList(0, MAX_PROBLEMS));
            found.add(new Problem("", "has " + more + " more problems; only the first " + MAX_PROBLEMS + " are listed"));
        }
        Document<?> document = null;
        if (found.isEmpty()) {
            try {
                document = SpecBinding.bind(tree);
            } catch (RuntimeException e) { // a gap between the schema and the records: still the user's 400, never a 500
                found.add(new Problem("", "cannot be read: " + e.getMessage()));
            }
        }
        for (Problem problem : found) {
            problems.add(problem.field().isEmpty() && !pathPrefix.isEmpty() ? pathPrefix.substring(0, pathPrefix.length() - 1)
                    : pathPrefix + problem.field(), problem.message());
        }
        return found.isEmpty() ? document : null;
    }

    private static Kind kindOf(JsonNode kind) {
        if (kind != null && kind.isString()) {
            for (Kind candidate : Kind.values()) {
                if (candidate.name().equals(kind.asString())) {
                    return candidate;
                }
            }
        }
        return null;
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
