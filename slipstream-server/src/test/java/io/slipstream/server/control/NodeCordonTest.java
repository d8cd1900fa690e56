package io.slipstream.server.control;

import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.api.wire.NodeView;
import io.slipstream.executor.testing.FakeExecutor;
import io.slipstream.model.EventType;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.server.auth.Principal;
import io.slipstream.server.service.NodeService;
import io.slipstream.store.Store;
import io.slipstream.store.memory.InMemoryStore;
import io.slipstream.testing.TestingClock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Cordon and drain, cycle by cycle over the in-memory store, a scripted executor of two 8-GPU nodes and a fake clock:
 * what the node service declares and what the control loop then does with the runs.
 */
class NodeCordonTest {
    private static final Principal ADMIN = new Principal("root", true, Set.of(), null);
    private static final JobSpec WHOLE_NODE = aJob("job").gpus(8).preemptionGrace(Duration.ofMinutes(2)).spec();

    private final TestingClock clock = new TestingClock();
    private Store store;
    private FakeExecutor executor;
    private ControlLoop loop;
    private NodeService nodes;

    @BeforeEach
    void setUp() {
        store = new InMemoryStore();
        store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of("team-a", null), new WorkspaceSpec(List.of())), clock.instant()));
        executor = new FakeExecutor(clock, 2, 8);
        loop = new ControlLoop(LoopParts.of(store, executor, clock));
        nodes = new NodeService(store, executor, () -> {
        }, clock);
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    private RunId submit(JobSpec spec) {
        RunRecord run = RunRecord.queued(RunId.newFor("job"), "team-a", "job", 1, spec, clock.instant());
        clock.advance(Duration.ofSeconds(1));
        return store.write(tx -> tx.createRun(run, RunEvent.of(run.id(), run.createdAt(), EventType.StateChanged, "QUEUED", "Submitted", null, null))).id();
    }

    private RunRecord run(RunId id) {
        return store.runs().get(id).orElseThrow();
    }

    private InstanceRecord instance(RunId id) {
        RunRecord run = run(id);
        return store.runs().instancesOf(id).stream().filter(i -> i.id().attempt() == run.attempt()).findFirst().orElseThrow();
    }

    @Test
    void aCordonedNodeKeepsWhatRunsThereAndTakesNothingNewUntilUncordoned() {
        RunId first = submit(WHOLE_NODE);
        loop.cycle();
        String node = instance(first).node();
        NodeView cordoned = nodes.cordon(ADMIN, node, "kernel upgrade");
        assertThat(cordoned.state()).isEqualTo("Cordoned");
        assertThat(cordoned.reason()).isEqualTo("by root: kernel upgrade");
        assertThat(cordoned.since()).isEqualTo(clock.instant());
        assertThat(cordoned.downSince()).as("it is not down").isNull();

        RunId second = submit(WHOLE_NODE);
        RunId third = submit(WHOLE_NODE);
        loop.cycle();
        assertThat(run(first).state()).as("what runs there keeps running").isEqualTo(RunState.RUNNING);
        assertThat(executor.terminations()).isEmpty();
        assertThat(instance(second).node()).as("the other node takes the next run").isNotEqualTo(node);
        assertThat(run(third).state()).as("nothing new on the cordoned node").isEqualTo(RunState.QUEUED);

        executor.exit(instance(first).id(), 0);
        loop.cycle();
        loop.cycle();
        assertThat(run(first).state()).isEqualTo(RunState.SUCCEEDED);
        assertThat(run(third).state()).as("not even once it is empty").isEqualTo(RunState.QUEUED);
        assertThat(nodes.get(node).state()).isEqualTo("Cordoned");

        assertThat(nodes.uncordon(ADMIN, node).state()).isEqualTo("Ready");
        loop.cycle();
        assertThat(instance(third).node()).isEqualTo(node);
    }

    @Test
    void aDrainMovesTheRunsOffWithNoticeAndGraceAsAPreemptionAndTheNodeStaysCordoned() {
        RunId id = submit(WHOLE_NODE);
        loop.cycle();
        InstanceRecord before = instance(id);
        String node = before.node();

        assertThat(nodes.drain(ADMIN, node, "kernel upgrade").state()).isEqualTo("Draining");
        loop.cycle();
        RunRecord moving = run(id);
        assertThat(moving.state()).isEqualTo(RunState.TERMINATING);
        assertThat(moving.reason()).isEqualTo("NodeDrain: node " + node + " is drained (by root: kernel upgrade)");
        assertThat(executor.terminations().get(before.id())).as("the notice, and the job's preemption grace period")
                .isEqualTo("NodeDrain: node " + node + " is drained (by root: kernel upgrade) / PT2M");

        clock.advance(Duration.ofSeconds(30)); // it saves a checkpoint on the notice, then exits
        executor.confirmTerminated(before.id(), 143);
        loop.cycle();
        InstanceRecord stopped = store.runs().instance(before.id()).orElseThrow();
        assertThat(stopped.state()).isEqualTo(InstanceState.RESOURCE_PREEMPTED);
        assertThat(stopped.reason()).isEqualTo("Preempted: NodeDrain (exit code 143)");

        RunRecord moved = run(id);
        assertThat(moved.state()).as("queued again, and placed on the other node").isIn(RunState.STARTING, RunState.RUNNING);
        assertThat(moved.attempt()).isEqualTo(2);
        assertThat(moved.preemptions()).isEqualTo(1);
        assertThat(moved.faults().failures()).as("a drain is no failure").isZero();
        assertThat(instance(id).node()).isNotEqualTo(node);
        assertThat(store.runs().events(id, 0, 100)).extracting(RunEvent::reason)
                .contains("Preempted: NodeDrain: node " + node + " is drained (by root: kernel upgrade)");

        NodeView drained = nodes.get(node);
        assertThat(drained.state()).as("drained, it stays cordoned").isEqualTo("Cordoned");
        assertThat(drained.instances()).isZero();
        assertThat(drained.reason()).isEqualTo("by root: kernel upgrade");
        assertThat(nodes.drain(ADMIN, node, "again").reason()).as("idempotent: the first drain is kept").isEqualTo("by root: kernel upgrade");
    }

    @Test
    void aRunThatCannotGoElsewhereWaitsAndNeverComesBackToTheDrainedNode() {
        RunId busy = submit(WHOLE_NODE);
        RunId drained = submit(WHOLE_NODE);
        loop.cycle();
        String node = instance(drained).node();
        nodes.drain(ADMIN, node, null);
        loop.cycle();
        assertThat(run(drained).reason()).isEqualTo("NodeDrain: node " + node + " is drained (by root)");
        executor.confirmTerminated(instance(drained).id(), 143);
        loop.cycle();
        loop.cycle();
        assertThat(run(drained).state()).as("the other node is busy").isEqualTo(RunState.QUEUED);
        assertThat(run(drained).reason()).startsWith("Preempted: NodeDrain");
        assertThat(run(busy).state()).isEqualTo(RunState.RUNNING);

        assertThat(nodes.uncordon(ADMIN, node).state()).isEqualTo("Ready");
        loop.cycle();
        assertThat(run(drained).state()).isIn(RunState.STARTING, RunState.RUNNING);
        assertThat(instance(drained).node()).isEqualTo(node);
    }

    @Test
    void downWinsOverACordonAndStopsWhatRunsThereAtOnce() {
        RunId id = submit(WHOLE_NODE);
        loop.cycle();
        InstanceRecord before = instance(id);
        nodes.cordon(ADMIN, before.node(), null);
        assertThat(nodes.down(ADMIN, before.node(), "power supply").state()).isEqualTo("Down");
        assertThat(nodes.uncordon(ADMIN, before.node()).state()).as("uncordon does not lift down").isEqualTo("Down");
        assertThat(nodes.drain(ADMIN, before.node(), null).reason()).isEqualTo("power supply");
        loop.cycle();
        assertThat(executor.terminations().get(before.id())).isEqualTo("NodeLost: node " + before.node() + " is down (power supply) / PT0S");

        executor.confirmTerminated(before.id(), 137);
        loop.cycle();
        assertThat(store.runs().instance(before.id()).orElseThrow().state()).isEqualTo(InstanceState.NODE_LOST);
        assertThat(nodes.up(ADMIN, before.node()).state()).as("up: Ready, the cordon replaced by the down").isEqualTo("Ready");
    }
}
