package io.slipstream.simulator.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.QuotaType;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.WithinQuota;
import io.slipstream.scheduler.Allocation;
import io.slipstream.scheduler.Locality;
import io.slipstream.scheduler.QuotaState;
import io.slipstream.simulator.input.ClusterSpec;
import io.slipstream.simulator.input.JobPlacement;
import io.slipstream.simulator.input.NodePool;
import io.slipstream.simulator.input.PlacementRule;
import io.slipstream.simulator.input.Policy;
import io.slipstream.simulator.input.TopologyLevel;
import io.slipstream.simulator.input.Trace;
import io.slipstream.simulator.input.TraceJob;
import io.slipstream.simulator.report.PolicyResult;
import io.slipstream.simulator.report.TopologyResult;
import io.slipstream.api.codec.Json;
import io.slipstream.simulator.Simulator;
import io.slipstream.simulator.input.Experiment;
import io.slipstream.simulator.report.HtmlReport;
import io.slipstream.simulator.report.JsonReport;
import io.slipstream.simulator.report.TableReport;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import tools.jackson.databind.JsonNode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * A gang on a hand-made cluster with a topology: 8 nodes of 8 GPUs, blocks of 4 nodes, racks of 2 (rack-1: n-00000 and
 * n-00001, ...; block-1: n-00000..00003).
 */
class TopologySimulationTest {
    private static final ClusterSpec RACKS = new ClusterSpec(List.of(new NodePool("n", 8, 8, "gpu", 96_000, 1L << 40)),
            List.of(new TopologyLevel("block", 4), new TopologyLevel("rack", 2)));

