package io.slipstream.server.api;

import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.wire.RunEventView;
import io.slipstream.model.ElasticWorld;
import io.slipstream.model.EventType;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.model.lifecycle.RunLifecycle;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Node names hidden in reasons: whole names only, every one of them. */
class ViewsTest {
    @ParameterizedTest
    @CsvSource(delimiter = '|', nullValues = "NULL", value = {
        "NodeLost: node node-1 is down (maintenance)         | NodeLost: node hidden is down (maintenance)",
        "NodeLost: node node-10 is down                      | NodeLost: node node-10 is down",
        "NodeLost: main-0 (NodeLost: node node-1 is down)   | NodeLost: main-0 (NodeLost: node hidden is down)",
        "lost on gpu-a.example.com. node-1, node-1           | lost on hidden. hidden, hidden",
        "sub.gpu-a.example.com                               | sub.gpu-a.example.com",
        "Completed                                           | Completed",
        "NULL                                                | NULL",
    })
    void namesOfHiddenNodesAreReplacedAsWholeWords(String text, String expected) {
        assertThat(Views.redact(text, Set.of("node-1", "gpu-a.example.com"))).isEqualTo(expected);
    }

    /**
     * An elastic borrower's slot 3 was removed by a shrink while its borrowed node went down (its end names the node),
     * then grown again on another node: the record of the slot names only the new node, its history still the old one.
     */
    @Test
    void aNodeThatASlotOfAnElasticRunLeftIsNotNamedOnceTheSlotIsGrownElsewhere() {
        Instant t0 = Instant.parse("2026-03-01T08:00:00Z");
        RunRecord run = RunRecord.queued(new RunId("train-r1"), "team-b", "train", 1, aJob("train").replicas(4).minReplicas(1).gpus(1).spec(), t0)
                .admitted(RealTimeResources.NotInQuota, "Admitted", t0).moveTo(RunState.RUNNING, "AllInstancesRunning", t0)
                .withWorld(new ElasticWorld(3, List.of(0, 1, 2, 3), Set.of(), List.of(), false));
        List<InstanceRecord> instances = new ArrayList<>();
        for (int rank = 0; rank < 4; rank++) {
            instances.add(InstanceRecord.pending(new InstanceId(run.id(), 1, rank), "main", rank, "node-" + (rank + 1), List.of(0))
                    .running(Map.of("pid", "1"), t0));
        }
        String lost = RunLifecycle.nodeLost("node-4", "maintenance");
        InstanceRecord gone = instances.get(3).stopRequested(t0).finished(InstanceState.NODE_LOST, 143, lost, t0.plusSeconds(5));
        instances.set(3, gone.regrown("node-9", List.of(0), null).running(Map.of("pid", "2"), t0.plusSeconds(60)));
        RunEvent exited = RunEvent.of(run.id(), t0.plusSeconds(5), EventType.InstanceExited, "NODE_LOST", lost, "exit code 143", "main-3");

        List<RunEventView> seen = Views.events(run, instances, List.of(exited), false);
        assertThat(seen.get(0).reason()).as("the borrowed node it left").isEqualTo("NodeLost: node hidden is down (maintenance)");
        assertThat(Views.events(run, instances, List.of(exited), true).get(0).reason()).as("admins see it").contains("node-4");
    }
}
