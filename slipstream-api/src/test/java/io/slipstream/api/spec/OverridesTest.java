package io.slipstream.api.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problem;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OverridesTest {
    @SuppressWarnings("unchecked")
    private static final Document<JobSpec> JOB = (Document<JobSpec>) Documents.readAll("""
            apiVersion: slipstream/v1
            kind: Job
            metadata: {name: train, workspace: team-a}
            spec:
              nodeGroups:
                - {name: coordinator, resources: {cpu: 1, memory: 1Gi}, command: [coord]}
                - {name: worker, replicas: 3, resources: {cpu: 4, memory: 16Gi, gpu: 1}, command: [work], env: {LR: "0.01"}}
            """.getBytes(StandardCharsets.UTF_8)).get(0);

    private static Map<String, String> overrides(String... pairs) {
        Map<String, String> map = new LinkedHashMap<>();
        for (String pair : pairs) {
            map.put(pair.substring(0, pair.indexOf('=')), pair.substring(pair.indexOf('=') + 1));
        }
        return map;
    }

    private static List<Problem> problems(Map<String, String> overrides) {
        try {
            Overrides.apply(JOB, overrides);
        } catch (InvalidInputException e) {
            return e.problems();
        }
        throw new AssertionError("expected the overrides to be rejected");
    }

    @Test
    void changeNodeGroupFieldsAndRunSettings() {
        JobSpec spec = Overrides.apply(JOB, overrides("nodeGroups.worker.replicas=8", "nodeGroups.worker.env.LR=0.1",
                "nodeGroups.worker.env.NEW=x", "priority=5", "maxRuntime=2h", "nodeGroups.coordinator.command=[coord, --verbose]"));
        NodeGroupSpec worker = spec.nodeGroups().get(1);
        assertThat(worker.replicas()).isEqualTo(8);
        assertThat(worker.env()).containsEntry("LR", "0.1").containsEntry("NEW", "x");
        assertThat(spec.priority()).isEqualTo(5);
        assertThat(spec.maxRuntime()).isEqualTo(Duration.ofHours(2));
        assertThat(spec.nodeGroups().get(0).command()).containsExactly("coord", "--verbose");
        assertThat(JOB.spec().nodeGroups().get(1).replicas()).as("the job itself is unchanged").isEqualTo(3);
    }

    @Test
    void theFaultTolerancePolicyCanBeChangedForOneRun() {
        JobSpec spec = Overrides.apply(JOB, overrides("faultTolerance.maxRestarts=5", "faultTolerance.hangTimeout=10m",
                "faultTolerance.retryOn.exitCodes=[137, \"200-255\"]"));
        assertThat(spec.faultTolerance().maxRestarts()).isEqualTo(5);
        assertThat(spec.faultTolerance().hangTimeout()).isEqualTo(Duration.ofMinutes(10));
        assertThat(spec.faultTolerance().retryExitCodes()).extracting(Object::toString).containsExactly("137", "200-255");
        assertThat(problems(overrides("faultTolerance.maxRestarts=-2"))).singleElement()
                .satisfies(p -> assertThat(p.field()).isEqualTo("overrides.faultTolerance.maxRestarts"));
    }

    @Test
    void aMemoryLimitCanBeSetForOneRunAndIsCheckedAgainstTheRequest() {
        JobSpec spec = Overrides.apply(JOB, overrides("nodeGroups.worker.limits.memory=24Gi"));
        assertThat(spec.nodeGroups().get(1).limits()).isEqualTo(new Limits(24L << 30));
        assertThat(spec.nodeGroups().get(0).limits()).isNull();
        assertThat(problems(overrides("nodeGroups.worker.limits.memory=8Gi"))).containsExactly(
                new Problem("overrides.nodeGroups.worker.limits.memory", "must be at least the memory request (16Gi)"));
        assertThat(problems(overrides("nodeGroups.worker.limits.cpu=2"))).extracting(Problem::field)
                .containsExactly("overrides.nodeGroups.worker.limits.cpu");
    }

    @Test
    void badOverridesAreNamedByTheirKey() {
        assertThat(problems(overrides("nodeGroups.worker.replicas=-1", "nodeGroups.ghost.replicas=2", "nodeGroups.worker.colour=red",
                "priority=high")))
                .extracting(Problem::field)
                .containsExactlyInAnyOrder("overrides.nodeGroups.ghost.replicas");
        assertThat(problems(overrides("nodeGroups.worker.replicas=-1", "nodeGroups.worker.colour=red", "priority=high")))
                .extracting(Problem::field)
                .containsExactlyInAnyOrder("overrides.nodeGroups.worker.replicas", "overrides.nodeGroups.worker.colour", "overrides.priority");
    }

    @Test
    void pathsThatAreNotPathsAreNamedAsGiven() {
        for (String key : List.of("../../x", "..", ".priority", "priority.", "a..b", " priority", "nodeGroups.worker./etc/passwd",
                "nodeGroups.worker.env.A B", "nodeGroups.worker.env.\u0000", "spec\\x", "nodeGroups.worker.command[0]")) {
            Map<String, String> overrides = new LinkedHashMap<>();
            overrides.put(key, "1");
            assertThat(problems(overrides)).as(key).singleElement().satisfies(p -> {
                assertThat(p.field()).isEqualTo("overrides." + key);
                assertThat(p.message()).contains("is not a path");
            });
        }
        assertThat(problems(overrides("=1"))).singleElement().satisfies(p -> assertThat(p.field()).isEqualTo("overrides."));
        String deep = "a.".repeat(20) + "b";
        assertThat(problems(overrides(deep + "=1"))).singleElement().satisfies(p -> assertThat(p.message()).contains("at most"));
        String longKey = "k".repeat(10_000);
        assertThat(problems(overrides(longKey + "=1"))).singleElement()
                .satisfies(p -> assertThat(p.field()).as("a huge key is cut in the report").hasSizeLessThan(300).startsWith("overrides.kkk"));
    }

    @Test
    void envValuesAreStringsWithNothingUnderThem() {
        assertThat(problems(overrides("nodeGroups.worker.env.LR.deeper=1"))).singleElement().satisfies(p -> {
            assertThat(p.field()).isEqualTo("overrides.nodeGroups.worker.env.LR.deeper");
            assertThat(p.message()).contains("env values are strings");
        });
        assertThat(problems(overrides("nodeGroups.worker.env.LR=a\u0000b"))).singleElement().satisfies(p -> {
            assertThat(p.field()).isEqualTo("overrides.nodeGroups.worker.env.LR");
            assertThat(p.message()).contains("NUL");
        });
        assertThat(problems(overrides("nodeGroups.worker.env={LR: [1]}"))).singleElement().satisfies(p -> {
            assertThat(p.field()).isEqualTo("overrides.nodeGroups.worker.env.LR");
            assertThat(p.message()).startsWith("must be a string").endsWith("not a list");
        });
        assertThat(Overrides.apply(JOB, overrides("nodeGroups.worker.env.LR=!custom {a: 1}")).nodeGroups().get(1).env())
                .as("env values are text, never parsed").containsEntry("LR", "!custom {a: 1}");
    }

    @Test
    void valuesAreReadAsStrictlyAsDocuments() {
        assertThat(problems(overrides("priority=!custom 5"))).singleElement().satisfies(p -> {
            assertThat(p.field()).isEqualTo("overrides.priority");
            assertThat(p.message()).contains("tag !custom");
        });
        assertThat(problems(overrides("nodeGroups.worker.resources={cpu: 1, cpu: 2, memory: 1Gi}"))).singleElement().satisfies(p -> {
            assertThat(p.field()).isEqualTo("overrides.nodeGroups.worker.resources");
            assertThat(p.message()).contains("cpu").contains("given twice");
        });
        assertThat(problems(overrides("nodeGroups.worker.command=[&a x, *a]"))).singleElement()
                .satisfies(p -> assertThat(p.message()).contains("alias"));
        assertThat(problems(overrides("nodeGroups.worker.command=[a, {b: 1}]"))).singleElement().satisfies(p -> {
            assertThat(p.field()).isEqualTo("overrides.nodeGroups.worker.command[1]");
            assertThat(p.message()).isEqualTo("must be a string, not an object");
        });
        assertThat(problems(overrides("nodeGroups.worker.resources={cpu: 1, memory: 1Gi, gpu: x}"))).singleElement()
                .satisfies(p -> assertThat(p.field()).isEqualTo("overrides.nodeGroups.worker.resources.gpu"));
    }

    @Test
    void anUnknownFieldIsNamedByTheOverrideThatMadeIt() {
        assertThat(problems(overrides("colour.shade=red"))).singleElement().satisfies(p -> {
            assertThat(p.field()).isEqualTo("overrides.colour.shade");
            assertThat(p.message()).contains("unknown field");
        });
    }

    @Test
    void aShapeReplacesExplicitResources() {
        JobSpec spec = Overrides.apply(JOB, overrides("nodeGroups.worker.shape=gpu.small"));
        assertThat(spec.nodeGroups().get(1).shape()).isEqualTo("gpu.small");
        assertThat(spec.nodeGroups().get(1).resources()).isNull();
        assertThatThrownBy(() -> Overrides.apply(JOB, overrides("nodeGroups.worker.name=other"))).isInstanceOf(InvalidInputException.class);
    }
}
