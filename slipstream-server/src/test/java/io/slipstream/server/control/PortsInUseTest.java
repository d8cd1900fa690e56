package io.slipstream.server.control;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.Endpoint;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorContext;
import io.slipstream.executor.simulated.SimulatedExecutorFactory;
import io.slipstream.executor.simulated.SimulatedExecutorSettings;
import io.slipstream.executor.testing.FakeExecutor;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Endpoints avoid the ports of their own port domain: the whole cluster on one machine, each node where nodes are hosts. */
class PortsInUseTest {
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-07T12:00:00Z"), ZoneOffset.UTC);
    private static final InstanceId HELD = new InstanceId(new RunId("held"), 1, 0);
    private static final InstanceId NEW = new InstanceId(new RunId("new"), 1, 0);

    @TempDir
    Path dataDir;

    private static Map<RunId, List<io.slipstream.model.InstanceRecord>> holding(InstanceState state, int... ports) {
        var held = io.slipstream.model.InstanceRecord.pending(HELD, "main", 0, "node-1", List.of(),
                new Endpoint("node-1", "node-1", null, java.util.Arrays.stream(ports).boxed().toList()));
        return Map.of(HELD.runId(), List.of(state == InstanceState.PENDING ? held : held.finished(state, 0, "done", CLOCK.instant())));
    }

    private static Endpoint endpoint(Executor executor, PortsInUse ports, String node) {
        Endpoint given = executor.endpoint(NEW, "w", "main-0", node, 1, ports.takenOn(node));
        ports.take(node, given.ports());
        return given;
    }

    /** The simulated executor, made as the server makes it: its nodes stand for hosts of their own. */
    private Executor simulated() {
        return new SimulatedExecutorFactory().create(SimulatedExecutorSettings.defaults(), new ExecutorContext() {
            @Override
            public Path dataDir() {
                return dataDir;
            }

            @Override
            public Clock clock() {
                return CLOCK;
            }

            @Override
            public java.util.Optional<Path> instanceTools() {
                return java.util.Optional.empty();
            }
        });
    }

    @Test
    void nodesOfHostsOfTheirOwnReuseEachOthersPorts() {
        try (Executor simulated = simulated()) {
            PortsInUse ports = PortsInUse.of(simulated, Map.of(), holding(InstanceState.PENDING, 1024, 1025));
            assertThat(endpoint(simulated, ports, "node-2").ports()).containsExactly(1024);
            assertThat(endpoint(simulated, ports, "node-1").ports()).containsExactly(1026);
            assertThat(endpoint(simulated, ports, "node-2").ports()).as("taken earlier in the cycle").containsExactly(1025);
        }
    }

    @Test
    void nodesOfOneMachineShareTheirPorts() {
        FakeExecutor fake = new FakeExecutor(CLOCK, 2, 0); // the default domain: every node in one
        PortsInUse ports = PortsInUse.of(fake, Map.of(), holding(InstanceState.PENDING));
        Endpoint first = endpoint(fake, ports, "node-1");
        Endpoint second = endpoint(fake, ports, "node-2");
        assertThat(second.ports()).doesNotContainAnyElementsOf(first.ports());
        assertThat(ports.takenOn("node-2")).containsAll(first.ports()).containsAll(second.ports());
    }

    @Test
    void anEndedInstanceGivesItsPortsBack() {
        try (Executor simulated = simulated()) {
            assertThat(PortsInUse.of(simulated, Map.of(), holding(InstanceState.SUCCEEDED, 1024)).takenOn("node-1")).isEmpty();
            assertThat(PortsInUse.of(simulated, Map.of(), holding(InstanceState.PENDING, 1024)).takenOn("node-1")).containsExactly(1024);
        }
    }
}
