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
    void aShapeReplacesExplicitResources() {
        JobSpec spec = Overrides.apply(JOB, overrides("nodeGroups.worker.shape=gpu.small"));
        assertThat(spec.nodeGroups().get(1).shape()).isEqualTo("gpu.small");
        assertThat(spec.nodeGroups().get(1).resources()).isNull();
        assertThatThrownBy(() -> Overrides.apply(JOB, overrides("nodeGroups.worker.name=other"))).isInstanceOf(InvalidInputException.class);
    }
}
