package io.slipstream.api.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problem;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class DocumentParserTest {
    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String messageOf(String input) {
        try {
            DocumentParser.parse(bytes(input));
        } catch (InvalidInputException e) {
            return e.problems().get(0).message();
        }
        throw new AssertionError("expected rejection");
    }

    @Test
    void readsYamlStreamsAndJsonArrays() {
        assertThat(DocumentParser.parse(bytes("a: 1\n---\nb: 2\n---\n"))).hasSize(2);
        assertThat(DocumentParser.parse(bytes("[{\"a\":1},{\"b\":2}]"))).hasSize(2);
        assertThat(DocumentParser.parse(bytes("{\"a\":1}"))).hasSize(1);
        assertThat(DocumentParser.parse(bytes("a: 1\n---\n---\nb: 2\n"))).as("an empty document is skipped").hasSize(2);
    }

    @Test
    void aYamlListHoldsDocumentsAndNoDocumentAfterItIsLost() {
        assertThat(DocumentParser.parse(bytes("- {a: 1}\n- {b: 2}\n---\nc: 3\n"))).extracting(Object::toString)
                .containsExactly("{\"a\":1}", "{\"b\":2}", "{\"c\":3}");
        assertThat(problemsOf("- {a: 1}\n- {b: 2}\n---\nc: {d: 1, d: 2}\n")).extracting(Problem::field).containsExactly("documents[2].c.d");
        assertThat(problemsOf("- {a: 1}\n- {b: !x 2}\n")).extracting(Problem::field).containsExactly("documents[1].b");
    }

    @Test
    void refusesYamlBombs() {
        String bomb = """
                a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
                b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
                c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
                d: [*c,*c,*c,*c,*c,*c,*c,*c,*c]
                """;
        assertThat(messageOf(bomb)).contains("aliases").contains("line");
    }

    private static List<Problem> problemsOf(String input) {
        return problemsOf(bytes(input));
    }

    private static List<Problem> problemsOf(byte[] input) {
        try {
            DocumentParser.parse(input);
        } catch (InvalidInputException e) {
            return e.problems();
        }
        throw new AssertionError("expected rejection of " + new String(input, StandardCharsets.UTF_8));
    }

    @Test
    void refusesDuplicateKeysWithTheirPathAndLine() {
        assertThat(problemsOf("x: 1\ny: 2\nx: 3\n")).singleElement().satisfies(p -> {
            assertThat(p.field()).isEqualTo("x");
            assertThat(p.message()).contains("given twice").contains("line 3");
        });
        assertThat(problemsOf("""
                spec:
                  nodeGroups:
                    - name: a
                      env: {LR: "1", MODE: x, LR: "2"}
                    - name: b
                      name: c
                """)).extracting(Problem::field).containsExactly("spec.nodeGroups[0].env.LR", "spec.nodeGroups[1].name");
        assertThat(problemsOf("a: 1\n---\nb: {c: 1, c: 2}\n")).extracting(Problem::field).containsExactly("documents[1].b.c");
    }

    @Test
    void refusesDuplicateJsonKeysEveryOneWithItsPath() {
        List<Problem> problems = problemsOf("""
                {"apiVersion": "slipstream/v1", "kind": "Job",
                 "spec": {"nodeGroups": [{"env": {"X": "1", "X": "2"}, "command": ["a"]}, {"name": "b", "name": "c"}]},
                 "kind": "Quota"}
                """);
        assertThat(problems).extracting(Problem::field).containsExactly("spec.nodeGroups[0].env.X", "spec.nodeGroups[1].name", "kind");
        assertThat(problems.get(0).message()).contains("given twice").contains("line 2");
        assertThat(problemsOf("[{\"a\": 1}, {\"b\": {\"c\": [{\"d\": 1, \"d\": 2}]}}]")).extracting(Problem::field)
                .containsExactly("documents[1].b.c[0].d");
        assertThat(problemsOf("[{\"a\": 1, \"a\": 2}]")).extracting(Problem::field).containsExactly("a");
        assertThat(problemsOf("{\"a\": 1, \"a\": 2")).singleElement()
                .satisfies(p -> assertThat(p.message()).as("a syntax error is reported as such").contains("not valid JSON"));
    }

    static Stream<Arguments> notUtf8() {
        return Stream.of(
                Arguments.of(new byte[] {'a', ':', ' ', (byte) 0xFF}, 3, 1, 4),
                Arguments.of(new byte[] {'a', ':', '\n', 'b', ':', ' ', '"', (byte) 0xC3, '"'}, 7, 2, 5), // cut short
                Arguments.of(new byte[] {'a', ':', ' ', (byte) 0xC0, (byte) 0x80}, 3, 1, 4), // overlong NUL
                Arguments.of(new byte[] {'a', ':', ' ', (byte) 0xED, (byte) 0xA0, (byte) 0x80}, 3, 1, 4), // an encoded surrogate
                Arguments.of(new byte[] {'{', '"', (byte) 0xC3, (byte) 0xA9, '"', ':', (byte) 0x80, '}'}, 6, 1, 6), // stray continuation
                Arguments.of(new byte[] {'a', ':', ' ', (byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80}, 3, 1, 4), // above U+10FFFF
                Arguments.of(new byte[] {'a', ':', ' ', (byte) 0xE2, (byte) 0x82}, 3, 1, 4)); // truncated at the end
    }

    @ParameterizedTest
    @MethodSource("notUtf8")
    void refusesBytesThatAreNotUtf8WithTheirOffsetInsteadOfReplacingThem(byte[] input, int offset, int line, int column) {
        assertThat(problemsOf(input)).singleElement().satisfies(p -> assertThat(p.message())
                .contains("not valid UTF-8").contains("at offset " + offset + " (line " + line + ", column " + column + ")"));
    }

    @Test
    void readsUtf8ThatIsValid() {
        assertThat(DocumentParser.parseOne(bytes("a: \"h\u00e9llo \ud83d\ude80\"\n")).get("a").asString()).isEqualTo("h\u00e9llo \ud83d\ude80");
    }

    @Test
    void refusesYamlTagsOtherThanStrWithTheirPathAndPosition() {
        assertThat(problemsOf("""
                a: !custom {x: 1}
                b: !!binary aGk=
                c: !!int 7
                d: [!foo bar, !<tag:example.com,2000:x> y]
                e: !!str 5
                f: ! plain
                g: !!map {x: 1}
                h: !!python/object:os.system ls
                """)).extracting(Problem::field, p -> p.message().substring(0, p.message().indexOf(':')))
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("a", "has the YAML tag !custom (line 1, column 4)"),
                        org.assertj.core.groups.Tuple.tuple("b", "has the YAML tag !!binary (line 2, column 4)"),
                        org.assertj.core.groups.Tuple.tuple("c", "has the YAML tag !!int (line 3, column 4)"),
                        org.assertj.core.groups.Tuple.tuple("d[0]", "has the YAML tag !foo (line 4, column 5)"),
                        org.assertj.core.groups.Tuple.tuple("d[1]", "has the YAML tag !<tag"),
                        org.assertj.core.groups.Tuple.tuple("h", "has the YAML tag !!python/object"));
        assertThat(DocumentParser.parseOne(bytes("e: !!str 5\nf: ! 7\n")).get("e").isString()).isTrue();
        assertThat(problemsOf("%TAG !! tag:example.com,2000:\n---\na: !!str x\n")).extracting(Problem::field)
                .as("!! redefined is not !!str").containsExactly("a");
        assertThat(problemsOf("!custom\nkind: Job\n")).extracting(Problem::field).containsExactly("");
        assertThat(problemsOf("? !custom k\n: v\n")).extracting(Problem::field).containsExactly("k");
        assertThat(problemsOf("e: !!str [1]\n")).extracting(Problem::field).containsExactly("e");
    }

    @Test
    void refusesKeysThatAreListsOrMaps() {
        assertThat(problemsOf("spec:\n  ? [a, b]\n  : 1\n")).singleElement().satisfies(p -> {
            assertThat(p.field()).isEqualTo("spec");
            assertThat(p.message()).contains("key that is a list or a map");
        });
    }

    @Test
    void refusesAliasesWithTheirPath() {
        assertThat(problemsOf("a: &x 1\nspec: {b: *x}\n")).singleElement().satisfies(p -> {
            assertThat(p.field()).isEqualTo("spec.b");
            assertThat(p.message()).contains("alias *x").contains("line 2");
        });
    }

    @Test
    void parsesOneCommandLineValueAsStrictly() {
        assertThat(DocumentParser.parseValue("8").asInt()).isEqualTo(8);
        assertThat(DocumentParser.parseValue("[a, b]").size()).isEqualTo(2);
        assertThat(DocumentParser.parseValue("").isNull()).isTrue();
        assertThat(DocumentParser.parseValue("2h").asString()).isEqualTo("2h");
        for (String bad : List.of("!custom x", "{a: 1, a: 2}", "[&x a, *x]", "a\n---\nb", "[1, 2")) {
            assertThatThrownBy(() -> DocumentParser.parseValue(bad)).as(bad).isInstanceOf(InvalidInputException.class);
        }
    }

    @Test
    void refusesOversizedInputBeforeParsing() {
        byte[] big = new byte[Json.MAX_DOCUMENT_BYTES + 1];
        java.util.Arrays.fill(big, (byte) 'a');
        assertThatThrownBy(() -> DocumentParser.parse(big))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems().get(0).message()).contains("1 MiB"));
    }

    @Test
    void refusesDeepNesting() {
        String deep = "[".repeat(1000) + "]".repeat(1000);
        assertThat(messageOf(deep)).contains("JSON");
    }

    @Test
    void reportsSyntaxErrorsWithPosition() {
        assertThat(messageOf("a: [1, 2\n")).contains("YAML").contains("line");
        assertThat(messageOf("{\"a\": }")).contains("JSON").contains("line 1");
        assertThat(messageOf("   ")).contains("empty");
    }

    @Test
    void aMalformedEscapeThatTheYamlScannerCannotReadIsAFourHundred() {
        // Found by DocumentReaderFuzzTest: SnakeYAML throws NumberFormatException on a "\x" cut short by the end.
        assertThat(messageOf(" \":not\n\\x")).contains("not valid YAML");
        assertThatThrownBy(() -> DocumentParser.parseValue("\"\\x")).isInstanceOf(InvalidInputException.class);
    }

    @Test
    void refusesTooManyDocuments() {
        assertThat(messageOf("a: 1\n---\n".repeat(DocumentParser.MAX_DOCUMENTS + 1))).contains("at most");
    }
}
