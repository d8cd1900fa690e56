package io.slipstream.api.spec;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import tools.jackson.databind.JsonNode;

/**
 * The schemas (schema/*.json) and the records they bind to say the same: each object of a schema ({@code $defs}, named
 * after its record) has exactly the fields its record's {@code @JsonCreator} reads, every component of the record is
 * read (under its own name, or under the document's name listed here), and every enum (also of a list's items) lists the
 * Java constants in order.
 */
class SchemaDriftTest {
    /** Components that the document names differently (record component to document field). */
    private static final Map<String, String> RENAMED = Map.ofEntries(
            Map.entry("NodeGroupSpec.secretEnv", "env"),
            Map.entry("FaultTolerance.maxNodeLost", "maxNodeLostRestarts"),
            Map.entry("FaultTolerance.maxHangs", "maxHangRestarts"),
            Map.entry("FaultTolerance.backoffBase", "backoff"),
            Map.entry("FaultTolerance.backoffCap", "backoff"),
            Map.entry("FaultTolerance.retryExitCodes", "retryOn"),
            Map.entry("FaultTolerance.retryPatterns", "retryOn"),
            Map.entry("FaultTolerance.retryReasons", "retryOn"),
            Map.entry("Resources.milliCpu", "cpu"),
            Map.entry("Resources.memoryBytes", "memory"),
            Map.entry("Limits.memoryBytes", "memory"));

    @ParameterizedTest
    @EnumSource(Kind.class)
    void everyObjectOfTheSchemaHasExactlyTheFieldsOfItsRecord(Kind kind) throws Exception {
        JsonNode schema = SpecValidator.load(SpecValidator.fileName(kind));
        assertThat(schema.path("properties").path("kind").path("const").asString()).isEqualTo(kind.name());
        assertThat(schema.path("properties").path("spec").path("$ref").asString()).isEqualTo("#/$defs/" + SpecBinding.specClass(kind).getSimpleName());
        for (var def : schema.path("$defs").properties()) {
            Class<?> type = recordOf(def.getKey());
            Set<String> documented = new TreeSet<>(def.getValue().path("properties").propertyNames());
            Map<String, Type> read = fieldsRead(type);
            assertThat(documented).as("%s: the fields of $defs/%s are those its record reads", kind, def.getKey()).isEqualTo(read.keySet());
            if (type.isRecord() && type != ShapeSpec.class) {
                for (RecordComponent component : type.getRecordComponents()) {
                    String field = RENAMED.getOrDefault(type.getSimpleName() + "." + component.getName(), component.getName());
                    assertThat(read).as("%s.%s is read from the document (as '%s')", type.getSimpleName(), component.getName(), field)
                            .containsKey(field);
                }
            }
            for (var property : def.getValue().path("properties").properties()) {
                Type declared = read.get(property.getKey());
                boolean list = declared instanceof ParameterizedType p && p.getRawType() == List.class;
                Type element = list ? ((ParameterizedType) declared).getActualTypeArguments()[0] : declared;
                if (element instanceof Class<?> javaType && javaType.isEnum()) {
                    List<String> constants = Arrays.stream(javaType.getEnumConstants()).map(c -> ((Enum<?>) c).name()).toList();
                    List<String> values = new ArrayList<>();
                    (list ? property.getValue().path("items") : property.getValue()).path("enum").forEach(v -> values.add(v.asString()));
                    assertThat(values).as("%s.%s lists the constants of %s", def.getKey(), property.getKey(), javaType.getSimpleName())
                            .isEqualTo(constants);
                }
            }
        }
    }

    private static Class<?> recordOf(String name) throws ClassNotFoundException {
        for (String candidate : List.of("io.slipstream.api.spec." + name, "io.slipstream.api.spec.FaultTolerance$" + name,
                "io.slipstream.api.spec.TopologySpec$" + name)) {
            try {
                return Class.forName(candidate);
            } catch (ClassNotFoundException e) {
                // try the next
            }
        }
        throw new ClassNotFoundException("no record named " + name + " for $defs/" + name);
    }

    /** The document fields that binding reads into {@code type}, with their Java types. */
    private static Map<String, Type> fieldsRead(Class<?> type) {
        Map<String, Type> fields = new LinkedHashMap<>();
        if (type == Resources.class || type == ShapeSpec.class) { // SpecBinding.ResourcesDeserializer; a shape is its resources
            SpecBinding.ResourcesDeserializer.FIELDS.forEach(field -> fields.put(field, Object.class));
            return fields;
        }
        Executable creator = creator(type);
        for (Parameter parameter : creator.getParameters()) {
            JsonProperty property = parameter.getAnnotation(JsonProperty.class);
            String name = property != null ? property.value() : parameter.getName();
            fields.put(name, parameter.getParameterizedType());
        }
        if (creator instanceof Constructor<?> && type.isRecord()) { // the canonical constructor: named by the components
            fields.clear();
            for (RecordComponent component : type.getRecordComponents()) {
                fields.put(component.getName(), component.getGenericType());
            }
        }
        return fields;
    }

    private static Executable creator(Class<?> type) {
        for (Method method : type.getDeclaredMethods()) {
            JsonCreator annotation = method.getAnnotation(JsonCreator.class);
            if (annotation != null && annotation.mode() != JsonCreator.Mode.DELEGATING) {
                return method;
            }
        }
        for (Constructor<?> constructor : type.getDeclaredConstructors()) {
            if (constructor.getAnnotation(JsonCreator.class) != null) {
                return constructor;
            }
        }
        if (type.isRecord()) {
            Class<?>[] types = Arrays.stream(type.getRecordComponents()).map(RecordComponent::getType).toArray(Class<?>[]::new);
            try {
                return type.getDeclaredConstructor(types);
            } catch (NoSuchMethodException e) {
                throw new AssertionError(e);
            }
        }
        throw new AssertionError(type + " has no creator");
    }
}
