package io.slipstream.api.spec;

import com.networknt.schema.ExecutionContext;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaContext;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SchemaRegistryConfig;
import com.networknt.schema.dialect.Dialect;
import com.networknt.schema.dialect.Dialects;
import com.networknt.schema.format.Format;
import com.networknt.schema.keyword.NonValidationKeyword;
import com.networknt.schema.path.NodePath;
import io.slipstream.api.codec.Json;
import io.slipstream.api.problem.Problem;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import tools.jackson.databind.JsonNode;

/**
 * Validates a document that a user sent against the JSON Schema of its kind ({@code schema/<kind>.json} on the class
 * path, the same files docs/api/openapi.yaml carries), and turns what the validator finds into problems in the
 * project's words: every problem, each with its field path ({@code spec.nodeGroups[0].replicas}), unknown fields with
 * a "did you mean". The formats of the schemas are {@link SpecFormats}; a message of a schema's own is given in its
 * {@code x-messages} ({@code {"minItems": "must name the program to run"}}).
 */
public final class SpecValidator {
    /** The schema of any document, for one whose kind is not known. */
    public static final String DOCUMENT = "document";

    private static final Map<Kind, Loaded> SCHEMAS = new EnumMap<>(Kind.class);
    private static final Loaded ENVELOPE;

    static {
        Set<String> formats = new TreeSet<>();
        Map<String, JsonNode> trees = new LinkedHashMap<>();
        trees.put(DOCUMENT, load(DOCUMENT));
        for (Kind kind : Kind.values()) {
            trees.put(fileName(kind), load(fileName(kind)));
        }
        trees.values().forEach(tree -> collectFormats(tree, formats));
        Dialect.Builder dialect = Dialect.builder(Dialects.getDraft202012()).keyword(new NonValidationKeyword("x-messages"));
        for (String name : formats) {
            dialect.format(new Format() {
                @Override
                public String getName() {
                    return name;
                }

                @Override
                public boolean matches(ExecutionContext executionContext, SchemaContext schemaContext, JsonNode value) {
                    return SpecFormats.problem(name, value) == null;
                }
            });
        }
        SchemaRegistry registry = SchemaRegistry.withDialect(dialect.build(),
                builder -> builder.schemaRegistryConfig(SchemaRegistryConfig.builder().formatAssertionsEnabled(true).locale(java.util.Locale.ENGLISH).build()));
        ENVELOPE = new Loaded(trees.get(DOCUMENT), registry.getSchema(trees.get(DOCUMENT).toString(), InputFormat.JSON));
        for (Kind kind : Kind.values()) {
            JsonNode tree = trees.get(fileName(kind));
            SCHEMAS.put(kind, new Loaded(tree, registry.getSchema(tree.toString(), InputFormat.JSON)));
        }
    }

    private record Loaded(JsonNode tree, Schema schema) {
    }

    private SpecValidator() {
    }

    /** {@code job}, {@code quota}, ...: the schema of a kind is {@code schema/<name>.json}. */
    public static String fileName(Kind kind) {
        return kind.name().toLowerCase(java.util.Locale.ROOT);
    }

