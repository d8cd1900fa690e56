package io.slipstream.api.spec;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.slipstream.api.codec.Json;
import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problem;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Overrides (paths and values, as {@code --set} and a run request's {@code overrides} give them) applied to a valid job.
 * The input is lines of {@code path=value}; {@code \}{@code uXXXX} in it stands for that UTF-16 unit, so that lone
 * surrogates (which a JSON string can hold) are tried too. Oracle: the result is a job, or {@link InvalidInputException}
 * whose every problem is named {@code overrides.<something>}; an accepted result reads back the same once stored; the
 * job itself never changes. Seeds: {@code OverridesFuzzTestInputs/appliesAnyOverrides/}.
 */
class OverridesFuzzTest {
    private static final Pattern ESCAPE = Pattern.compile("\\\\u([0-9a-fA-F]{4})");

    @SuppressWarnings("unchecked")
    private static final Document<JobSpec> JOB = (Document<JobSpec>) Documents.readAll("""
            apiVersion: slipstream/v1
            kind: Job
            metadata: {name: train, workspace: team-a}
            spec:
              priority: 1
              maxRuntime: 2h
              faultTolerance: {maxRestarts: 2, retryOn: {exitCodes: [137]}}
              storage: [{name: shared, scope: job}]
              schedule: {cron: "0 2 * * *"}
              nodeGroups:
                - {name: coordinator, resources: {cpu: 1, memory: 1Gi}, command: [coord], startupProbe: {command: [test, -f, ready]}}
                - {name: worker, replicas: 3, resources: {cpu: 4, memory: 16Gi, gpu: 1}, command: [work], env: {LR: "0.01"}}
            """.getBytes(StandardCharsets.UTF_8)).get(0);
    private static final String JOB_AS_WRITTEN = SpecWriter.write(JOB).toString();

    @FuzzTest(maxDuration = "4s")
    @DictionaryEntries({"nodeGroups.", "worker.", "coordinator.", "env.", "LR", "replicas", "command", "resources.", "gpu", "cpu", "memory",
            "shape", "startupProbe.", "periodSeconds", "faultTolerance.", "retryOn.", "exitCodes", "maxRuntime", "priority", "schedule.",
            "cron", "storage", "quota", "=", "..", "../", "[a, b]", "{a: 1}", "!custom ", "&a ", "*a", "\\ud800", "null", "~"})
    void appliesAnyOverrides(byte[] input) {
        Map<String, String> overrides = overrides(input);
        try {
            JobSpec spec = Overrides.apply(JOB, overrides);
            Document<?> again = Documents.readStored(Json.mapper().readTree(SpecWriter.write(new Document<>(JOB.metadata(), spec)).toString()));
            assertThat(again.spec()).as("what is stored reads back the same").isEqualTo(spec);
        } catch (InvalidInputException e) {
            assertThat(e.problems()).isNotEmpty();
            for (Problem problem : e.problems()) {
                assertThat(problem.field()).as(problem.toString()).startsWith("overrides.");
                assertThat(problem.message()).isNotBlank();
            }
        }
        assertThat(SpecWriter.write(JOB).toString()).as("the job itself never changes").isEqualTo(JOB_AS_WRITTEN);
    }

    private static Map<String, String> overrides(byte[] input) {
        String text = new String(input, StandardCharsets.UTF_8);
        Matcher escape = ESCAPE.matcher(text);
        StringBuilder unescaped = new StringBuilder();
        while (escape.find()) {
            escape.appendReplacement(unescaped, Matcher.quoteReplacement(String.valueOf((char) Integer.parseInt(escape.group(1), 16))));
        }
        escape.appendTail(unescaped);
        Map<String, String> overrides = new LinkedHashMap<>();
        for (String line : unescaped.toString().split("\n", -1)) {
            int eq = line.indexOf('=');
            if (eq >= 0) {
                overrides.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        return overrides;
    }
}
