package io.slipstream.api.spec;

import io.slipstream.api.codec.Json;
import java.time.Duration;
import java.time.ZoneId;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.JsonParser;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.SerializationContext;
import tools.jackson.databind.ValueDeserializer;
import tools.jackson.databind.ValueSerializer;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.module.SimpleModule;

/**
 * How the document form binds to the spec records, with Jackson: the records say their field names (their components,
 * or {@code @JsonProperty} on a {@code @JsonCreator} where the document's shape differs); this module adds the value
 * types of the document form (durations as {@code 30s}, quantities as {@code 64Gi}, time zones by name). Binding checks
 * nothing: what users send is validated against its schema first ({@link SpecValidator}), what the server stored is
 * data ({@link StoredSpecs}).
 */
public final class SpecBinding {
    private static final JsonMapper MAPPER = Json.mapper().rebuild()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .addModule(module())
            .build();

    private SpecBinding() {
    }

    /** The mapper that binds documents to records (lenient: unknown fields are ignored, nothing is limited). */
    public static JsonMapper mapper() {
        return MAPPER;
    }

    /** The spec record of {@code kind}. */
    public static Class<? extends Spec> specClass(Kind kind) {
        return switch (kind) {
            case Workspace -> WorkspaceSpec.class;
            case Shape -> ShapeSpec.class;
            case Quota -> QuotaSpec.class;
            case Job -> JobSpec.class;
            case Secret -> SecretSpec.class;
            case Topology -> TopologySpec.class;
        };
    }

    /** Binds a whole document (apiVersion, kind, metadata, spec); throws when it cannot be bound at all. */
    public static Document<?> bind(JsonNode tree) {
        if (tree == null || !tree.isObject()) {
            throw new IllegalArgumentException("a document must be an object, not " + FieldReader.describe(tree));
        }
        Kind kind = Kind.valueOf(tree.path("kind").asString(""));
        ObjectMeta metadata = MAPPER.treeToValue(tree.path("metadata"), ObjectMeta.class);
        JsonNode spec = tree.get("spec");
        if (spec == null || spec.isNull()) {
            spec = MAPPER.createObjectNode();
        }
        return new Document<>(metadata, MAPPER.treeToValue(spec, specClass(kind)));
    }

    static SimpleModule module() {
        SimpleModule module = new SimpleModule("slipstream-specs");
        module.addDeserializer(Duration.class, new ValueDeserializer<>() {
            @Override
            public Duration deserialize(JsonParser p, DeserializationContext ctxt) {
                return Durations.parse(p.getValueAsString());
            }
        });
        module.addSerializer(Duration.class, new ValueSerializer<>() {
            @Override
            public void serialize(Duration value, JsonGenerator gen, SerializationContext ctxt) {
                gen.writeString(Durations.format(value));
            }
        });
        module.addDeserializer(ZoneId.class, new ValueDeserializer<>() {
            @Override
            public ZoneId deserialize(JsonParser p, DeserializationContext ctxt) {
                return ZoneId.of(p.getValueAsString());
            }
        });
        module.addSerializer(ZoneId.class, new ValueSerializer<>() {
            @Override
            public void serialize(ZoneId value, JsonGenerator gen, SerializationContext ctxt) {
                gen.writeString(value.getId());
            }
        });
        module.addDeserializer(Resources.class, new ResourcesDeserializer(false));
        module.addSerializer(Resources.class, new ResourcesSerializer(true));
        return module;
    }

    /** Writes a whole document as users write it (a Secret never: its values stay encrypted). */
    public static tools.jackson.databind.node.ObjectNode write(Document<?> document) {
        if (document.spec() instanceof SecretSpec) {
            throw new IllegalArgumentException("a Secret is never written as a document: its values stay encrypted");
        }
        tools.jackson.databind.node.ObjectNode root = MAPPER.createObjectNode();
        root.put("apiVersion", Document.API_VERSION);
        root.put("kind", document.kind().name());
        root.set("metadata", MAPPER.valueToTree(document.metadata()));
        root.set("spec", MAPPER.valueToTree(document.spec()));
        return root;
    }

    /** Resources as written: whole cores as a number, else {@code "7500m"}; memory with a suffix; uncapped dimensions left out. */
    static class ResourcesSerializer extends ValueSerializer<Resources> {
        private final boolean withModel;

        ResourcesSerializer(boolean withModel) {
            this.withModel = withModel;
        }

        @Override
        public void serialize(Resources resources, JsonGenerator gen, SerializationContext ctxt) {
            gen.writeStartObject();
            if (resources.milliCpu() != Long.MAX_VALUE) {
                if (resources.milliCpu() % 1000 == 0) {
                    gen.writeNumberProperty("cpu", resources.milliCpu() / 1000);
                } else {
                    gen.writeStringProperty("cpu", Quantities.formatMilliCpu(resources.milliCpu()));
                }
            }
            if (resources.memoryBytes() != Long.MAX_VALUE) {
                gen.writeStringProperty("memory", Quantities.formatBytes(resources.memoryBytes()));
            }
            if (resources.gpu() != QuotaSpec.UNCAPPED) {
                gen.writeNumberProperty("gpu", resources.gpu());
            }
            if (withModel && resources.gpuModel() != null) {
                gen.writeStringProperty("gpuModel", resources.gpuModel());
            }
            gen.writeEndObject();
        }
    }

    /** A quota's guarantee: its GPU model is the quota's own field. */
    public static final class ResourcesWithoutModel extends ResourcesSerializer {
        public ResourcesWithoutModel() {
            super(false);
        }
    }

    /** {@code {cpu, memory, gpu, gpuModel}}, quantities as written; a dimension not given is 0, or uncapped in a cap. */
    static final class ResourcesDeserializer extends ValueDeserializer<Resources> {
        /** The fields of resources in a document. */
        static final java.util.List<String> FIELDS = java.util.List.of("cpu", "memory", "gpu", "gpuModel");
        private final boolean cap;

        ResourcesDeserializer(boolean cap) {
            this.cap = cap;
        }

        /** For {@code @JsonDeserialize(using = ...)}: a cap (quota max). */
        public ResourcesDeserializer() {
            this(true);
        }

        @Override
        public Resources deserialize(JsonParser p, DeserializationContext ctxt) {
            JsonNode node = ctxt.readTree(p);
            JsonNode cpu = node.get("cpu");
            JsonNode memory = node.get("memory");
            JsonNode gpu = node.get("gpu");
            JsonNode model = node.get("gpuModel");
            return new Resources(
                    present(cpu) ? Quantities.parseMilliCpu(cpu.asString()) : cap ? Long.MAX_VALUE : 0,
                    present(memory) ? Quantities.parseBytes(memory.asString()) : cap ? Long.MAX_VALUE : 0,
                    present(gpu) ? gpu.asInt() : cap ? QuotaSpec.UNCAPPED : 0,
                    present(model) ? model.asString() : null);
        }

        private static boolean present(JsonNode value) {
            return value != null && !value.isNull();
        }
    }
}
