package io.slipstream.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.codec.Json;
import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MiniJsonTest {
    @Test
    void readsEveryKindOfValue() {
        Object value = MiniJson.parse(" {\"a\": [1, -2.5e3, true, false, null], \"b\": {\"c\": \"x\\\"\\\\\\/\\n\\u00e9\\ud83d\\ude00\"}, \"d\": {}} ");
        assertThat(value).isEqualTo(Map.of("a", java.util.Arrays.asList(new BigDecimal("1"), new BigDecimal("-2.5e3"), true, false, null),
                "b", Map.of("c", "x\"\\/\né\uD83D\uDE00"), "d", Map.of()));
    }

    @Test
    void refusesWhatIsNotJson() {
        for (String bad : List.of("", "{", "{\"a\" 1}", "{a: 1}", "[1,]", "01", "1.", "-", "\"\\x\"", "\"a", "tru", "{} x", "{\"a\":1,\"a\":2}",
                "\"\u0001\"", "[".repeat(100) + "]".repeat(100), "NaN")) {
            assertThatThrownBy(() -> MiniJson.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("offset");
        }
    }

    @Test
    void writesWhatJacksonReadsBack() {
        Map<String, Object> value = new LinkedHashMap<>();
        value.put("step", 12L);
        value.put("text", "quote \" backslash \\ newline \n tab \t control \u0001 line separator \u2028 é");
        value.put("loss", 0.125);
        value.put("tiny", 1.0e-7);
        value.put("whole", 3.0);
        value.put("list", List.of(1, "two", false));
        value.put("none", null);
        String json = MiniJson.write(value);
        var read = Json.mapper().readTree(json);
        assertThat(read.path("step").asLong()).isEqualTo(12);
        assertThat(read.path("text").asString()).isEqualTo(value.get("text"));
        assertThat(read.path("loss").asDouble()).isEqualTo(0.125);
        assertThat(read.path("tiny").asDouble()).isEqualTo(1.0e-7);
        assertThat(read.path("whole").asDouble()).isEqualTo(3.0);
        assertThat(read.path("list").size()).isEqualTo(3);
        assertThat(read.path("none").isNull()).isTrue();
        assertThat(MiniJson.parse(json)).isInstanceOf(Map.class);
        assertThatThrownBy(() -> MiniJson.write(Map.of("x", Double.NaN))).isInstanceOf(IllegalArgumentException.class);
    }
}
