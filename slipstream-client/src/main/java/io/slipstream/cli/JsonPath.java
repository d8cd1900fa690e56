package io.slipstream.cli;

import io.slipstream.api.codec.Json;
import java.util.ArrayList;
import java.util.List;
import tools.jackson.databind.JsonNode;

/**
 * The part of kubectl's JSONPath templates that {@code -o jsonpath=...} supports (docs/cli.md): text, and in braces
 * either a path ({@code {.items[*].id}}, {@code {.state}}, {@code {.metadata.name}}, {@code {.items[0].spec}},
 * {@code {.spec['odd key']}}) or a quoted string ({@code {"\n"}}). What a path finds is printed space-separated:
 * strings and numbers as they are, objects and arrays as JSON; a key that is missing gives nothing. Anything else
 * ({@code range}, filters, slices, {@code ..}) is refused with the position where it starts.
 */
public final class JsonPath {
    sealed interface Part permits Text, Path {
    }

    record Text(String text) implements Part {
    }

    record Path(List<Step> steps) implements Part {
    }

    sealed interface Step permits Field, Index, All {
    }

    record Field(String name) implements Step {
    }

    record Index(int index) implements Step {
    }

    record All() implements Step {
    }

    private final String template;
    private final List<Part> parts;

    private JsonPath(String template, List<Part> parts) {
        this.template = template;
        this.parts = List.copyOf(parts);
    }

    List<Part> parts() {
        return parts;
    }

    /** Parses a template, or throws a {@link CliException} (exit 2) that says what and where. */
    public static JsonPath compile(String template) {
        List<Part> parts = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        int i = 0;
        while (i < template.length()) {
            char c = template.charAt(i);
            if (c == '}') {
                throw error(template, i, "a '}' without its '{'");
            }
            if (c != '{') {
                text.append(c);
                i++;
                continue;
            }
            int end = closing(template, i);
            if (text.length() > 0) {
                parts.add(new Text(text.toString()));
                text.setLength(0);
            }
            parts.add(inBraces(template, i + 1, end));
            i = end + 1;
        }
        if (text.length() > 0) {
            parts.add(new Text(text.toString()));
        }
        if (parts.stream().noneMatch(p -> p instanceof Path)) {
            throw error(template, 0, "no path in braces, e.g. {.items[*].id} or {.state}");
        }
        return new JsonPath(template, parts);
    }

    /** Where the brace that opens at {@code open} closes (braces in quotes do not count). */
    private static int closing(String template, int open) {
        Character quote = null;
        for (int i = open + 1; i < template.length(); i++) {
            char c = template.charAt(i);
            if (quote != null) {
                if (c == '\\') {
                    i++;
                } else if (c == quote) {
                    quote = null;
                }
            } else if (c == '"' || c == '\'') {
                quote = c;
            } else if (c == '{') {
                throw error(template, i, "braces do not nest");
            } else if (c == '}') {
                return i;
            }
        }
        throw error(template, open, "a '{' that is never closed");
    }

    private static Part inBraces(String template, int from, int to) {
        String body = template.substring(from, to).strip();
        int at = from + template.substring(from, to).indexOf(body.isEmpty() ? " " : body.substring(0, 1));
        if (body.startsWith("\"")) {
            if (body.length() < 2 || !body.endsWith("\"")) {
                throw error(template, at, "a string must be in double quotes, e.g. {\"\\n\"}");
            }
            return new Text(unescape(template, at, body.substring(1, body.length() - 1)));
        }
        if (body.isEmpty()) {
            throw error(template, from, "empty braces");
        }
        return new Path(steps(template, at, body));
    }

