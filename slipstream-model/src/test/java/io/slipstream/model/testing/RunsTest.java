package io.slipstream.model.testing;

import static io.slipstream.model.testing.Runs.T0;
import static io.slipstream.model.testing.Runs.aRun;
import static io.slipstream.model.testing.Runs.anInstance;
import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunState;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RunsTest {
    @Test
    void aRunIsQueuedWithDefaultsUntilToldOtherwise() {
        RunRecord run = aRun().build();
        assertThat(run.state()).isEqualTo(RunState.QUEUED);
        assertThat(run.workspace()).isEqualTo("team-a");
        assertThat(run.job()).isEqualTo("job");
        assertThat(run.createdAt()).isEqualTo(T0);
        assertThat(run.version()).isZero();
        assertThat(run.spec()).isEqualTo(aJob("job").spec());
        assertThat(Runs.created(run).reason()).isEqualTo("Submitted");
    }

    @Test
    void stepsGoThroughTheRunsOwnMoves() {
        RunRecord running = aRun("train").workspace("team-b").spec(aJob("train").workspace("team-b").replicas(2)).running(T0.plusSeconds(5))
                .idempotencyKey("k").version(3).build();
        assertThat(running.state()).isEqualTo(RunState.RUNNING);
        assertThat(running.realTimeResources()).isEqualTo(RealTimeResources.InQuota);
        assertThat(running.attemptStartedAt()).isEqualTo(T0.plusSeconds(5));
        assertThat(running.origin().idempotencyKey()).isEqualTo("k");
        assertThat(running.version()).isEqualTo(3);
        RunRecord requeued = aRun().admitted(RealTimeResources.NotInQuota, T0).then(r -> r.preempting(null, "Reclaimed"))
                .then(r -> r.requeued("Preempted", T0.plusSeconds(1))).build();
        assertThat(requeued.attempt()).isEqualTo(2);
        assertThat(requeued.preemptions()).isEqualTo(1);
        assertThatThrownBy(() -> aRun().finished(RunState.SUCCEEDED, "x", T0).running(T0).build()).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void instancesArePlacedThenMoved() {
        RunRecord run = aRun().build();
        InstanceRecord first = anInstance(run).build();
        assertThat(first.id()).isEqualTo(new InstanceId(run.id(), 1, 0));
        assertThat(first.state()).isEqualTo(InstanceState.PENDING);
        assertThat(first.node()).isEqualTo("node-1");
        InstanceRecord done = anInstance(run).rank(2).group("worker", 1).node("node-2").gpus(0, 1).running(Map.of("pid", "7"), T0)
                .finished(InstanceState.FAILED, 1, "Exited", T0.plusSeconds(1)).build();
        assertThat(done.displayName()).isEqualTo("worker-1");
        assertThat(done.gpus()).containsExactly(0, 1);
        assertThat(done.handle()).containsEntry("pid", "7");
        assertThat(done.exitCode()).isEqualTo(1);
        List<InstanceRecord> gang = anInstance(run).node("node-3").gang(3);
        assertThat(gang).extracting(InstanceRecord::displayName).containsExactly("main-0", "main-1", "main-2");
        assertThat(gang).extracting(InstanceRecord::node).containsOnly("node-3");
    }
}
