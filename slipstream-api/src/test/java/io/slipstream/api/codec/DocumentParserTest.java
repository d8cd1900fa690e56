package io.slipstream.api.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.problem.InvalidInputException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

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

    @Test
    void refusesDuplicateKeysWithTheirLine() {
        assertThat(messageOf("x: 1\ny: 2\nx: 3\n")).contains("x").contains("line 3");
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
    void refusesTooManyDocuments() {
        assertThat(messageOf("a: 1\n---\n".repeat(DocumentParser.MAX_DOCUMENTS + 1))).contains("at most");
    }
}
