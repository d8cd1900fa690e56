package io.slipstream.api.spec;

import io.slipstream.api.problem.Problems;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * Reads the fields of one JSON object while keeping the field path, recording every problem instead of
 * stopping at the first, and reporting fields nobody asked for as unknown (see {@link #finish()}).
 */
public final class FieldReader {
    private final JsonNode node;
    private final String path;
    private final Problems problems;
    private final Set<String> known = new LinkedHashSet<>();

    private FieldReader(JsonNode node, String path, Problems problems) {
        this.node = node;
        this.path = path;
        this.problems = problems;
    }

    /** A reader over {@code node}; records a problem (and reads nothing) if it is not an object. */
    public static FieldReader of(JsonNode node, String path, Problems problems) {
        if (node != null && !node.isObject()) {
            problems.add(path, "must be an object, not " + describe(node));
            return new FieldReader(null, path, problems);
        }
        return new FieldReader(node, path, problems);
    }

    public String path() {
        return path;
    }

    public Problems problems() {
        return problems;
    }

    public String pathOf(String field) {
        return path.isEmpty() ? field : path + "." + field;
    }

    public boolean has(String field) {
        return get(field) != null;
    }

    /** The field's value, or {@code null} when absent or explicitly null. */
    public JsonNode get(String field) {
        known.add(field);
        if (node == null) {
            return null;
        }
        JsonNode value = node.get(field);
        return value == null || value.isNull() || value.isMissingNode() ? null : value;
    }

    public String string(String field, boolean required, int maxLength) {
        JsonNode value = get(field);
        if (value == null) {
            missing(field, required);
            return null;
        }
        return text(pathOf(field), value, maxLength);
    }

    /**
     * The one place where "a string" is read, whatever holds it (a field, a list item, a map value): anything else (an
     * object, a list, a number, true/false, null) is a problem at {@code fieldPath}, as is a string that
     * {@link #checkString} refuses. Returns {@code null} after recording the problem.
     */
    public String text(String fieldPath, JsonNode value, int maxLength) {
        if (value == null || !value.isString()) {
            problems.add(fieldPath, "must be a string, not " + describe(value) + quoteHint(value));
            return null;
        }
        return checkString(fieldPath, value.asString(), maxLength);
    }

    /** For a number or true/false, how to write it as a string; nothing for other kinds (their text could be anything). */
    private static String quoteHint(JsonNode value) {
        if (value != null && (value.isNumber() || value.isBoolean())) {
            return " (quote it: \"" + value.asString() + "\")";
        }
        return "";
    }

    /**
     * Checks text that will leave the server (in a process's arguments or environment, a file, the store): at most
     * {@code maxLength} characters, no NUL (it ends a C string), and only whole characters (a lone UTF-16 surrogate,
     * as a JSON escape like {@code \\ud800} can make, has no UTF-8 form and would be silently replaced).
     */
    public String checkString(String fieldPath, String text, int maxLength) {
        if (text.length() > maxLength) {
            problems.add(fieldPath, "must be at most " + maxLength + " characters (is " + text.length() + ")");
            return null;
        }
        if (text.indexOf('\0') >= 0) {
            problems.add(fieldPath, "must not contain NUL characters");
            return null;
        }
        int surrogate = loneSurrogate(text);
        if (surrogate >= 0) {
            problems.add(fieldPath, "must be valid Unicode: a lone surrogate (\\u" + Integer.toHexString(text.charAt(surrogate))
                    + ") is at character " + surrogate);
            return null;
        }
        return text;
    }

    /** The index of the first UTF-16 surrogate that is not half of a pair, or -1. */
    static int loneSurrogate(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return i;
            }
        }
        return -1;
    }

    /** A whole number within [min, max]; {@code null} when absent or invalid (the problem is recorded). */
    public Long integer(String field, boolean required, long min, long max) {
        JsonNode value = get(field);
        if (value == null) {
            missing(field, required);
            return null;
        }
        return checkInteger(pathOf(field), value, min, max);
    }

    public Long checkInteger(String fieldPath, JsonNode value, long min, long max) {
        if (!value.isNumber()) {
            problems.add(fieldPath, "must be a whole number, not " + describe(value));
            return null;
        }
        if (!value.isIntegralNumber() && !Double.isFinite(value.asDouble())) {
            problems.add(fieldPath, "must be a whole number between " + min + " and " + max + ", not " + value.asString());
            return null;
        }
        if (!value.isIntegralNumber() && value.decimalValue().stripTrailingZeros().scale() > 0) {
            problems.add(fieldPath, "must be a whole number, not " + value.asString());
            return null;
        }
        if (!value.canConvertToLong()) {
            problems.add(fieldPath, "must be between " + min + " and " + max);
            return null;
        }
        long number = value.asLong();
        if (number < min || number > max) {
            problems.add(fieldPath, number < min && min == 0
                    ? "must not be negative (is " + number + ")"
                    : "must be between " + min + " and " + max + " (is " + number + ")");
            return null;
        }
        return number;
    }

    public Boolean bool(String field, boolean required) {
        JsonNode value = get(field);
        if (value == null) {
            missing(field, required);
            return null;
        }
        if (!value.isBoolean()) {
            problems.add(pathOf(field), "must be true or false, not " + describe(value));
            return null;
        }
        return value.asBoolean();
    }

    public <E extends Enum<E>> E enumValue(String field, Class<E> type, boolean required) {
        String text = string(field, required, 64);
        if (text == null) {
            return null;
        }
        for (E constant : type.getEnumConstants()) {
            if (constant.name().equals(text)) {
                return constant;
            }
        }
        List<String> allowed = new ArrayList<>();
        for (E constant : type.getEnumConstants()) {
            allowed.add(constant.name());
        }
        problems.add(pathOf(field), "'" + text + "' is not one of " + String.join(", ", allowed));
        return null;
    }

    /** A nested object's reader, or {@code null} when absent (a problem is recorded if required). */
    public FieldReader object(String field, boolean required) {
        JsonNode value = get(field);
        if (value == null) {
            missing(field, required);
            return null;
        }
        return of(value, pathOf(field), problems);
    }

    /** The elements of a list field, or {@code null} when absent or not a list. */
    public List<JsonNode> array(String field, boolean required, int maxItems) {
        JsonNode value = get(field);
        if (value == null) {
            missing(field, required);
            return null;
        }
        if (!value.isArray()) {
            problems.add(pathOf(field), "must be a list, not " + describe(value));
            return null;
        }
        if (value.size() > maxItems) {
            problems.add(pathOf(field), "must have at most " + maxItems + " items (has " + value.size() + ")");
            return null;
        }
        List<JsonNode> items = new ArrayList<>();
        value.forEach(items::add);
        return items;
    }

    /** The entries of a map field (string keys), or {@code null} when absent or not an object. */
    public List<Map.Entry<String, JsonNode>> entries(String field, boolean required, int maxEntries) {
        JsonNode value = get(field);
        if (value == null) {
            missing(field, required);
            return null;
        }
        if (!value.isObject()) {
            problems.add(pathOf(field), "must be a map of names to values, not " + describe(value));
            return null;
        }
        if (value.size() > maxEntries) {
            problems.add(pathOf(field), "must have at most " + maxEntries + " entries (has " + value.size() + ")");
            return null;
        }
        return new ArrayList<>(value.properties());
    }

    public void missing(String field, boolean required) {
        if (required) {
            problems.add(pathOf(field), "is required");
        }
    }

    /** Records every field that was present but never read as unknown, with a suggestion when one is close. */
    public void finish() {
        if (node == null) {
            return;
        }
        for (Iterator<String> names = node.propertyNames().iterator(); names.hasNext(); ) {
            String name = names.next();
            if (!known.contains(name)) {
                String suggestion = closest(name);
                problems.add(pathOf(name), "unknown field" + (suggestion == null ? "" : " (did you mean '" + suggestion + "'?)"));
            }
        }
    }

    private String closest(String name) {
        return closest(name, known);
    }

    /** The candidate closest to {@code name} (fewer than 3 edits, case ignored), or {@code null}: a "did you mean". */
    public static String closest(String name, Iterable<String> candidates) {
        String best = null;
        int bestDistance = 3;
        for (String candidate : candidates) {
            if (Math.abs(name.length() - candidate.length()) >= bestDistance) {
                continue; // at least that many edits: a huge name costs nothing to compare
            }
            int distance = editDistance(name.toLowerCase(java.util.Locale.ROOT), candidate.toLowerCase(java.util.Locale.ROOT));
            if (distance < bestDistance) {
                best = candidate;
                bestDistance = distance;
            }
        }
        return best;
    }

    private static int editDistance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j] + 1, current[j - 1] + 1));
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }

    public static String describe(JsonNode node) {
        if (node == null || node.isNull()) {
            return "null";
        }
        if (node.isString()) {
            return "a string";
        }
        if (node.isNumber()) {
            return "a number";
        }
        if (node.isBoolean()) {
            return "true/false";
        }
        if (node.isArray()) {
            return "a list";
        }
        if (node.isObject()) {
            return "an object";
        }
        return node.getNodeType().toString().toLowerCase(java.util.Locale.ROOT);
    }
}
