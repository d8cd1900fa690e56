package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.codec.Json;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;

class JsonPathTest {
    private static final JsonNode LIST = Json.mapper().readTree("""
            {"items": [
              {"id": "a-1", "state": "RUNNING", "priority": 3, "metadata": {"name": "train", "odd key": "x"}, "tags": ["p", "q"]},
              {"id": "b-2", "state": "QUEUED", "priority": 0, "metadata": {"name": "eval"}, "done": false, "gone": null}
            ]}""");

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
            "{.items[*].id}                          | a-1 b-2",
            "{.items[0].state}                       | RUNNING",
            "{.items[1].metadata.name}               | eval",
            "{$.items[*].priority}                   | 3 0",
            "{.items[*].metadata['odd key']}         | x",
            "{.items[0].tags}                        | [\"p\",\"q\"]",
            "{.items[0].tags[*]}                     | p q",
            "{.items[0].metadata}                    | {\"name\":\"train\",\"odd key\":\"x\"}",
            "{.items[1].done}                        | false",
            "{.items[*].nothing}                     | ``",
            "{.items[1].gone}                        | ``",
            "{.items[7].id}                          | ``",
            "{.items[0].id.deeper}                   | ``",
            "ids: {.items[*].id}!                    | ids: a-1 b-2!",
            "{.items[0].id}{\"\\t\"}{.items[0].state} | `a-1\tRUNNING`",
            "{.items[0].metadata.*}                  | train x",
            "{ .items[0].id }                        | a-1",
    })
    void evaluates(String template, String expected) {
        assertThat(JsonPath.compile(template).evaluate(LIST)).isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
            "$.items[*].priority                  | no path in braces",
            "{.items[*].id                        | never closed",
            ".items}                              | without its '{'",
            "{}                                   | empty braces",
            "{range .items[*]}{.id}{end}          | 'range' is not supported",
            "{.items[?(@.state==\"RUNNING\")].id} | filters are not supported",
            "{.items[0:1].id}                     | slices are not supported",
            "{..id}                               | recursive descent",
            "{items}                              | a path starts with '.'",
            "{.items[0}                           | never closed",
            "{.items.}                            | a field name after '.'",
            "{.a{.b}}                             | braces do not nest",
            "{\"\\x\"}                            | unknown escape",
    })
    void refusesWhatItDoesNotSupportSayingWhere(String template, String why) {
        assertThatThrownBy(() -> JsonPath.compile(template)).isInstanceOf(CliException.class)
                .hasMessageStartingWith("-o jsonpath=" + template + ": at ").hasMessageContaining(why)
                .satisfies(e -> assertThat(((CliException) e).exitCode()).isEqualTo(CliException.REJECTED));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "table | table", "wide | wide", "name | name", "json | json", "yaml | yaml", "jsonpath={.state} | jsonpath"})
    void formats(String text, GetFormat.Kind kind) {
        assertThat(GetFormat.parse(text).kind()).isEqualTo(kind);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"xml | not an output format", "jsonpath | needs an expression", "JSON | not an output format",
            "jsonpath= | no path in braces"})
    void badFormats(String text, String why) {
        assertThatThrownBy(() -> GetFormat.parse(text)).isInstanceOf(CliException.class).hasMessageContaining(why);
    }
}
