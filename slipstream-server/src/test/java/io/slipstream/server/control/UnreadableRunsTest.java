package io.slipstream.server.control;

import static io.slipstream.model.testing.Runs.aRun;
import static io.slipstream.model.testing.Runs.anInstance;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RunId;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import io.slipstream.model.testing.Runs;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class UnreadableRunsTest {
    @Test
    void nodesWithLiveInstancesOfRunsTheLoopCannotReadAreHeld() {
        RunRecord readable = aRun("readable").build();
        RunRecord unreadable = aRun("unreadable").build();
        InstanceRecord ours = anInstance(readable).node("node-1").build();
        InstanceRecord live = anInstance(unreadable).node("node-2").build();
        InstanceRecord ended = anInstance(unreadable).rank(1).node("node-3").finished(InstanceState.SUCCEEDED, 0, "Succeeded", Runs.T0).build();
        Map<RunId, List<InstanceRecord>> instances = Map.of(readable.id(), List.of(ours), unreadable.id(), List.of(live, ended));

        assertThat(UnreadableRuns.heldNodes(instances, Set.of(readable.id()))).containsExactly("node-2");
        assertThat(UnreadableRuns.heldNodes(instances, Set.of(readable.id(), unreadable.id()))).isEmpty();
    }
}
