package io.slipstream.api.spec;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problem;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Documents made to be expensive (security review of the schema rewrite): one request must cost a bounded amount of
 * work. The problem list is bounded (a document with a hundred thousand bad items used to list each of them, and
 * handling the list was quadratic: minutes of CPU from one 400 KB request), and expensive formats refuse values over
 * their schema's length before parsing them.
 */
class HostileInputTest {
    private static final String HEAD = "{\"apiVersion\":\"slipstream/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\",\"workspace\":\"w\"},\"spec\":{";
    private static final String GROUP = "{\"name\":\"g\",\"command\":[\"echo\"],\"resources\":{\"cpu\":1,\"memory\":\"1Gi\"}}";

    private static String times(String item, int n) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < n; i++) {
            text.append(i == 0 ? "" : ",").append(item.replace("#", Integer.toString(i)));
        }
        return text.toString();
    }

    private static List<Problem> problemsOf(String json) {
        try {
            Documents.readAll(json.getBytes(StandardCharsets.UTF_8));
        } catch (InvalidInputException e) {
            return e.problems();
        }
        throw new AssertionError("expected the document to be refused");
    }

    @Test
    void manyBadItemsGiveABoundedProblemList() {
        List<Problem> problems = problemsOf(HEAD + "\"faultTolerance\":{\"retryOn\":{\"exitCodes\":[" + times("\"a\"", 5000) + "]}},"
                + "\"nodeGroups\":[" + GROUP + "]}}");
        assertThat(problems).hasSizeLessThanOrEqualTo(101);
        assertThat(problems.get(0).field()).isEqualTo("spec.faultTolerance.retryOn.exitCodes");
        assertThat(problems.get(problems.size() - 1).message()).contains("more");
    }

    @Test
    void manyBadNodeGroupsGiveABoundedProblemList() {
        List<Problem> problems = problemsOf(HEAD + "\"nodeGroups\":[" + times("{\"name\":\"g\",\"x#\":1}", 3000) + "]}}");
        assertThat(problems).hasSizeLessThanOrEqualTo(101);
    }

    @Test
    void manyUnknownFieldsGiveABoundedProblemList() {
        List<Problem> problems = problemsOf(HEAD + times("\"k#\":1", 5000) + ",\"nodeGroups\":[" + GROUP + "]}}");
        assertThat(problems).hasSizeLessThanOrEqualTo(101);
        assertThat(problems.get(0).field()).isEqualTo("spec.k0");
    }

    @Test
    void aFewProblemsAreAllListed() {
        List<Problem> problems = problemsOf(HEAD + times("\"k#\":1", 20) + ",\"nodeGroups\":[" + GROUP + "]}}");
        assertThat(problems).hasSize(20);
    }

    @Test
    void didYouMeanOnlyComparesNamesOfASimilarLength() {
        assertThat(FieldReader.closest("x".repeat(1000), List.of("replicas", "command"))).isNull();
        assertThat(FieldReader.closest("replica", List.of("replicas", "command"))).isEqualTo("replicas");
        assertThat(FieldReader.closest("REPLICAS", List.of("replicas"))).isEqualTo("replicas");
    }

    @Test
    void aCronExpressionLongerThanAnyIsRefusedBeforeItIsParsed() {
        // 800 KB: cron-utils took 1.5 s over it, although the schema's maxLength (256) refuses it anyway
        String problem = Cron.problem("1,".repeat(400_000) + "1 * * * *");
        assertThat(problem).contains("at most 256 characters");
    }

    /**
     * A schedule that never fires (February 30th, April 31st) was accepted, and the control loop looks at every
     * scheduled job every second: cron-utils searches 0.5 to 2 ms before it gives up on such an expression (its
     * backward search, 50 to 200 ms), so a workspace's thousand such jobs cost the loop about a second every second,
     * for nothing.
     */
    @Test
    void aScheduleThatNeverFiresIsRefused() {
        for (String cron : List.of("0 0 31 2 *", "0 0 30 2 *", "0 0 31 4,6,9,11 *")) {
            List<Problem> problems = problemsOf(HEAD + "\"schedule\":{\"cron\":\"" + cron + "\"},\"nodeGroups\":[" + GROUP + "]}}");
            assertThat(problems).singleElement().satisfies(p -> {
                assertThat(p.field()).isEqualTo("spec.schedule.cron");
                assertThat(p.message()).contains("never");
            });
        }
        assertThat(Cron.problem("0 0 29 2 *")).isNull(); // leap days come
    }

    /**
     * {@code subPath: "."} was accepted and stored as {@code ""}: the executor refuses that at launch (every run of the
     * job fails, LaunchFailed), and the job written back is refused ("must not be blank"), so any run of it with overrides
     * answered 400 on a field the user never touched. A path that names no directory below its root is refused; a
     * working directory of {@code "."} is the sandbox itself (absent).
     */
    @Test
    void aPathThatNamesNoDirectoryIsRefusedOrAbsentNeverEmpty() {
        for (String subPath : List.of(".", "./", "a/..", "./.")) {
            List<Problem> problems = problemsOf(HEAD + "\"storage\":[{\"name\":\"d\",\"scope\":\"workspace\",\"subPath\":\"" + subPath + "\"}],"
                    + "\"nodeGroups\":[" + GROUP + "]}}");
            assertThat(problems).as(subPath).singleElement().satisfies(p -> assertThat(p.field()).isEqualTo("spec.storage[0].subPath"));
        }
        for (String workingDir : List.of(".", "./")) {
            Document<?> job = Documents.readAll((HEAD + "\"nodeGroups\":[" + GROUP.replace("\"name\":\"g\"", "\"name\":\"g\",\"workingDir\":\"" + workingDir + "\"")
                    + "]}}").getBytes(StandardCharsets.UTF_8)).get(0);
            assertThat(((JobSpec) job.spec()).nodeGroups().get(0).workingDir()).as(workingDir).isNull();
            String written = SpecBinding.write(job).toString();
            assertThat(Documents.readAll(written.getBytes(StandardCharsets.UTF_8)).get(0).spec()).isEqualTo(job.spec());
        }
    }

    /**
     * A path with a NUL or a lone surrogate ({@code "/a\\u0000b"}): the path formats gave it to {@code Path.of}, whose
     * InvalidPathException escaped the validator: a 500 for any member, on any mountPath (and subPath).
     */
    @Test
    void aPathThatNoFileSystemHoldsIsAFourHundred() {
        for (String bad : List.of("/a\\u0000b", "/a\\ud800", "a\\u0000b")) {
            String[] places = {
                    "\"storage\":[{\"name\":\"d\",\"scope\":\"run\",\"mountPath\":\"" + bad + "\"}],\"nodeGroups\":[" + GROUP + "]}}",
                    "\"storage\":[{\"name\":\"d\",\"scope\":\"run\",\"subPath\":\"" + bad + "\"}],\"nodeGroups\":[" + GROUP + "]}}",
                    "\"nodeGroups\":[" + GROUP.replace("\"name\":\"g\"", "\"name\":\"g\",\"secrets\":[{\"name\":\"s\",\"mountPath\":\"" + bad + "\"}]") + "]}}",
                    "\"nodeGroups\":[" + GROUP.replace("\"name\":\"g\"", "\"name\":\"g\",\"workingDir\":\"" + bad + "\"") + "]}}"};
            for (String place : places) {
                assertThat(problemsOf(HEAD + place)).as(place).isNotEmpty();
            }
        }
    }
}
