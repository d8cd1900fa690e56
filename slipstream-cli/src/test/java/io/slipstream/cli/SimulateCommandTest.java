package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/** {@code slipstream simulate} as a user runs it: the shipped small experiment, every output, and bad input. */
class SimulateCommandTest {
    private static final String SMALL = Path.of("..", "examples", "simulation", "small", "experiment.yaml").toString();

    @TempDir
    Path dir;

    @Test
    void printsOneJsonObjectPerPolicyWithTheFiguresTheExperimentCompares() {
        Result result = run("simulate", SMALL, "-o", "json", "-q");
        assertThat(result.code).isZero();
        JsonNode policies = Json.mapper().readTree(result.out);
        List<String> names = new ArrayList<>();
        policies.forEach(p -> names.add(p.get("policy").asString()));
        assertThat(names).containsExactly("fixed-quotas", "borrowing", "borrowing-checkpoint-on-notice");
        for (JsonNode policy : policies) {
            assertThat(policy.has("utilization") && policy.has("meanQueueDelaySeconds") && policy.has("p99QueueDelaySeconds")
                    && policy.has("preemptions") && policy.has("lostGpuHours") && policy.has("p99ReclaimSeconds")).isTrue();
            assertThat(policy.get("tenants")).hasSize(2);
        }
        // The story of the small trace: borrowing serves what fixed quotas cannot, and reclaims within the grace period.
        assertThat(policies.get(0).get("neverStarted").asInt()).isEqualTo(2);
        // The 16-GPU jobs over each tenant's 8-GPU guarantee, found before the replay: on stderr (even with -q) and in the JSON.
        assertThat(result.err).contains("warning: fixed-quotas: tenant speech: 1 job (4 GPU-h) asks for more than the tenant's guarantee (8 GPUs) with "
                + "borrowing disabled: it can never start (e.g. job 5)").contains("warning: fixed-quotas: tenant vision: 1 job (16 GPU-h)");
        assertThat(policies.get(0).get("warnings").get(0).get("kind").asString()).isEqualTo("BIGGER_THAN_GUARANTEE");
        assertThat(policies.get(0).get("neverStartedGpuHours").asDouble()).isPositive();
        assertThat(policies.get(1).get("warnings")).isEmpty();
        assertThat(policies.get(1).get("neverStarted").asInt()).isZero();
        assertThat(policies.get(1).get("utilization").asDouble()).isGreaterThan(policies.get(0).get("utilization").asDouble());
        assertThat(policies.get(1).get("maxReclaimSeconds").asDouble()).isLessThanOrEqualTo(35);
        assertThat(policies.get(2).get("lostGpuHours").asDouble()).isZero();
    }

    @Test
    void printsATableAndWritesASelfContainedHtmlReport() throws Exception {
        Path html = dir.resolve("report.html");
        Result result = run("simulate", SMALL, "--html", html.toString(), "--policy", "borrowing");
        assertThat(result.code).isZero();
        assertThat(result.out).contains("Experiment small: 7 jobs of 2 tenants").contains("borrowing").doesNotContain("fixed-quotas");
        assertThat(result.err).contains("report written to");
        assertThat(result.out).contains("utilization (busy window)").contains("utilization (whole replay)").contains("jobs never started are counted apart");
        String page = Files.readString(html);
        assertThat(page).startsWith("<!DOCTYPE html>").contains("<svg").contains("Queueing delay").doesNotContain("<script").doesNotContain("http://cdn");
    }

    @Test
    void eachWarningIsPrintedOnceOnStandardErrorAndTheTableOnlyCountsThem() {
        Result result = run("simulate", SMALL, "-q");
        assertThat(result.code).isZero();
        String warning = "fixed-quotas: tenant speech: 1 job (4 GPU-h) asks for more than the tenant's guarantee";
        assertThat(occurrences(result.err + result.out, warning)).isEqualTo(1);
        assertThat(result.err).contains("warning: " + warning);
        assertThat(result.out).contains("2 warnings (on standard error, before the replay)").doesNotContain("tenant speech: 1 job");
    }

    private static int occurrences(String text, String part) {
        int count = 0;
        for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) {
            count++;
        }
        return count;
    }

    @Test
    void badInputIsAClearErrorWithExitCodeTwo() throws Exception {
        Result missing = run("simulate", dir.resolve("absent.yaml").toString());
        assertThat(missing.code).isEqualTo(2);
        assertThat(missing.err).contains("no such file");

        Path experiment = dir.resolve("bad.yaml");
        Files.writeString(experiment, "trace: {csv: nothing.csv}\ncluster: \"1 x 8\"\nquotas: {proportionalTo: gpuHours}\npolicies: [{name: x}]\n");
        Result bad = run("simulate", experiment.toString());
        assertThat(bad.code).isEqualTo(2);
        assertThat(bad.err).contains("trace.csv").contains("no such file").doesNotContain("Exception").doesNotContain("\tat ");

        Result unknownPolicy = run("simulate", SMALL, "--policy", "nope", "-q");
        assertThat(unknownPolicy.code).isEqualTo(2);
        assertThat(unknownPolicy.err).contains("'nope' is not a policy of small");
    }

    private static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Result(code, out.toString(), err.toString());
    }

    private record Result(int code, String out, String err) {
    }
}
