package io.slipstream.api.label;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.label.Requirement.Exists;
import io.slipstream.api.label.Requirement.In;
import io.slipstream.api.label.Requirement.NotExists;
import io.slipstream.api.label.Requirement.NotIn;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class LabelSelectorTest {
    static Stream<Arguments> good() {
        return Stream.of(
                Arguments.of("", List.of()),
                Arguments.of("   ", List.of()),
                Arguments.of("team=nlp", List.of(in("team", "nlp"))),
                Arguments.of("team==nlp", List.of(in("team", "nlp"))),
                Arguments.of(" team = nlp ", List.of(in("team", "nlp"))),
                Arguments.of("team!=nlp", List.of(notIn("team", "nlp"))),
                Arguments.of("team=", List.of(in("team", ""))),
                Arguments.of("team in (nlp,vision)", List.of(in("team", "nlp", "vision"))),
                Arguments.of("team in(nlp, vision )", List.of(in("team", "vision", "nlp"))),
                Arguments.of("team notin (nlp)", List.of(notIn("team", "nlp"))),
                Arguments.of("team in (nlp,)", List.of(in("team", "", "nlp"))),
                Arguments.of("team", List.of(new Exists("team"))),
                Arguments.of("!team", List.of(new NotExists("team"))),
                Arguments.of("! team", List.of(new NotExists("team"))),
                Arguments.of("example.com/owner=Ann_B.1,tier in (gold,silver),!draft,canary",
                        List.of(in("example.com/owner", "Ann_B.1"), in("tier", "gold", "silver"), new NotExists("draft"), new Exists("canary"))),
                Arguments.of("a=1,a!=2", List.of(in("a", "1"), notIn("a", "2"))));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("good")
    void readsGoodSelectors(String text, List<Requirement> expected) {
        LabelSelector selector = LabelSelector.parse(text);
        assertThat(selector.requirements()).isEqualTo(expected);
        assertThat(LabelSelector.parse(selector.toString())).as("its written form reads back the same").isEqualTo(selector);
    }

    static Stream<Arguments> bad() {
        return Stream.of(
                Arguments.of(",", "at character 1: a label key expected, not ','"),
                Arguments.of("a,", "at character 3: a label key is missing at the end"),
                Arguments.of("a,,b", "at character 3: a label key expected, not ','"),
                Arguments.of("!", "a label key is missing at the end"),
                Arguments.of("!=x", "a label key expected, not '!'"),
                Arguments.of("a=b=c", "at character 4: ',' between requirements expected, not '='"),
                Arguments.of("a b", "at character 3: expected =, ==, !=, in or notin after the key 'a'"),
                Arguments.of("a in b", "at character 6: '(' after 'in' expected, not 'b'"),
                Arguments.of("a in ()", "the values of 'in' must not be empty"),
                Arguments.of("a notin (x", "')' expected to close the values of 'notin'"),
                Arguments.of("a in (x y)", "',' or ')' in the values of 'in' expected, not 'y'"),
                Arguments.of("a>1", "'<' and '>' are not supported"),
                Arguments.of("in=1", "a label key expected, not the operator 'in'"),
                Arguments.of("-a=1", "'-a' is not a label key"),
                Arguments.of("a=-b", "at character 3: '-b' is not a label value"),
                Arguments.of("a=" + "v".repeat(64), "a label value must be at most 63 characters (is 64)"),
                Arguments.of("k".repeat(64), "the name of a label key must be at most 63 characters (is 64)"),
                Arguments.of("Bad_Prefix/a", "the prefix is not a DNS subdomain"),
                Arguments.of("/a", "the prefix before '/' must not be empty"),
                Arguments.of("a/b/c", "with one '/' at most"),
                Arguments.of("p/", "the name of a label key must not be empty"),
                Arguments.of("!a=1", "',' between requirements expected, not '='"),
                Arguments.of(String.join(",", java.util.Collections.nCopies(33, "a")), "at most 32 requirements (has 33)"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("bad")
    void refusesBadSelectorsSayingWhy(String text, String problem) {
        assertThatThrownBy(() -> LabelSelector.parse(text)).isInstanceOf(LabelSelector.Invalid.class).hasMessageContaining(problem);
    }

    @Test
    void matchesAsKubernetesDoesMissingKeysIncluded() {
        Map<String, String> nlp = Map.of("team", "nlp", "tier", "gold");
        Map<String, String> none = Map.of();
        record Row(String selector, boolean matchesNlp, boolean matchesNone) {
        }
        for (Row row : List.of(
                new Row("", true, true),
                new Row("team=nlp", true, false),
                new Row("team!=nlp", false, true),
                new Row("team!=vision", true, true),
                new Row("team in (nlp,vision)", true, false),
                new Row("team notin (nlp,vision)", false, true),
                new Row("team", true, false),
                new Row("!team", false, true),
                new Row("team=nlp,tier=silver", false, false),
                new Row("team=", false, false))) {
            LabelSelector selector = LabelSelector.parse(row.selector());
            assertThat(selector.matches(nlp)).as("%s on %s", row.selector(), nlp).isEqualTo(row.matchesNlp());
            assertThat(selector.matches(none)).as("%s on no labels", row.selector()).isEqualTo(row.matchesNone());
        }
        assertThat(LabelSelector.parse("team=").matches(Map.of("team", ""))).isTrue();
    }

    @Test
    void labelsAreCheckedAsKubernetesChecksThemEachProblemAtItsKey() {
        assertThat(Labels.problems("metadata.labels", Map.of("app", "web", "example.com/team", "", "a.b-c_d", "X.1"))).isEmpty();
        assertThat(Labels.problems("metadata.labels", Map.of("bad key", "x", "ok", "-no")))
                .extracting(io.slipstream.api.problem.Problem::field)
                .containsExactly("metadata.labels.bad key", "metadata.labels.ok");
        Map<String, String> many = new java.util.HashMap<>();
        for (int i = 0; i < 65; i++) {
            many.put("k" + i, "v");
        }
        assertThat(Labels.problems("labels", many)).extracting(io.slipstream.api.problem.Problem::field).containsExactly("labels");
        assertThat(Labels.keyProblem("p".repeat(254) + "/a")).contains("at most");
        assertThat(Labels.keyProblem("a".repeat(63) + "." + "b".repeat(63) + "/" + "n".repeat(63))).isNull();
        assertThat(Labels.merged(Map.of("a", "1", "b", "2"), Map.of("b", "3"))).isEqualTo(Map.of("a", "1", "b", "3"));
        assertThat(Labels.format(Map.of("b", "2", "a", "1"))).isEqualTo("a=1,b=2");
    }

    @Test
    void anyTextIsReadOrRefusedWithAReasonAndWhatIsReadReadsBackTheSame() {
        java.util.Random random = new java.util.Random(17);
        String alphabet = "ab=!,() in notin/.-_9 \t<>==!=";
        int read = 0;
        for (int i = 0; i < 20_000; i++) {
            StringBuilder text = new StringBuilder();
            for (int n = random.nextInt(24); n > 0; n--) {
                text.append(random.nextInt(4) == 0 ? List.of(" in ", " notin ", "a", "b=c", "(", ")").get(random.nextInt(6))
                        : String.valueOf(alphabet.charAt(random.nextInt(alphabet.length()))));
            }
            try {
                LabelSelector selector = LabelSelector.parse(text.toString());
                read++;
                assertThat(LabelSelector.parse(selector.toString())).as("'%s' written as '%s'", text, selector).isEqualTo(selector);
            } catch (LabelSelector.Invalid e) {
                assertThat(e.getMessage()).as("'%s'", text).isNotBlank();
            }
        }
        assertThat(read).as("some of them are selectors").isGreaterThan(100);
    }

    private static In in(String key, String... values) {
        return new In(key, new TreeSet<>(List.of(values)));
    }

    private static NotIn notIn(String key, String... values) {
        return new NotIn(key, new TreeSet<>(List.of(values)));
    }
}