    private static List<Step> steps(String template, int offset, String path) {
        List<Step> steps = new ArrayList<>();
        int i = path.startsWith("$") ? 1 : 0;
        if (i >= path.length() || path.charAt(i) != '.' && path.charAt(i) != '[') {
            String word = path.split("[\\s.\\[]", 2)[0];
            throw error(template, offset, word.equals("range") || word.equals("end")
                    ? "'" + word + "' is not supported; print lists with [*], e.g. {.items[*].id}"
                    : "a path starts with '.', e.g. {.state}");
        }
        if (path.substring(i).equals(".")) {
            return steps; // {.}: the whole document
        }
        while (i < path.length()) {
            char c = path.charAt(i);
            if (c == '.') {
                if (i + 1 < path.length() && path.charAt(i + 1) == '.') {
                    throw error(template, offset + i, "'..' (recursive descent) is not supported");
                }
                int start = ++i;
                while (i < path.length() && (Character.isLetterOrDigit(path.charAt(i)) || path.charAt(i) == '_' || path.charAt(i) == '-')) {
                    i++;
                }
                if (start == i) {
                    if (i < path.length() && path.charAt(i) == '*') {
                        steps.add(new All());
                        i++;
                        continue;
                    }
                    throw error(template, offset + start, "a field name after '.'");
                }
                steps.add(new Field(path.substring(start, i)));
            } else if (c == '[') {
                int close = path.indexOf(']', i);
                if (close < 0) {
                    throw error(template, offset + i, "a '[' that is never closed");
                }
                String inside = path.substring(i + 1, close).strip();
                if (inside.equals("*")) {
                    steps.add(new All());
                } else if (inside.matches("\\d+")) {
                    steps.add(new Index(Integer.parseInt(inside)));
                } else if (inside.length() >= 2 && inside.startsWith("'") && inside.endsWith("'")) {
                    steps.add(new Field(inside.substring(1, inside.length() - 1)));
                } else {
                    throw error(template, offset + i, "[" + inside + "] is not supported; use [N], [*] or ['key']"
                            + (inside.startsWith("?") ? " (filters are not supported)" : inside.contains(":") ? " (slices are not supported)" : ""));
                }
                i = close + 1;
            } else {
                throw error(template, offset + i, "unexpected '" + c + "'");
            }
        }
        return steps;
    }

    private static String unescape(String template, int at, String text) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (++i >= text.length()) {
                throw error(template, at, "a string that ends in '\\'");
            }
            switch (text.charAt(i)) {
                case 'n' -> out.append('\n');
                case 't' -> out.append('\t');
                case '\\' -> out.append('\\');
                case '"' -> out.append('"');
                default -> throw error(template, at, "unknown escape \\" + text.charAt(i) + " (use \\n, \\t, \\\\ or \\\")");
            }
        }
        return out.toString();
    }

    private static CliException error(String template, int at, String what) {
        return new CliException(CliException.REJECTED, "-o jsonpath=" + template + ": at " + (at + 1) + ": " + what
                + " (supported: text, {.field}, {.a.b}, {.items[*].id}, {.items[0]}, {['key']}, {\"\\n\"}; see docs/cli.md)");
    }

    /** The template filled in from {@code root}. */
    public String evaluate(JsonNode root) {
        StringBuilder out = new StringBuilder();
        for (Part part : parts) {
            if (part instanceof Text t) {
                out.append(t.text());
            } else if (part instanceof Path p) {
                List<JsonNode> found = new ArrayList<>();
                select(root, p.steps(), 0, found);
                List<String> printed = new ArrayList<>();
                for (JsonNode node : found) {
                    printed.add(node.isValueNode() ? node.asString() : Json.mapper().writeValueAsString(node));
                }
                out.append(String.join(" ", printed));
            }
        }
        return out.toString();
    }

    private static void select(JsonNode node, List<Step> steps, int at, List<JsonNode> found) {
        if (node == null || node.isMissingNode() || node.isNull() && at < steps.size()) {
            return;
        }
        if (at == steps.size()) {
            if (!node.isNull()) {
                found.add(node);
            }
            return;
        }
        Step step = steps.get(at);
        if (step instanceof Field f) {
            select(node.isObject() ? node.get(f.name()) : null, steps, at + 1, found);
        } else if (step instanceof Index index) {
            select(node.isArray() ? node.get(index.index()) : null, steps, at + 1, found);
        } else {
            if (node.isArray() || node.isObject()) {
                for (JsonNode child : node) { // an array's elements, an object's values
                    select(child, steps, at + 1, found);
                }
            }
        }
    }

    @Override
    public String toString() {
        return template;
    }
}
