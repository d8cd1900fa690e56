package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class WatchChangesTest {
    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("nothing changed", Map.of("a", "1", "b", "2"), ordered("a", "1", "b", "2"), List.of()),
                Arguments.of("a new run", Map.of("a", "1"), ordered("b", "1", "a", "1"), List.of("b")),
                Arguments.of("a new version", Map.of("a", "1", "b", "2"), ordered("a", "1", "b", "3"), List.of("b")),
                Arguments.of("gone runs are not events", Map.of("a", "1", "b", "2"), ordered("a", "1"), List.of()),
                Arguments.of("in the order now shows them", Map.of(), ordered("c", "1", "a", "1", "b", "1"), List.of("c", "a", "b")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void changedRunsAreTheNewAndTheRewritten(String name, Map<String, String> before, Map<String, String> now, List<String> changed) {
        assertThat(WatchChanges.changed(before, now)).isEqualTo(changed);
    }

    @Test
    void goneRunsAreThoseNowLacks() {
        assertThat(WatchChanges.gone(ordered("a", "1", "b", "2", "c", "3"), ordered("b", "9"))).containsExactly("a", "c");
        assertThat(WatchChanges.gone(Map.of(), ordered("a", "1"))).isEmpty();
    }

    private static Map<String, String> ordered(String... pairs) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            map.put(pairs[i], pairs[i + 1]);
        }
        return map;
    }
}
