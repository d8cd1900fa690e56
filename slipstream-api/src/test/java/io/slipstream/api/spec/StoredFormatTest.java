package io.slipstream.api.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.codec.Json;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The upgrade path of stored records. Today there is one version; a synthetic format of three versions (as if two
 * releases had changed the stored form) holds the structure: every older version reaches the newest through each step
 * in turn, and a newer one is refused.
 */
class StoredFormatTest {
    /** Version 1 called a group's replicas {@code count}; version 2 kept a group's runtime as seconds in {@code maxRuntimeSeconds}. */
    private static final StoredFormat THREE_VERSIONS = new StoredFormat(List.of(
            tree -> {
                for (JsonNode group : tree.get("spec").get("nodeGroups")) {
                    ObjectNode g = (ObjectNode) group;
                    g.set("replicas", g.remove("count"));
                }
                return tree;
            },
            tree -> {
                for (JsonNode group : tree.get("spec").get("nodeGroups")) {
                    ObjectNode g = (ObjectNode) group;
                    JsonNode seconds = g.remove("maxRuntimeSeconds");
                    if (seconds != null) {
                        g.put("maxRuntime", seconds.asLong() + "s");
                    }
                }
                return tree;
            }));

    private static final String GROUP_V1 = "{\"name\":\"w\",\"count\":3,\"maxRuntimeSeconds\":7200,\"resources\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},\"command\":[\"x\"]}";
    private static final String GROUP_V2 = "{\"name\":\"w\",\"replicas\":3,\"maxRuntimeSeconds\":7200,\"resources\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},\"command\":[\"x\"]}";
    private static final String GROUP_V3 = "{\"name\":\"w\",\"replicas\":3,\"maxRuntime\":\"7200s\",\"resources\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},\"command\":[\"x\"]}";

    private static JsonNode job(String group) {
        return Json.mapper().readTree("{\"apiVersion\":\"slipstream/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"train\",\"workspace\":\"team-a\"},"
                + "\"spec\":{\"nodeGroups\":[" + group + "]}}");
    }

    @ParameterizedTest(name = "version {0} reads as the newest")
    @CsvSource({"1", "2", "3"})
    void everyOlderVersionIsUpgradedStepByStep(int version) {
        String group = switch (version) {
            case 1 -> GROUP_V1;
            case 2 -> GROUP_V2;
            default -> GROUP_V3;
        };
        JobSpec spec = (JobSpec) StoredSpecs.read(THREE_VERSIONS.upgrade(job(group), version)).spec();
        assertThat(spec.nodeGroups()).singleElement().satisfies(g -> {
            assertThat(g.replicas()).isEqualTo(3);
            assertThat(g.maxRuntime()).hasHours(2);
        });
    }

    @Test
    void aNewerVersionIsRefusedNotMisread() {
        assertThatThrownBy(() -> THREE_VERSIONS.upgrade(job(GROUP_V3), 4))
                .isInstanceOf(StoredFormat.NewerVersionException.class)
                .hasMessageContaining("format version 4, newer than this server knows (3)");
        assertThatThrownBy(() -> StoredSpecs.read(job(GROUP_V3), StoredFormat.CURRENT + 1))
                .isInstanceOf(StoredFormat.NewerVersionException.class);
    }

    @Test
    void versionsStartAtOne() {
        assertThatThrownBy(() -> THREE_VERSIONS.upgrade(job(GROUP_V3), 0)).hasMessageContaining("does not exist");
    }

    @Test
    void todayIsVersionOneAndReadsUnchanged() {
        assertThat(StoredFormat.TODAY.current()).isEqualTo(StoredFormat.CURRENT).isEqualTo(1);
        JsonNode tree = job(GROUP_V3);
        assertThat(StoredSpecs.readJob(tree.deepCopy(), 1)).isEqualTo(StoredSpecs.readJob(tree));
    }
}