    /** The text of {@code schema/<name>.json}. */
    public static JsonNode load(String name) {
        try (InputStream in = SpecValidator.class.getResourceAsStream("/schema/" + name + ".json")) {
            if (in == null) {
                throw new IllegalStateException("schema/" + name + ".json is missing");
            }
            return Json.mapper().readTree(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void collectFormats(JsonNode node, Set<String> formats) {
        if (node.isObject()) {
            node.properties().forEach(entry -> {
                if (entry.getKey().equals("format") && entry.getValue().isString()) {
                    if (!SpecFormats.known(entry.getValue().asString())) {
                        throw new IllegalStateException("a schema names the format '" + entry.getValue().asString() + "', which SpecFormats does not know");
                    }
                    formats.add(entry.getValue().asString());
                }
                collectFormats(entry.getValue(), formats);
            });
        } else if (node.isArray()) {
            node.forEach(item -> collectFormats(item, formats));
        }
    }

    /**
     * Every problem of {@code document} against the schema of {@code kind} ({@code null}: of any document), one per
     * field, paths without a prefix.
     */
    public static List<Problem> validate(Kind kind, JsonNode document) {
        Loaded loaded = kind == null ? ENVELOPE : SCHEMAS.get(kind);
        Map<String, Problem> byField = new LinkedHashMap<>();
        Set<String> typed = new java.util.HashSet<>();
        JsonNode checked = withoutHugeNumbers(document, "", byField);
        typed.addAll(byField.keySet()); // the null put in their place is no type problem of the user's
        for (com.networknt.schema.Error error : loaded.schema().validate(checked)) {
            Problem problem = translate(error, loaded.tree());
            boolean isType = error.getKeyword().equals("type");
            if (!byField.containsKey(problem.field()) || isType && !typed.contains(problem.field())) {
                byField.put(problem.field(), problem);
            }
            if (isType) {
                typed.add(problem.field());
            }
        }
        return new ArrayList<>(byField.values());
    }

    /**
     * The document with every number beyond 64 bits (or not finite) replaced by {@code null}, each one a problem of
     * its own: the validator's {@code minimum} and {@code maximum} convert numbers to {@code long} and throw on those.
     */
    private static JsonNode withoutHugeNumbers(JsonNode node, String path, Map<String, Problem> problems) {
        if (node.isNumber() && !fitsLong(node)) {
            boolean finite = !(node.isDouble() || node.isFloat()) || Double.isFinite(node.asDouble());
            problems.put(path, new Problem(path, finite ? "is out of range: numbers here are at most " + Long.MAX_VALUE + " in size"
                    : "must be a finite number (is " + node.asDouble() + ")"));
            return tools.jackson.databind.node.NullNode.getInstance();
        }
        if (node.isObject()) {
            tools.jackson.databind.node.ObjectNode copy = null;
            for (Map.Entry<String, JsonNode> entry : node.properties()) {
                JsonNode value = entry.getValue();
                JsonNode checked = withoutHugeNumbers(value, path.isEmpty() ? entry.getKey() : path + "." + entry.getKey(), problems);
                if (checked != value) {
                    copy = copy == null ? (tools.jackson.databind.node.ObjectNode) node.deepCopy() : copy;
                    copy.set(entry.getKey(), checked);
                }
            }
            return copy == null ? node : copy;
        }
        if (node.isArray()) {
            tools.jackson.databind.node.ArrayNode copy = null;
            for (int i = 0; i < node.size(); i++) {
                JsonNode value = node.get(i);
                JsonNode checked = withoutHugeNumbers(value, path + "[" + i + "]", problems);
                if (checked != value) {
                    copy = copy == null ? (tools.jackson.databind.node.ArrayNode) node.deepCopy() : copy;
                    copy.set(i, checked);
                }
            }
            return copy == null ? node : copy;
        }
        return node;
    }

    private static boolean fitsLong(JsonNode number) {
        if (number.isIntegralNumber()) {
            return number.canConvertToLong();
        }
        double value = number.doubleValue();
        return Double.isFinite(value) && Math.abs(value) < 9.2e18;
    }

    private static Problem translate(com.networknt.schema.Error error, JsonNode root) {
        String path = path(error.getInstanceLocation());
        JsonNode value = error.getInstanceNode();
        NodePath fragment = error.getSchemaLocation().getFragment();
        JsonNode schema = root;
        for (int i = 0; i < fragment.getNameCount() - 1 && schema != null; i++) {
            Object element = fragment.getElement(i);
            schema = element instanceof Integer index ? schema.get(index) : schema.get(element.toString());
        }
        if (schema == null) {
            schema = Json.mapper().createObjectNode();
        }
        String keyword = error.getKeyword();
        JsonNode custom = schema.path("x-messages").get(keyword);
        for (int i = 0; i < fragment.getNameCount(); i++) {
            if ("propertyNames".equals(fragment.getElement(i)) && error.getProperty() != null) { // a key: the problem is the key's
                String format = schema.has("format") ? schema.path("format").asString() : schema.path("propertyNames").path("format").asString("");
                String problem = SpecFormats.problem(format, tools.jackson.databind.node.StringNode.valueOf(error.getProperty()));
                return new Problem(child(path, error.getProperty()), problem != null ? problem : error.getMessage());
            }
        }
        return switch (keyword) {
            case "type" -> new Problem(path, (custom != null ? custom.asString() : typeMessage(schema, value)) + ", not "
                    + FieldReader.describe(value) + (custom == null && schema.path("type").asString("").equals("string") ? quoteHint(value) : ""));
            case "required" -> new Problem(child(path, error.getProperty()), "is required");
            case "additionalProperties", "unevaluatedProperties" -> {
                String suggestion = FieldReader.closest(error.getProperty(), schema.path("properties").propertyNames());
                yield new Problem(child(path, error.getProperty()), "unknown field" + (suggestion == null ? "" : " (did you mean '" + suggestion + "'?)"));
            }
            case "enum" -> {
                List<String> allowed = new ArrayList<>();
                schema.path("enum").forEach(item -> allowed.add(item.asString()));
                yield new Problem(path, "'" + text(value) + "' is not one of " + String.join(", ", allowed));
            }
            case "const" -> new Problem(path, "must be " + schema.path("const").asString() + " (is '" + text(value) + "')");
            case "minimum", "maximum" -> new Problem(path, rangeMessage(schema, value));
            case "maxLength" -> new Problem(path, "must be at most " + schema.path("maxLength").asInt() + " characters (is " + value.asString().length() + ")");
            case "maxItems" -> new Problem(path, "must have at most " + schema.path("maxItems").asInt() + " items (has " + value.size() + ")");
            case "maxProperties" -> new Problem(path, "must have at most " + schema.path("maxProperties").asInt() + " entries (has " + value.size() + ")");
            case "format" -> {
                String problem = SpecFormats.problem(schema.path("format").asString(""), value);
                yield new Problem(path, problem != null ? problem : error.getMessage());
            }
            default -> new Problem(path, custom != null ? custom.asString() : keyword.equals("not") ? "must not be set" : error.getMessage());
        };
    }

    private static String text(JsonNode value) {
        return value != null && value.isValueNode() ? value.asString() : FieldReader.describe(value);
    }

    private static String typeMessage(JsonNode schema, JsonNode value) {
        String type = schema.path("type").asString("");
        return switch (type) {
            case "string" -> "must be a string";
            case "integer" -> value != null && value.isNumber() ? "must be a whole number" + (Double.isFinite(value.asDouble()) ? ""
                    : " between " + schema.path("minimum").asString() + " and " + schema.path("maximum").asString()) : "must be a whole number";
            case "number" -> "must be a number";
            case "boolean" -> "must be true or false";
            case "array" -> "must be a list";
            case "object" -> schema.path("additionalProperties").isObject() ? "must be a map of names to values" : "must be an object";
            default -> "must be " + type;
        };
    }

    /** For a number or true/false, how to write it as a string. */
    private static String quoteHint(JsonNode value) {
        return value != null && (value.isNumber() || value.isBoolean()) ? " (quote it: \"" + value.asString() + "\")" : "";
    }

    private static String rangeMessage(JsonNode schema, JsonNode value) {
        String min = schema.path("minimum").asString();
        String max = schema.path("maximum").asString();
        if (!value.isIntegralNumber() && value.isNumber() && Double.isFinite(value.asDouble())) { // a decimal: -0.5 is not 0
            return value.asDouble() < 0 && schema.path("minimum").asLong() == 0
                    ? "must not be negative (is " + value.asString() + ")"
                    : "must be between " + min + " and " + max + " (is " + value.asString() + ")";
        }
        if (!value.canConvertToLong()) {
            return "must be between " + min + " and " + max;
        }
        long number = value.asLong();
        return number < 0 && schema.path("minimum").asLong() == 0
                ? "must not be negative (is " + number + ")"
                : "must be between " + min + " and " + max + " (is " + number + ")";
    }

    /** {@code spec.nodeGroups[0].env.LR} from the validator's path. */
    static String path(NodePath location) {
        StringBuilder path = new StringBuilder();
        for (int i = 0; i < location.getNameCount(); i++) {
            Object element = location.getElement(i);
            if (element instanceof Integer index) {
                path.append('[').append(index).append(']');
            } else {
                path.append(path.isEmpty() ? "" : ".").append(element);
            }
        }
        return path.toString();
    }

    private static String child(String path, String field) {
        return path.isEmpty() ? field : path + "." + field;
    }
}
