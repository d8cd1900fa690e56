package io.slipstream.api.spec;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;
import tools.jackson.dataformat.yaml.YAMLFactory;
import tools.jackson.dataformat.yaml.YAMLMapper;
import tools.jackson.dataformat.yaml.YAMLWriteFeature;

/**
 * docs/api/openapi.yaml carries the schemas of the documents as they are in schema/*.json (one component per kind,
 * {@code JobDocument}, and one per part, {@code Job.NodeGroupSpec}), between two markers. This test fails when the two
 * drift; {@code -Dschema.update=true} rewrites that part of the file from the schemas, for review.
 */
class OpenApiSchemasTest {
    private static final Path OPENAPI = Path.of("..", "docs", "api", "openapi.yaml");
    private static final YAMLMapper YAML = YAMLMapper.builder(YAMLFactory.builder()
            .disable(YAMLWriteFeature.WRITE_DOC_START_MARKER).disable(YAMLWriteFeature.SPLIT_LINES).enable(YAMLWriteFeature.MINIMIZE_QUOTES).build()).build();
    static final String BEGIN = "    # --- Generated from slipstream-api/src/main/resources/schema/*.json (OpenApiSchemasTest, -Dschema.update=true): do not edit. ---\n";
    static final String END = "    # --- End of the generated schemas. ---\n";

    @Test
    void theOpenApiDocumentCarriesTheSchemasOfTheDocuments() throws IOException {
        String text = Files.readString(OPENAPI, StandardCharsets.UTF_8);
        String generated = generate();
        int begin = text.indexOf(BEGIN);
        int end = text.indexOf(END);
        if (Boolean.getBoolean("schema.update")) {
            String updated = begin < 0 ? text + BEGIN + generated + END : text.substring(0, begin) + BEGIN + generated + text.substring(end);
            Files.writeString(OPENAPI, updated, StandardCharsets.UTF_8);
            text = updated;
            begin = text.indexOf(BEGIN);
            end = text.indexOf(END);
        }
        assertThat(begin).as("docs/api/openapi.yaml has the generated schemas (run with -Dschema.update=true)").isNotNegative();
        assertThat(text.substring(begin + BEGIN.length(), end)).as("docs/api/openapi.yaml has the schemas of schema/*.json: "
                + "run mvn -pl slipstream-api test -Dtest=OpenApiSchemasTest -Dschema.update=true and review").isEqualTo(generated);
        JsonNode components = Json.yaml().readTree(text).path("components").path("schemas");
        components().forEach((name, schema) -> assertThat(components.get(name)).as(name).isEqualTo(schema));
    }

    /** The components: per kind its document, and each of its {@code $defs} as {@code <Kind>.<def>}. */
    static Map<String, JsonNode> components() {
        Map<String, JsonNode> components = new LinkedHashMap<>();
        for (Kind kind : Kind.values()) {
            ObjectNode schema = (ObjectNode) SpecValidator.load(SpecValidator.fileName(kind));
            JsonNode defs = schema.remove("$defs");
            schema.remove("$schema");
            components.put(kind + "Document", rewrite(schema, kind));
            defs.properties().forEach(def -> components.put(kind + "." + def.getKey(), rewrite(def.getValue(), kind)));
        }
        return components;
    }

    private static JsonNode rewrite(JsonNode schema, Kind kind) {
        return Json.mapper().readTree(schema.toString().replace("\"#/$defs/", "\"#/components/schemas/" + kind + "."));
    }

    private static String generate() {
        StringBuilder text = new StringBuilder();
        components().forEach((name, schema) -> {
            text.append("    ").append(name).append(":\n");
            for (String line : YAML.writeValueAsString(schema).split("\n")) {
                text.append("      ").append(line).append('\n');
            }
        });
        return text.toString();
    }
}
