package io.slipstream.simulator.input;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.groups.Tuple.tuple;

import io.slipstream.api.problem.InvalidInputException;
import io.slipstream.api.problem.Problem;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.scheduler.Defragmentation;
import io.slipstream.scheduler.FairSharingPreemption;
import io.slipstream.scheduler.QuotaState;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ExperimentReaderTest {
    private static final Path EXAMPLES = Path.of("..", "examples", "simulation");

    @TempDir
    Path dir;

    @Test
    void theShippedSmallExperimentReadsWithItsDefaultsPerPolicy() {
        Experiment experiment = ExperimentReader.read(EXAMPLES.resolve("small/experiment.yaml"));
        assertThat(experiment.name()).isEqualTo("small");
        assertThat(experiment.seed()).isEqualTo(7);
        assertThat(experiment.cluster().gpus()).isEqualTo(16);
        assertThat(experiment.trace().jobs()).hasSize(7);
        assertThat(experiment.policies()).extracting(Policy::name).containsExactly("fixed-quotas", "borrowing", "borrowing-checkpoint-on-notice");
        Policy onNotice = experiment.policies().get(2);
        assertThat(onNotice.checkpointOnNotice()).isTrue();
        assertThat(onNotice.checkpointInterval()).isEqualTo(Duration.ofMinutes(10)); // from defaults
        assertThat(onNotice.schedulingInterval()).isEqualTo(Duration.ofSeconds(5));
        assertThat(experiment.policies().get(0).idleMode()).isEqualTo(IdleMode.Disabled);
        assertThat(onNotice.quotas()).extracting(q -> q.id().toString()).contains("vision/gpus", "speech/gpus");
    }

    @Test
    void theShippedElasticFlowExperimentSizesTheClusterAndQuotasFromTheTrace() {
        Experiment experiment = ExperimentReader.read(EXAMPLES.resolve("elasticflow.yaml"));
        assertThat(experiment.trace().jobs()).hasSize(69_351);
        assertThat(experiment.trace().tenants()).hasSize(10);
        assertThat(experiment.cluster().gpus()).isBetween(900L, 1200L); // "about 1,000 GPUs"
        Policy fixed = experiment.policies().get(0);
        long tenantGpus = fixed.quotas().stream().filter(q -> q.parent() != null).mapToLong(q -> q.min().gpu()).sum();
        assertThat(tenantGpus).isEqualTo(experiment.cluster().gpus());
        assertThat(experiment.notes()).anySatisfy(note -> assertThat(note).contains("65% of the tenants' summed peak demands"));
    }

    @Test
    void everyProblemIsReportedWithItsFieldPath() throws Exception {
        Files.writeString(dir.resolve("trace.csv"), "submit_time,duration,tenant,gpus\n0,10,vision,1\n0,10,nobody,1\n");
        Files.writeString(dir.resolve("experiment.yaml"), """
                trace: {csv: trace.csv}
                cluster: "2 x 8"
                quotas: {proportionalTo: gpuHours}
                defaults: {gracePeriod: 30 seconds}
                polices: []
                policies:
                  - {name: a, checkpoint: {interval: 10m, onNotise: true}}
                  - {name: a, idleMode: Sometimes}
                """);
        assertThatThrownBy(() -> ExperimentReader.read(dir.resolve("experiment.yaml")))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems()).extracting(Problem::field).contains(
                        "polices", "defaults.gracePeriod", "policies[0].checkpoint.onNotise", "policies[1].name", "policies[1].idleMode"));
    }

    @Test
    void aTenantWithoutAQuotaIsRefused() throws Exception {
        Files.writeString(dir.resolve("trace.csv"), "submit_time,duration,tenant,gpus\n0,10,vision,1\n0,10,nobody,1\n");
        Files.writeString(dir.resolve("experiment.yaml"), """
                trace: {csv: trace.csv}
                cluster: {nodes: [{count: 1, gpus: 8}]}
                quotas: ../../examples/simulation/small/quotas.yaml
                policies: [{name: only}]
                """.replace("../../examples/simulation/small/quotas.yaml", EXAMPLES.resolve("small/quotas.yaml").toAbsolutePath().toString()));
        assertThatThrownBy(() -> ExperimentReader.read(dir.resolve("experiment.yaml")))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems()).singleElement().satisfies(p -> {
                    assertThat(p.field()).isEqualTo("policies[0].quotas");
                    assertThat(p.message()).contains("tenant 'nobody' has no quota 'nobody/gpus'");
                }));
    }

    @Test
    void aPolicyMayLetEveryQuotaMoveItsRunsWithinBounds() throws Exception {
        Files.writeString(dir.resolve("trace.csv"), "submit_time,duration,tenant,gpus\n0,10,vision,1\n0,10,speech,1\n");
        Files.writeString(dir.resolve("experiment.yaml"), """
                trace: {csv: trace.csv}
                cluster: "2 x 8"
                quotas: {proportionalTo: equal}
                policies:
                  - {name: still}
                  - {name: moves, defragmentation: {moves: true}}
                  - {name: bounded, defragmentation: {moves: true, maxMovesPerCycle: 2, moveCooldown: 10m}}
                  - {name: off, defragmentation: {moves: false, maxMovesPerCycle: 2}}
                """);
        List<Policy> policies = ExperimentReader.read(dir.resolve("experiment.yaml")).policies();
        assertThat(policies.get(0).defragmentation()).isNull();
        assertThat(policies.get(0).quotas()).noneMatch(QuotaState::allowMoves);
        assertThat(policies.get(1).defragmentation()).isEqualTo(Defragmentation.DEFAULT);
        assertThat(policies.get(1).quotas()).allMatch(QuotaState::allowMoves);
        assertThat(policies.get(2).defragmentation()).isEqualTo(new Defragmentation(2, Duration.ofMinutes(10)));
        assertThat(policies.get(3).defragmentation()).isNull();
        assertThat(policies.get(3).quotas()).noneMatch(QuotaState::allowMoves);

        Files.writeString(dir.resolve("experiment.yaml"), """
                trace: {csv: trace.csv}
                cluster: "2 x 8"
                quotas: {proportionalTo: equal}
                policies: [{name: bad, defragmentation: {moves: yes-please, maxMovesPerCycle: 0, everyDay: true}}, {name: bounds-only, defragmentation: {maxMovesPerCycle: 5}}]
                """);
        assertThatThrownBy(() -> ExperimentReader.read(dir.resolve("experiment.yaml")))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems()).extracting(Problem::field).contains(
                        "policies[0].defragmentation.moves", "policies[0].defragmentation.maxMovesPerCycle", "policies[0].defragmentation.everyDay",
                        "policies[1].defragmentation.moves"));
    }

    @Test
    void aPolicyMayPreemptForFairSharing() throws Exception {
        Files.writeString(dir.resolve("trace.csv"), "submit_time,duration,tenant,gpus\n0,10,vision,1\n0,10,speech,1\n");
        Files.writeString(dir.resolve("experiment.yaml"), """
                trace: {csv: trace.csv}
                cluster: "2 x 8"
                quotas: {proportionalTo: equal}
                defaults: {fairSharing: {preemption: LessThanOrEqualToFinalShare}}
                policies:
                  - {name: fair}
                  - {name: order-only, fairSharing: {preemption: Never}}
                """);
        List<Policy> policies = ExperimentReader.read(dir.resolve("experiment.yaml")).policies();
        assertThat(policies).extracting(Policy::fairSharing).containsExactly(FairSharingPreemption.LessThanOrEqualToFinalShare, FairSharingPreemption.Never);

        Files.writeString(dir.resolve("experiment.yaml"), """
                trace: {csv: trace.csv}
                cluster: "2 x 8"
                quotas: {proportionalTo: equal}
                policies: [{name: bad, fairSharing: {preemption: Always, weight: 2}}, {name: plain}]
                """);
        assertThatThrownBy(() -> ExperimentReader.read(dir.resolve("experiment.yaml")))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems()).extracting(Problem::field)
                        .containsExactlyInAnyOrder("policies[0].fairSharing.preemption", "policies[0].fairSharing.weight"));
    }

    @Test
    void aTraceWithNoJobsIsAnError() throws Exception {
        Files.writeString(dir.resolve("trace.csv"), "submit_time,duration,tenant,gpus\n");
        Files.writeString(dir.resolve("experiment.yaml"), """
                trace: {csv: trace.csv}
                cluster: "2 x 8"
                quotas: {proportionalTo: equal}
                policies: [{name: p}]
                """);
        assertThatThrownBy(() -> ExperimentReader.read(dir.resolve("experiment.yaml")))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems()).extracting(Problem::field, Problem::message)
                        .contains(tuple("trace.csv", "has no jobs to replay (only a header, or every row skipped)")));
    }

    @Test
    void aClusterWithoutGpusIsAnError() throws Exception {
        Files.writeString(dir.resolve("trace.csv"), "submit_time,duration,tenant,gpus\n0,60,a,1\n");
        Files.writeString(dir.resolve("experiment.yaml"), """
                trace: {csv: trace.csv}
                cluster: "3 x 0"
                quotas: {proportionalTo: equal}
                policies: [{name: p}]
                """);
        assertThatThrownBy(() -> ExperimentReader.read(dir.resolve("experiment.yaml")))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems()).extracting(Problem::field).contains("cluster"));
    }
}
