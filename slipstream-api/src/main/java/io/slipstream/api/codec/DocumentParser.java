package io.slipstream.api.codec;

import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problem;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.dataformat.yaml.YAMLFactory;
import tools.jackson.dataformat.yaml.YAMLMapper;

/**
 * Parses untrusted input (one JSON document, a JSON array of documents, or a YAML stream of documents) into
 * trees, with limits: size, nesting, number of documents. Refused, each with its field path and position: bytes that
 * are not UTF-8 (never replaced), a key given twice (JSON and YAML), and in YAML aliases (how "billion laughs" bombs
 * multiply), tags other than {@code !!str} (see {@link StructureChecks}) and keys that are lists or maps.
 */
public final class DocumentParser {
    public static final int MAX_DOCUMENTS = 100;

    private static final LoadSettings YAML_SETTINGS = LoadSettings.builder()
            .setAllowDuplicateKeys(false)
            .setMaxAliasesForCollections(0)
            .setAllowRecursiveKeys(false)
            .setCodePointLimit(Json.MAX_DOCUMENT_BYTES)
            .build();

    private static final YAMLMapper STRICT_YAML = YAMLMapper.builder(YAMLFactory.builder()
                    .streamReadConstraints(Json.READ_LIMITS)
                    .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                    .loadSettings(YAML_SETTINGS)
                    .build())
            .disable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS) // the documents of a stream are read one by one
            .build();

    /** Finds duplicates one by one (to name them all), and the mapper refuses the first, should anything get past. */
    private static final JsonFactory JSON_SCAN = JsonFactory.builder().streamReadConstraints(Json.READ_LIMITS).build();
    private static final JsonMapper STRICT_JSON = JsonMapper.builder(JsonFactory.builder()
                    .streamReadConstraints(Json.READ_LIMITS)
                    .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                    .build())
            .build();

    private DocumentParser() {
    }

    /** Parses {@code body} into one tree per document. Throws {@link InvalidInputException} naming what is wrong. */
    public static List<JsonNode> parse(byte[] body) {
        if (body.length > Json.MAX_DOCUMENT_BYTES) {
            throw invalid("", "the input is " + body.length + " bytes; at most " + Json.MAX_DOCUMENT_BYTES + " (1 MiB) are accepted");
        }
        String text = decodeUtf8(body);
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

    /**
     * Parses one YAML value written on a command line ({@code 8}, {@code [a, b]}, {@code {gpu: 2}}, {@code 2h}) as
     * strictly as a document; empty text is {@code null}. Problems name the place inside the value, if any.
     */
    public static JsonNode parseValue(String text) {
        if (text.length() > Json.MAX_DOCUMENT_BYTES) {
            throw invalid("", "is " + text.length() + " characters long; at most " + Json.MAX_DOCUMENT_BYTES + " are accepted");
        }
        if (text.isBlank()) {
            return Json.mapper().nullNode();
        }
        StructureChecks.YamlResult checked = checkYaml(text, false);
        if (checked.documents() > 1) {
            throw invalid("", "must be one value, not a stream of " + checked.documents() + " YAML documents");
        }
        try {
            JsonNode value = STRICT_YAML.readTree(text);
            return value == null || value.isMissingNode() ? Json.mapper().nullNode() : value;
        } catch (JacksonException e) {
            throw invalid("", "not valid YAML" + where(e.getLocation()) + ": " + firstLine(e.getOriginalMessage()));
        }
    }

    /**
     * The text of {@code body}, which must be UTF-8: a byte sequence that is not (a stray continuation byte, an overlong
     * form, an encoded surrogate, a sequence cut short) is refused with its byte offset, line and column, never replaced.
     */
    static String decodeUtf8(byte[] body) {
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(body);
        CharBuffer out = CharBuffer.allocate(body.length); // UTF-8 never has fewer bytes than UTF-16 has chars
        CoderResult result = decoder.decode(in, out, true);
        if (!result.isError()) {
            result = decoder.flush(out);
        }
        if (result.isError()) {
            int offset = in.position();
            int lineStart = 0;
            int line = 1;
            for (int i = 0; i < offset; i++) {
                if (body[i] == '\n') {
                    line++;
                    lineStart = i + 1;
                }
            }
            String before = new String(body, lineStart, offset - lineStart, StandardCharsets.UTF_8); // valid: decoding stopped here
            int column = before.codePointCount(0, before.length()) + 1;
            StringBuilder bytes = new StringBuilder();
            for (int i = offset; i < Math.min(body.length, offset + result.length()); i++) {
                bytes.append(bytes.length() == 0 ? "" : " ").append(String.format(Locale.ROOT, "0x%02X", body[i] & 0xff));
            }
            throw invalid("", "is not valid UTF-8: byte " + bytes + " at offset " + offset + " (line " + line + ", column " + column
                    + ") is not part of a character; send text as UTF-8");
        }
        out.flip();
        return out.toString();
    }

    private static List<JsonNode> parseJson(String text) {
        JsonNode root;
        try {
            root = STRICT_JSON.readTree(text);
        } catch (JacksonException e) {
            List<Problem> duplicates;
            try {
                duplicates = StructureChecks.json(JSON_SCAN, text);
            } catch (JacksonException syntax) {
                throw invalid("", "not valid JSON" + where(syntax.getLocation()) + ": " + firstLine(syntax.getOriginalMessage()));
            }
            if (!duplicates.isEmpty()) {
                throw new InvalidInputException("the input has keys given twice", duplicates);
            }
            throw invalid("", "not valid JSON" + where(e.getLocation()) + ": " + firstLine(e.getOriginalMessage()));
        }
        List<JsonNode> documents = new ArrayList<>();
        if (root.isArray()) {
            root.forEach(documents::add);
        } else {
            documents.add(root);
        }
        return documents;
    }

    /** The structure checks of YAML {@code text}; throws if it is not YAML, or if they found anything. */
    private static StructureChecks.YamlResult checkYaml(String text, boolean listsHoldDocuments) {
        StructureChecks.YamlResult result;
        try {
            result = StructureChecks.yaml(YAML_SETTINGS, text, listsHoldDocuments);
        } catch (YamlEngineException e) {
            throw invalid("", "not valid YAML" + where(e) + ": " + firstLine(e instanceof MarkedYamlEngineException marked ? marked.getProblem() : e.getMessage()));
        }
        if (!result.problems().isEmpty()) {
            throw new InvalidInputException("the input uses YAML that is not supported", result.problems());
        }
        return result;
    }

    /**
     * The documents of a YAML stream: each YAML document that is not empty, and the items of each that is a list (as a
     * JSON array holds documents).
     */
    private static List<JsonNode> parseYaml(String text) {
        checkYaml(text, true);
        List<JsonNode> documents = new ArrayList<>();
        try (JsonParser parser = STRICT_YAML.createParser(text)) {
            while (parser.nextToken() != null && documents.size() <= MAX_DOCUMENTS) {
                JsonNode document = STRICT_YAML.readTree(parser);
                if (document != null && document.isArray()) {
                    document.forEach(documents::add);
                } else if (document != null && !document.isNull() && !document.isMissingNode()) {
                    documents.add(document);
                }
            }
        } catch (JacksonException e) {
            throw invalid("", "not valid YAML" + where(e.getLocation()) + ": " + firstLine(e.getOriginalMessage()));
        }
        return documents;
    }

    private static String where(TokenStreamLocation location) {
        if (location == null || location.getLineNr() < 1) {
            return "";
        }
        return " at line " + location.getLineNr() + ", column " + location.getColumnNr();
    }

    private static String where(YamlEngineException e) {
        if (e instanceof MarkedYamlEngineException marked) {
            Optional<Mark> mark = marked.getProblemMark().or(marked::getContextMark);
            if (mark.isPresent()) {
                return " at line " + (mark.get().getLine() + 1) + ", column " + (mark.get().getColumn() + 1);
            }
        }
        return "";
    }

    /** The first line of a parser's message, in words: without the parser's own class names, features and source. */
    private static String firstLine(String message) {
        if (message == null || message.isBlank()) {
            return "syntax error";
        }
        int newline = message.indexOf('\n');
        String line = (newline < 0 ? message : message.substring(0, newline)).trim();
        if (line.startsWith("Trailing token")) {
            return "there is more after the document (send several documents as a JSON array)";
        }
        line = line.replaceAll("\\s*\\(start marker at \\[[^\\]]*]\\)", "")
                .replaceAll("\\s*\\[Source: [^\\]]*]", "")
                .replaceAll("\\s*\\([^()]*`[^`]*`[^()]*\\)", "");
        return line.isBlank() || line.contains("tools.jackson") || line.contains("Feature") || line.contains("org.snakeyaml") ? "syntax error" : line;
    }

    private static InvalidInputException invalid(String field, String message) {
        return new InvalidInputException("invalid input", List.of(new Problem(field, message)));
    }
}
