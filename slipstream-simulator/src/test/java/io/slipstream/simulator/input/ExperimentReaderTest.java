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
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

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
    void theShippedElasticExperimentComparesRigidAndElasticBorrowers() {
        Experiment experiment = ExperimentReader.read(EXAMPLES.resolve("elasticflow-elastic.yaml"));
        assertThat(experiment.policies()).extracting(Policy::name).containsExactly("borrowing", "elastic-gangs", "halves", "elastic-borrowers");
        assertThat(experiment.policies()).extracting(Policy::elastic).containsExactly(null, new ElasticRule(0.5, false, Duration.ofSeconds(30), false),
                new ElasticRule(1, false, Duration.ofSeconds(30), true), new ElasticRule(0.5, false, Duration.ofSeconds(30), true));
        assertThat(experiment.policies()).allSatisfy(p -> {
            assertThat(p.idleMode()).isEqualTo(IdleMode.Acceptable);
            assertThat(p.defragmentation()).isNotNull();
            assertThat(p.checkpointInterval()).isEqualTo(Duration.ofMinutes(30));
        });
    }

    @Test
    void aPolicyMayMakeBorrowersElastic() throws Exception {
        Files.writeString(dir.resolve("trace.csv"), "submit_time,duration,tenant,gpus,instances,min_instances\n0,10,vision,8,4,\n0,10,speech,8,4,3\n"
                + "0,10,speech,8,1,\n");
        Files.writeString(dir.resolve("experiment.yaml"), """
                trace: {csv: trace.csv}
                cluster: "4 x 8"
                quotas: {proportionalTo: equal}
                defaults: {elastic: {minFraction: 0.5}}
                policies:
                  - {name: half}
                  - {name: traced, elastic: {fromTrace: true, worldChangePause: 1m, split: true}}
                  - {name: rigid-halves, elastic: {minFraction: 1, split: true}}
                """);
        List<Policy> policies = ExperimentReader.read(dir.resolve("experiment.yaml")).policies();
        assertThat(policies).extracting(Policy::elastic).containsExactly(new ElasticRule(0.5, false, Duration.ofSeconds(30), false),
                new ElasticRule(0.5, true, Duration.ofMinutes(1), true), new ElasticRule(1, false, Duration.ofSeconds(30), true));
        List<TraceJob> jobs = ExperimentReader.read(dir.resolve("experiment.yaml")).trace().jobs();
        ElasticRule traced = policies.get(1).elastic();
        assertThat(policies.get(0).elastic().minimumOf(jobs.get(0), IdleMode.Acceptable)).isEqualTo(2);
        assertThat(traced.minimumOf(jobs.get(1), IdleMode.Acceptable)).as("the trace's, first").isEqualTo(3);
        assertThat(traced.minimumOf(jobs.get(0), IdleMode.Acceptable)).as("else minFraction").isEqualTo(2);
        assertThat(traced.minimumOf(jobs.get(0), IdleMode.Disabled)).as("only borrowers").isZero();
        assertThat(traced.shape(jobs.get(2), IdleMode.Acceptable)).extracting(TraceJob::gpus, TraceJob::instances).containsExactly(4, 2);
        assertThat(traced.minimumOf(traced.shape(jobs.get(2), IdleMode.Acceptable), IdleMode.Acceptable)).isEqualTo(1);
        assertThat(policies.get(2).elastic().minimumOf(jobs.get(0), IdleMode.Acceptable)).as("minFraction 1: rigid").isZero();

        Files.writeString(dir.resolve("experiment.yaml"), """
                trace: {csv: trace.csv}
                cluster: "4 x 8"
                quotas: {proportionalTo: equal}
                policies:
                  - {name: none, elastic: {worldChangePause: 1m}}
                  - {name: zero, elastic: {minFraction: 0}}
                  - {name: word, elastic: {minFraction: half, pause: 1m}}
                """);
        assertThatThrownBy(() -> ExperimentReader.read(dir.resolve("experiment.yaml")))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems()).extracting(Problem::field)
                        .containsExactlyInAnyOrder("policies[0].elastic", "policies[1].elastic.minFraction", "policies[1].elastic",
                                "policies[2].elastic.minFraction", "policies[2].elastic.pause", "policies[2].elastic"));
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

    @Test
    void theShippedTopologyExperimentComparesThreePlacementsOnRacksAndBlocks() {
        Experiment experiment = ExperimentReader.read(EXAMPLES.resolve("elasticflow-topology.yaml"));
        assertThat(experiment.cluster().topology()).containsExactly(new TopologyLevel("block", 32), new TopologyLevel("rack", 4));
        // 136 nodes: four whole blocks and one of 8 nodes (two racks).
        assertThat(experiment.cluster().describeTopology()).isEqualTo("5 blocks of 32 nodes (the last of 8), 34 racks of 4");
        assertThat(experiment.policies()).extracting(Policy::placement).containsExactly(null, new PlacementRule("rack", false, 2, false),
                new PlacementRule("rack", true, 2, false));
        assertThat(experiment.policies()).allMatch(p -> p.defragmentation() != null && p.idleMode() == IdleMode.Acceptable);
    }

    @Test
    void consecutiveNodesFillEachDomainAndTheLastTakesWhatIsLeft() throws Exception {
        Files.writeString(dir.resolve("trace.csv"), "submit_time,duration,tenant,gpus\n0,10,vision,1\n");
        Files.writeString(dir.resolve("experiment.yaml"), """
                trace: {csv: trace.csv}
                cluster:
                  nodes: [{name: a, count: 3, gpus: 8}, {name: b, count: 4, gpus: 4}]
                  topology: [{level: block, nodes: 4}, {level: rack, nodes: 2}]
                quotas: {proportionalTo: equal}
                defaults: {placement: {level: block}}
                policies:
                  - {name: blind, placement: none}
                  - {name: default}
                  - {name: racks, placement: {level: rack, mode: Preferred, minInstances: 3}}
                  - {name: patient, placement: {level: rack, waitAtMost: 2h}}
                """);
        Experiment experiment = ExperimentReader.read(dir.resolve("experiment.yaml"));
        // The pools in order: a-00000..00002, then b-00000..00003; the last rack and block take what is left.
        assertThat(experiment.cluster().nodes()).extracting(n -> n.name() + " " + n.domains()).containsExactly(
                "a-00000 [block-1, rack-1]", "a-00001 [block-1, rack-1]", "a-00002 [block-1, rack-2]", "b-00000 [block-1, rack-2]",
                "b-00001 [block-2, rack-3]", "b-00002 [block-2, rack-3]", "b-00003 [block-2, rack-4]");
        assertThat(experiment.cluster().describeTopology()).isEqualTo("2 blocks of 4 nodes (the last of 3), 4 racks of 2 (the last of 1)");
        assertThat(experiment.policies()).extracting(Policy::placement).containsExactly(null, new PlacementRule("block", true, 2, false),
                new PlacementRule("rack", false, 3, false), new PlacementRule("rack", true, 2, false, Duration.ofHours(2)));
        assertThat(experiment.policies().get(3).placement().describe()).isEqualTo("rack Required for 2h then Preferred, gangs of 2+ instances");
    }

    static Stream<Arguments> badTopologies() {
        String levels = "[{level: block, nodes: 8}, {level: rack, nodes: 4}]";
        return Stream.of(
                Arguments.of("[{level: block, nodes: 32}, {level: rack, nodes: 5}]", "{level: rack}", "cluster.topology[1].nodes",
                        "must divide the broader level's size (block: 32 nodes), is 5"),
                Arguments.of("[{level: rack, nodes: 4}, {level: block, nodes: 32}]", "{level: rack}", "cluster.topology[1].nodes",
                        "must divide the broader level's size (rack: 4 nodes), is 32"),
                Arguments.of("[{level: rack, nodes: 0}]", "{level: rack}", "cluster.topology[0].nodes", "1"),
                Arguments.of("[{level: rack}]", "{level: rack}", "cluster.topology[0].nodes", "required"),
                Arguments.of("[{level: Rack, nodes: 4}]", "{level: rack}", "cluster.topology[0].level", "lowercase letters"),
                Arguments.of("[{level: none, nodes: 4}]", "{level: rack}", "cluster.topology[0].level", "not 'none'"),
                Arguments.of("[{level: rack, nodes: 8}, {level: rack, nodes: 4}]", "{level: rack}", "cluster.topology[1].level", "'rack' names two levels"),
                Arguments.of("[{level: rack, nodes: 4, per: 2}]", "{level: rack}", "cluster.topology[0].per", "unknown field"),
                Arguments.of("[]", "{level: rack}", "cluster.topology", "at least one level"),
                Arguments.of(levels, "{level: row}", "policies[0].placement.level", "'row' is not a level of cluster.topology (have: block, rack)"),
                Arguments.of(levels, "{mode: Preferred}", "policies[0].placement.level", "is required"),
                Arguments.of(levels, "{level: rack, mode: Sometimes}", "policies[0].placement.mode", "must be Required or Preferred, is 'Sometimes'"),
                Arguments.of(levels, "{level: rack, minInstances: 0}", "policies[0].placement.minInstances", "1"),
                Arguments.of(levels, "{level: rack, sliceSize: 2}", "policies[0].placement.sliceSize", "unknown field"),
                Arguments.of(levels, "{fromTrace: true}", "policies[0].placement.fromTrace", "no job of the trace names a placement"),
                Arguments.of(levels, "{level: rack, mode: Preferred, waitAtMost: 1h}", "policies[0].placement.waitAtMost", "give mode Required"),
                Arguments.of(levels, "{level: rack, waitAtMost: soon}", "policies[0].placement.waitAtMost", "soon"),
                Arguments.of(null, "{level: rack}", "policies[0].placement.level", "the cluster has no topology"));
    }

    @ParameterizedTest(name = "{2}: {3}")
    @MethodSource("badTopologies")
    void badTopologyOrPlacementIsNamedByItsField(String topology, String placement, String field, String message) throws Exception {
        Files.writeString(dir.resolve("trace.csv"), "submit_time,duration,tenant,gpus,instances\n0,10,vision,8,2\n");
        Files.writeString(dir.resolve("experiment.yaml"), """
                trace: {csv: trace.csv}
                cluster: {nodes: [{count: 16, gpus: 8}]%s}
                quotas: {proportionalTo: equal}
                policies: [{name: p, placement: %s}]
                """.formatted(topology == null ? "" : ", topology: " + topology, placement));
        assertThatThrownBy(() -> ExperimentReader.read(dir.resolve("experiment.yaml")))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems())
                        .anySatisfy(p -> {
                            assertThat(p.field()).isEqualTo(field);
                            assertThat(p.message()).contains(message);
                        }));
    }

    @Test
    void aPolicyMayTakeEachJobsPlacementFromTheTrace() throws Exception {
        Files.writeString(dir.resolve("trace.csv"), """
                submit_time,duration,tenant,gpus,instances,placement
                0,10,vision,8,2,rack
                0,10,vision,8,2,block:Preferred
                0,10,vision,8,2,
                """);
        String experiment = """
                trace: {csv: trace.csv}
                cluster: {nodes: [{count: 16, gpus: 8}], topology: [{level: block, nodes: 8}, {level: rack, nodes: 4}]}
                quotas: {proportionalTo: equal}
                policies: [{name: p, placement: {fromTrace: true}}]
                """;
        Files.writeString(dir.resolve("experiment.yaml"), experiment);
        Experiment read = ExperimentReader.read(dir.resolve("experiment.yaml"));
        assertThat(read.trace().jobs()).extracting(TraceJob::placement).containsExactly(new JobPlacement("rack", true),
                new JobPlacement("block", false), null);
        assertThat(read.policies().get(0).placement()).isEqualTo(new PlacementRule(null, true, 2, true));

        Files.writeString(dir.resolve("trace.csv"), "submit_time,duration,tenant,gpus,placement\n0,10,vision,8,row\n");
        assertThatThrownBy(() -> ExperimentReader.read(dir.resolve("experiment.yaml")))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems()).extracting(Problem::field, Problem::message)
                        .containsExactly(tuple("policies[0].placement.fromTrace",
                                "job 0 of the trace asks for level 'row', not a level of cluster.topology (have: block, rack)")));
        Files.writeString(dir.resolve("trace.csv"), "submit_time,duration,tenant,gpus,placement\n0,10,vision,8,rack:Always\n");
        assertThatThrownBy(() -> ExperimentReader.read(dir.resolve("experiment.yaml")))
                .isInstanceOfSatisfying(InvalidInputException.class, e -> assertThat(e.problems()).extracting(Problem::field)
                        .containsExactly("trace.csv:2 placement"));
    }
}