    /**
     * Eight single-node jobs fill the nodes in order at 0 s; those on n-00000 (rack-1, block-1) and n-00004 (rack-3,
     * block-2) end at 100 s, the one on n-00001 at 500 s, the others much later. A gang of two whole nodes arrives at
     * 50 s.
     */
    private static Trace trace() {
        List<TraceJob> jobs = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            jobs.add(new TraceJob(i, 0, i == 0 || i == 4 ? 100_000 : i == 1 ? 500_000 : 10_000_000, "a", 8, 1, 0, null));
        }
        jobs.add(new TraceJob(8, 50_000, 1_000_000, "a", 8, 2, 0, null));
        return new Trace("test", jobs);
    }

    @ParameterizedTest(name = "idle mode {0}")
    @ValueSource(strings = {"Disabled", "Acceptable"})
    void aRequiredGangWaitsForOneRackAndTheReportCountsWhereEachGangLanded(String mode) {
        // Disabled: a's quota guarantees the whole cluster, the gang waits WaitingForTopology. Acceptable: a is
        // guaranteed nothing and borrows everything, the gang waits WaitingForIdleCapacity with the topology's message.
        IdleMode idle = IdleMode.valueOf(mode);
        TopologyResult blind = run(idle, null).topology();
        // At 100 s n-00000 and n-00004 are free: the gang starts there, in no one block. Delay 50 s.
        assertThat(blind.gangs()).isEqualTo(1);
        assertThat(blind.constrained()).isZero();
        assertThat(blind.landed()).containsExactly(0, 0, 1); // block, rack, none
        assertThat(blind.fitting()).isEqualTo(1);
        assertThat(blind.inSmallestDomain()).isZero(); // a rack holds two nodes
        assertThat(blind.gangQueueDelay().values()).containsExactly(50.0);
        assertThat(blind.topologyWait().count() + blind.borrowerTopologyWait().count()).isZero();

        // Preferred: no rack has two free nodes at 100 s, nor does a block: it starts there anyway.
        TopologyResult preferred = run(idle, new PlacementRule("rack", false, 2, false)).topology();
        assertThat(preferred.constrained()).isEqualTo(1);
        assertThat(preferred.landed()).containsExactly(0, 0, 1);
        assertThat(preferred.constrainedInSmallestDomain()).isZero();
        assertThat(preferred.topologyWait().count() + preferred.borrowerTopologyWait().count()).isZero();

        // Required: it waits from the 100 s cycle, when the free nodes would hold it but no rack does, to 500 s, when
        // rack-1 is free: 400 s for the topology alone, 450 s queued.
        PolicyResult required = run(idle, new PlacementRule("rack", true, 2, false));
        TopologyResult t = required.topology();
        assertThat(t.landed()).containsExactly(0, 1, 0);
        assertThat(t.inSmallestDomain()).isEqualTo(1);
        assertThat(t.constrainedInSmallestDomain()).isEqualTo(1);
        assertThat(t.inSmallestDomainFraction()).isEqualTo(1.0);
        assertThat((idle == IdleMode.Disabled ? t.topologyWait() : t.borrowerTopologyWait()).values()).containsExactly(400.0);
        assertThat((idle == IdleMode.Disabled ? t.borrowerTopologyWait() : t.topologyWait()).count()).isZero();
        assertThat(t.gangQueueDelay().values()).containsExactly(450.0);
        assertThat(t.requiredOutsideDomain()).isZero();
        assertThat(required.completed()).isEqualTo(9);

        // Required for at most 100 s of waiting for the topology alone: its clock starts at the 100 s cycle (two free
        // nodes, no free rack), and at 200 s it becomes Preferred and starts on n-00000 and n-00004 (the relax runs a
        // cycle of its own): 150 s queued, 100 s of it for the topology.
        TopologyResult relaxed = run(idle, new PlacementRule("rack", true, 2, false, Duration.ofSeconds(100))).topology();
        assertThat(relaxed.startedRelaxed()).isEqualTo(1);
        assertThat(relaxed.landed()).containsExactly(0, 0, 1);
        assertThat(relaxed.gangQueueDelay().values()).containsExactly(150.0);
        assertThat((idle == IdleMode.Disabled ? relaxed.topologyWait() : relaxed.borrowerTopologyWait()).values()).containsExactly(100.0);
        assertThat(relaxed.requiredOutsideDomain()).isZero();

        // A rule for gangs of 3+ instances leaves this one alone.
        assertThat(run(idle, new PlacementRule("rack", true, 3, false)).topology().constrained()).isZero();
    }

    @Test
    void theTableJsonAndHtmlReportsShowWhereGangsLandedAndWhatTheyWaited() throws Exception {
        List<Policy> policies = List.of(named("blind", policy(IdleMode.Disabled, null)),
                named("required", policy(IdleMode.Disabled, new PlacementRule("rack", true, 2, false))));
        Experiment experiment = new Experiment("racks", 1, trace(), RACKS, policies, List.of());
        List<PolicyResult> results = Simulator.run(experiment, Set.of(), null);

        StringWriter table = new StringWriter();
        TableReport.print(experiment, results, new PrintWriter(table));
        assertThat(table.toString()).contains("Topology (2 blocks of 4 nodes, 4 racks of 2):")
                .containsPattern("blind +- +1 +0 +rack 0, block 0, none 1 +0 \\(0\\.0%\\)")
                .containsPattern("required +rack Required, gangs of 2\\+ instances +1 +1 +rack 1, block 0, none 0 +1 \\(100\\.0%\\)");

        JsonNode json = Json.mapper().readTree(JsonReport.render(experiment, results));
        JsonNode required = json.get(1).get("topology");
        assertThat(required.get("compactAt").get("rack").asInt()).isEqualTo(1);
        assertThat(required.get("inSmallestDomainFraction").asDouble()).isEqualTo(1.0);
        assertThat(required.get("waitedForTopology").asInt()).isEqualTo(1);
        assertThat(required.get("meanTopologyWaitSeconds").asDouble()).isEqualTo(400.0);
        assertThat(required.get("gangMeanQueueDelaySeconds").asDouble()).isEqualTo(450.0);
        assertThat(json.get(1).get("parameters").get("placement").asString()).isEqualTo("rack Required, gangs of 2+ instances");

        assertThat(HtmlReport.render(experiment, results)).contains("<h2>Topology</h2>").contains("<td>rack 1, block 0, none 0</td>");
    }

    private static Policy named(String name, Policy p) {
        return new Policy(name, p.quotas(), p.quotasSource(), p.idleMode(), p.gracePeriod(), p.checkpointInterval(), p.checkpointSave(),
                p.checkpointOnNotice(), p.restartOverhead(), p.schedulingInterval(), p.meanTimeBetweenFailures(), p.defragmentation(), p.fairSharing(),
                p.placement());
    }

    @Test
    void aClusterWithoutATopologyReportsNone() {
        ClusterSpec flat = new ClusterSpec(RACKS.pools());
        assertThat(new Simulation(trace(), flat, policy(IdleMode.Disabled, null), 1, null).run().topology()).isNull();
    }

    @Test
    void theRuleAsksForTheSmallestDomainThatCouldHoldTheGang() {
        DomainMap domains = new DomainMap(RACKS.nodes(), RACKS.topology());
        PlacementRule rack = new PlacementRule("rack", true, 2, false);
        // Two whole nodes: a rack. Three or four: a block (a rack has two nodes). Nine: no domain, not constrained.
        assertThat(domains.localityOf(job(8, 2, null), rack)).isEqualTo(new Locality(1, "rack", true));
        assertThat(domains.localityOf(job(8, 3, null), rack)).isEqualTo(new Locality(0, "block", true));
        assertThat(domains.localityOf(job(8, 9, null), rack)).isNull();
        assertThat(domains.localityOf(job(8, 1, null), rack)).isNull(); // below minInstances
        // Four 4-GPU instances fit one rack (two per node).
        assertThat(domains.smallestLevel(job(4, 4, null))).isEqualTo(1);
        assertThat(domains.smallestLevel(job(8, 4, null))).isEqualTo(0);
        assertThat(domains.smallestLevel(job(8, 9, null))).isEqualTo(-1);
        // The trace's placement is kept as written, even where no domain could hold it (the server would refuse it).
        PlacementRule fromTrace = new PlacementRule(null, true, 2, true);
        assertThat(domains.localityOf(job(8, 3, new JobPlacement("rack", false)), fromTrace)).isEqualTo(new Locality(1, "rack", false));
        assertThat(domains.localityOf(job(8, 3, null), fromTrace)).isNull();
        // Where gangs landed: the narrowest level whose one domain holds every node.
        assertThat(domains.landedLevel(on("n-00000", "n-00001"))).isEqualTo(1);
        assertThat(domains.landedLevel(on("n-00000", "n-00003"))).isEqualTo(0);
        assertThat(domains.landedLevel(on("n-00003", "n-00004"))).isEqualTo(-1);
    }

    private static TraceJob job(int gpus, int instances, JobPlacement placement) {
        return new TraceJob(0, 0, 1000, "a", gpus, instances, 0, null, placement);
    }

    private static List<Allocation> on(String... nodes) {
        List<Allocation> allocations = new ArrayList<>();
        for (int i = 0; i < nodes.length; i++) {
            allocations.add(new Allocation(i, nodes[i], new Resources(0, 0, 8, null), List.of(0, 1, 2, 3, 4, 5, 6, 7)));
        }
        return allocations;
    }

    private static PolicyResult run(IdleMode mode, PlacementRule rule) {
        return new Simulation(trace(), RACKS, policy(mode, rule), 1, null).run();
    }

    private static Policy policy(IdleMode mode, PlacementRule rule) {
        int guaranteed = mode == IdleMode.Disabled ? 64 : 0;
        List<QuotaState> quotas = List.of(quota("shared/gpus", null, 64), quota("a/gpus", "shared/gpus", guaranteed),
                quota("b/gpus", "shared/gpus", 64 - guaranteed));
        return new Policy("p", quotas, "test", mode, Duration.ofSeconds(30), Duration.ZERO, Duration.ZERO, false, Duration.ZERO, Duration.ofSeconds(10), null,
                null, io.slipstream.scheduler.FairSharingPreemption.Never, rule);
    }

    private static QuotaState quota(String id, String parent, int gpus) {
        return new QuotaState(QuotaId.parse(id), QuotaType.General, null, parent == null ? null : QuotaId.parse(parent), new Resources(0, 0, gpus, null), null,
                WithinQuota.Never);
    }
}
