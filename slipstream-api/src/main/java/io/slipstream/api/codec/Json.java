package io.slipstream.api.codec;

import com.fasterxml.jackson.annotation.JsonInclude;
import tools.jackson.core.StreamReadConstraints;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.cfg.DateTimeFeature;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.dataformat.yaml.YAMLFactory;
import tools.jackson.dataformat.yaml.YAMLMapper;
import tools.jackson.dataformat.yaml.YAMLWriteFeature;

/**
 * The one configured JSON and YAML mapper of the project: instants as ISO-8601 strings, nulls left out,
 * unknown properties rejected, and limits on what a document may contain.
 */
public final class Json {
    /** No input document may be larger than this. */
    public static final int MAX_DOCUMENT_BYTES = 1024 * 1024;

    static final StreamReadConstraints READ_LIMITS = StreamReadConstraints.builder()
            .maxNestingDepth(64)
            .maxDocumentLength(MAX_DOCUMENT_BYTES)
            .maxStringLength(MAX_DOCUMENT_BYTES)
            .maxNumberLength(100)
            .maxNameLength(1024)
            .build();

    private static final JsonMapper MAPPER = JsonMapper.builder(JsonFactory.builder().streamReadConstraints(READ_LIMITS).build())
            .disable(DateTimeFeature.WRITE_DATES_AS_TIMESTAMPS)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
            .changeDefaultPropertyInclusion(incl -> incl.withValueInclusion(JsonInclude.Include.NON_NULL))
            .build();

    private static final YAMLMapper YAML = YAMLMapper.builder(YAMLFactory.builder()
                    .streamReadConstraints(READ_LIMITS)
                    .disable(YAMLWriteFeature.WRITE_DOC_START_MARKER)
                    .enable(YAMLWriteFeature.MINIMIZE_QUOTES)
                    .build())
            .disable(DateTimeFeature.WRITE_DATES_AS_TIMESTAMPS)
            .changeDefaultPropertyInclusion(incl -> incl.withValueInclusion(JsonInclude.Include.NON_NULL))
            .build();

    private Json() {
    }

    public static JsonMapper mapper() {
        return MAPPER;
    }

    public static YAMLMapper yaml() {
        return YAML;
    }
}
