package io.slipstream.api.codec;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;

/**
 * Security review: the YAML structure checks keep the field path of every open list or map, and ran before any limit on
 * nesting (Jackson's 64 levels come later): a 600 KB body {@code a: [[[[...]]]]} (300,000 levels) built paths of every
 * length up to 900,000 characters, and ran a 6 GiB heap out of memory in 12 s (an OutOfMemoryError for one request, by
 * any member, in a document or in one override's value). The walk stops at the reader's nesting limit.
 */
class YamlNestingTest {
    @Test
    void theStructureChecksStopAtTheNestingLimit() {
        String deep = "a: " + "[".repeat(1000) + "]".repeat(1000);
        assertThatThrownBy(() -> StructureChecks.yaml(LoadSettings.builder().build(), deep, true))
                .isInstanceOf(YamlEngineException.class)
                .hasMessageContaining("nested");
        String deepMaps = "a" + ": {a".repeat(1000) + "}".repeat(1000);
        assertThatThrownBy(() -> StructureChecks.yaml(LoadSettings.builder().build(), deepMaps, false))
                .isInstanceOf(YamlEngineException.class)
                .hasMessageContaining("nested");
    }
}
