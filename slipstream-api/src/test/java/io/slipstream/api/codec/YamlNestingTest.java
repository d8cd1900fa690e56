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

    @Test
    void aBodyNestedHundredsOfThousandsDeepIsAFourHundred() {
        String deep = "a: " + "[".repeat(300_000) + "]".repeat(300_000);
        assertThatThrownBy(() -> DocumentParser.parse(deep.getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .isInstanceOf(io.slipstream.api.problem.InvalidInputException.class)
                .satisfies(e -> org.assertj.core.api.Assertions.assertThat(((io.slipstream.api.problem.InvalidInputException) e).problems().get(0).message())
                        .contains("nested more than 64 levels"));
        assertThatThrownBy(() -> DocumentParser.parseValue("[".repeat(300_000) + "]".repeat(300_000)))
                .isInstanceOf(io.slipstream.api.problem.InvalidInputException.class);
    }

    /**
     * An explicit key ({@code ? key}) may be any length in YAML; every node under it copied the key into its path: a
     * 500 KB key over a list of 250,000 items cost 9.6 s of CPU before Jackson's limit on names (1,024) refused it.
     */
    @Test
    void aKeyLongerThanANameMayBeIsRefusedBeforeItIsCopiedIntoPaths() {
        String longKey = "? " + "k".repeat(2000) + "\n: [1, 2, 3]\n";
        assertThatThrownBy(() -> StructureChecks.yaml(LoadSettings.builder().build(), longKey, true))
                .isInstanceOf(YamlEngineException.class)
                .hasMessageContaining("1024");
    }
}
