package io.slipstream.server.control;

import static io.slipstream.model.testing.Runs.aRun;
import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.testing.FakeExecutor;
import io.slipstream.model.EventType;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.model.testing.Runs;
import io.slipstream.store.Store;
import io.slipstream.store.memory.InMemoryStore;
import io.slipstream.testing.TestingClock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An elastic run through the control loop, one cycle at a time, over an in-memory store and a steered executor: team
 * B's run (1 to 4 instances of one GPU, on idle capacity) grows onto 4 idle one-GPU nodes; team A's guaranteed run of
 * 2 reclaims 2 of them: B shrinks to 2 without going back to the queue, its survivors restarted in place in a world of
 * 2; A finishes: B grows back to 4 (docs/elastic.md).
 */
class ElasticRunTest {
    private final TestingClock clock = new TestingClock();
    private Store store;
    private FakeExecutor executor;
    private ControlLoop loop;

    @BeforeEach
    void setUp() {
        store = new InMemoryStore();
        executor = new FakeExecutor(clock, 4, 1).restartingInPlace();
        loop = new ControlLoop(LoopParts.of(store, executor, clock));
        quota("team-a", "gpu", 4);
        quota("team-b", "gpu", 0);
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    @Test
    void anElasticBorrowerShrinksForAReclaimAndGrowsBackWithoutLeavingItsAttempt() {
        RunId b = submitIn("team-b", aJob("train").replicas(4).minReplicas(1).gpus(1).cpu(1).memoryGi(8).quota("gpu").idle(IdleMode.OnlyIdle)
                .preemptionGrace(Duration.ofSeconds(20)).spec());
        loop.cycle();
        assertThat(run(b).state()).isEqualTo(RunState.RUNNING);
        assertThat(run(b).world().members()).as("admitted whole: 4 idle nodes").containsExactly(0, 1, 2, 3);
        assertThat(env(b, 3)).containsEntry("WORLD_SIZE", "4").containsEntry("RANK", "3").containsEntry("SLIPSTREAM_WORLD_VERSION", "1");

        RunId a = submitIn("team-a", aJob("owner").replicas(2).gpus(1).cpu(1).memoryGi(8).quota("gpu").spec());
        loop.cycle();
        RunRecord shrinking = run(b);
        assertThat(shrinking.state()).as("shrunk, not stopped").isEqualTo(RunState.RUNNING);
        assertThat(shrinking.attempt()).isEqualTo(1);
        assertThat(shrinking.world().members()).containsExactly(0, 1);
        assertThat(shrinking.world().changing()).isTrue();
        assertThat(executor.terminations().get(new InstanceId(b, 1, 3))).startsWith("Shrunk: ").endsWith("PT20S");
        assertThat(executor.terminations().get(new InstanceId(b, 1, 0))).startsWith("WorldChange: the run goes on with 2 instance(s) in world 2");
        assertThat(run(a).state()).as("waits for the capacity its reclaim frees").isEqualTo(RunState.QUEUED);

        executor.confirmTerminated(new InstanceId(b, 1, 2), 143);
        executor.confirmTerminated(new InstanceId(b, 1, 3), 143);
        loop.cycle();
        assertThat(run(a).state()).as("the shrunk instances are gone: the owner runs").isEqualTo(RunState.RUNNING);
        assertThat(run(b).world().changing()).as("its survivors still save").isTrue();

        executor.confirmTerminated(new InstanceId(b, 1, 0), 143);
        executor.confirmTerminated(new InstanceId(b, 1, 1), 143);
        loop.cycle();
        RunRecord shrunk = run(b);
        assertThat(shrunk.world().changing()).isFalse();
        assertThat(shrunk.faults().failures()).as("no failure").isZero();
        assertThat(shrunk.preemptions()).as("no preemption: it never left").isZero();
        assertThat(instances(b)).filteredOn(i -> i.id().rank() < 2).allSatisfy(i -> {
            assertThat(i.state()).isEqualTo(InstanceState.RUNNING);
            assertThat(i.restarts()).isEqualTo(1);
        });
        assertThat(env(b, 1)).containsEntry("WORLD_SIZE", "2").containsEntry("RANK", "1").containsEntry("SLIPSTREAM_WORLD_VERSION", "2");
        assertThat(executor.launched().get(new InstanceId(b, 1, 1)).metadata().instances()).hasSize(2);

        executor.exit(new InstanceId(a, 1, 0), 0);
        executor.exit(new InstanceId(a, 1, 1), 0);
        loop.cycle();
        assertThat(run(a).state()).isEqualTo(RunState.SUCCEEDED);
        assertThat(run(b).world().members()).as("grown back onto the freed nodes").containsExactly(0, 1, 2, 3);
        assertThat(run(b).world().version()).isEqualTo(3);
        assertThat(executor.terminations().get(new InstanceId(b, 1, 0))).startsWith("WorldChange: the run goes on with 4 instance(s) in world 3");
        executor.confirmTerminated(new InstanceId(b, 1, 0), 143);
        executor.confirmTerminated(new InstanceId(b, 1, 1), 143);
        loop.cycle();
        assertThat(instances(b)).extracting(InstanceRecord::state).containsOnly(InstanceState.RUNNING);
        assertThat(env(b, 3)).containsEntry("WORLD_SIZE", "4").containsEntry("RANK", "3").containsEntry("SLIPSTREAM_WORLD_VERSION", "3");
        assertThat(run(b).attempt()).isEqualTo(1);
        assertThat(run(b).state()).isEqualTo(RunState.RUNNING);
        assertThat(store.runs().events(b, 0, 100)).filteredOn(e -> e.type() == EventType.WorldChanged).extracting(RunEvent::reason)
                .containsExactly("Shrunk", "WorldStarted", "Grown", "WorldStarted");

        for (int rank = 0; rank < 4; rank++) {
            executor.exit(new InstanceId(b, 1, rank), 0);
        }
        loop.cycle();
        assertThat(run(b).state()).isEqualTo(RunState.SUCCEEDED);
    }

    @Test
    void aGuaranteedElasticRunsExtrasOnIdleCapacityStandOnTheirOwn() {
        quota("team-c", "small", 1);
        RunId c = submitIn("team-c", aJob("train").replicas(3).minReplicas(1).gpus(1).cpu(1).memoryGi(8).quota("small")
                .idle(IdleMode.Acceptable).spec());
        loop.cycle();
        RunRecord run = run(c);
        assertThat(run.realTimeResources()).isEqualTo(RealTimeResources.InQuota);
        assertThat(run.world().members()).containsExactly(0, 1, 2);
        assertThat(run.world().borrowed()).as("beyond its guarantee of one GPU").containsExactly(1, 2);
        assertThat(run.world().notInQuota(run.realTimeResources())).isEqualTo(2);
    }

    private Map<String, String> env(RunId id, int rank) {
        LaunchSpec spec = executor.launched().get(new InstanceId(id, 1, rank));
        return spec.env();
    }

    private void quota(String workspace, String name, int gpus) {
        if (store.documents().get(io.slipstream.api.spec.Kind.Workspace, null, workspace).isEmpty()) {
            store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of(workspace, null), new WorkspaceSpec(List.of())), clock.instant()));
        }
        var min = new io.slipstream.api.spec.Resources(gpus * 4000L, gpus * (32L << 30), gpus, "sim-gpu");
        store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of(name, workspace),
                new io.slipstream.api.spec.QuotaSpec(io.slipstream.api.spec.QuotaType.Dedicated, min, null, null)), clock.instant()));
    }

    private RunId submitIn(String workspace, JobSpec spec) {
        RunRecord run = aRun().workspace(workspace).spec(spec).createdAt(clock.instant()).build();
        clock.advance(Duration.ofSeconds(1));
        return store.write(tx -> tx.createRun(run, Runs.created(run))).id();
    }

    private RunRecord run(RunId id) {
        return store.runs().get(id).orElseThrow();
    }

    private List<InstanceRecord> instances(RunId id) {
        return store.runs().instancesOf(id);
    }
}
