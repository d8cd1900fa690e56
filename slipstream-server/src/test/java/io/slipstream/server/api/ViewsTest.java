package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Node names hidden in reasons: whole names only, every one of them. */
class ViewsTest {
    @ParameterizedTest
    @CsvSource(delimiter = '|', nullValues = "NULL", value = {
        "NodeLost: node node-1 is down (maintenance)         | NodeLost: node hidden is down (maintenance)",
        "NodeLost: node node-10 is down                      | NodeLost: node node-10 is down",
        "NodeLost: main-0 (NodeLost: node node-1 is down)   | NodeLost: main-0 (NodeLost: node hidden is down)",
        "lost on gpu-a.example.com. node-1, node-1           | lost on hidden. hidden, hidden",
        "sub.gpu-a.example.com                               | sub.gpu-a.example.com",
        "Completed                                           | Completed",
        "NULL                                                | NULL",
    })
    void namesOfHiddenNodesAreReplacedAsWholeWords(String text, String expected) {
        assertThat(Views.redact(text, Set.of("node-1", "gpu-a.example.com"))).isEqualTo(expected);
    }
}
