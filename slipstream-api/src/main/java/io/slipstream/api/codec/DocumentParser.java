package io.slipstream.api.codec;

import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problem;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.snakeyaml.engine.v2.api.LoadSettings;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.MappingIterator;
import tools.jackson.dataformat.yaml.YAMLFactory;
import tools.jackson.dataformat.yaml.YAMLMapper;
import tools.jackson.dataformat.yaml.YAMLParser;

/**
 * Parses untrusted input (one JSON document, a JSON array of documents, or a YAML stream of documents) into
 * trees, with limits: size, nesting, number of documents; YAML aliases and duplicate keys are refused (aliases
 * are how "billion laughs" bombs multiply, and Jackson would silently turn them into strings).
 */
public final class DocumentParser {
    public static final int MAX_DOCUMENTS = 100;

    private static final YAMLMapper STRICT_YAML = YAMLMapper.builder(YAMLFactory.builder()
                    .streamReadConstraints(Json.READ_LIMITS)
                    .loadSettings(LoadSettings.builder()
                            .setAllowDuplicateKeys(false)
                            .setMaxAliasesForCollections(0)
                            .setAllowRecursiveKeys(false)
                            .setCodePointLimit(Json.MAX_DOCUMENT_BYTES)
                            .build())
                    .build())
            .build();

    private DocumentParser() {
    }

    /** Parses {@code body} into one tree per document. Throws {@link InvalidInputException} naming what is wrong. */
    public static List<JsonNode> parse(byte[] body) {
        if (body.length > Json.MAX_DOCUMENT_BYTES) {
            throw invalid("", "the input is " + body.length + " bytes; at most " + Json.MAX_DOCUMENT_BYTES + " (1 MiB) are accepted");
        }
        String text = new String(body, StandardCharsets.UTF_8);
        String trimmed = text.stripLeading();
        if (trimmed.isEmpty()) {
            throw invalid("", "the input is empty: expected a document with apiVersion, kind, metadata and spec");
        }
        List<JsonNode> documents = trimmed.startsWith("{") || trimmed.startsWith("[") ? parseJson(text) : parseYaml(text);
        if (documents.isEmpty()) {
            throw invalid("", "the input holds no document");
        }
        if (documents.size() > MAX_DOCUMENTS) {
            throw invalid("", "the input holds " + documents.size() + " documents; at most " + MAX_DOCUMENTS + " are accepted at once");
        }
        return documents;
    }

    /** Parses a single JSON or YAML value that is not a list of documents (for example a request body). */
    public static JsonNode parseOne(byte[] body) {
        List<JsonNode> documents = parse(body);
        if (documents.size() != 1) {
            throw invalid("", "expected one document, got " + documents.size());
        }
        return documents.get(0);
    }

    private static List<JsonNode> parseJson(String text) {
        try {
            JsonNode root = Json.mapper().readTree(text);
            List<JsonNode> documents = new ArrayList<>();
            if (root.isArray()) {
                root.forEach(documents::add);
            } else {
                documents.add(root);
            }
            return documents;
        } catch (JacksonException e) {
            throw invalid("", "not valid JSON" + where(e.getLocation()) + ": " + e.getOriginalMessage());
        }
    }

    private static List<JsonNode> parseYaml(String text) {
        rejectAliases(text);
        List<JsonNode> documents = new ArrayList<>();
        try (MappingIterator<JsonNode> iterator = STRICT_YAML.readerFor(JsonNode.class).readValues(text)) {
            while (iterator.hasNextValue()) {
                JsonNode document = iterator.nextValue();
                if (document != null && !document.isNull() && !document.isMissingNode()) {
                    documents.add(document);
                }
                if (documents.size() > MAX_DOCUMENTS) {
                    break;
                }
            }
        } catch (JacksonException e) {
            throw invalid("", "not valid YAML" + where(e.getLocation()) + ": " + firstLine(e.getOriginalMessage()));
        }
        return documents;
    }

    private static void rejectAliases(String text) {
        try (JsonParser parser = STRICT_YAML.createParser(text)) {
            while (parser.nextToken() != null) {
                if (parser instanceof YAMLParser yaml && yaml.isCurrentAlias()) {
                    throw invalid("", "YAML aliases (*" + parser.getString() + ") are not supported" + where(parser.currentLocation()));
                }
            }
        } catch (JacksonException e) {
            throw invalid("", "not valid YAML" + where(e.getLocation()) + ": " + firstLine(e.getOriginalMessage()));
        }
    }

    private static String where(TokenStreamLocation location) {
        if (location == null || location.getLineNr() < 1) {
            return "";
        }
        return " at line " + location.getLineNr() + ", column " + location.getColumnNr();
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "syntax error";
        }
        int newline = message.indexOf('\n');
        return (newline < 0 ? message : message.substring(0, newline)).trim();
    }

    private static InvalidInputException invalid(String field, String message) {
        return new InvalidInputException("invalid input", List.of(new Problem(field, message)));
    }
}
