package io.slipstream.executor.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.LogStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What server tests rely on when they steer the fake (the contract suite holds the lifelike one). */
class FakeExecutorTest {
    private final FakeExecutor executor = new FakeExecutor(Clock.systemUTC(), 2, 8);
    private final List<InstanceReport> reports = new ArrayList<>();

    private static LaunchSpec spec(InstanceId id, String node) {
        return new LaunchSpec(id, "main-0", node, List.of(), List.of("true"), Map.of(), null, null);
    }

    @Test
    void aSteeredFakeReportsOnlyWhatTheTestSays() {
        executor.setListener(reports::add);
        InstanceId id = new InstanceId(new RunId("steered-1"), 1, 0);
        Map<String, String> handle = executor.launch(spec(id, "node-2"));
        executor.terminate(id, handle, Duration.ofSeconds(30), "Reclaimed");
        executor.adopt(Map.of(id, handle));
        assertThat(reports).as("terminate and adopt are only recorded").isEmpty();
        assertThat(executor.terminations()).containsEntry(id, "Reclaimed / PT30S");
        assertThat(executor.adoptions()).containsExactly(Map.of(id, handle));
        assertThat(executor.cluster().runs(handle)).isTrue();

        executor.confirmTerminated(id, 143);
        assertThat(reports).singleElement().isInstanceOfSatisfying(InstanceReport.Exited.class, exited -> {
            assertThat(exited.exitCode()).isEqualTo(143);
            assertThat(exited.terminated()).isTrue();
        });
        assertThat(executor.cluster().runs(handle)).isFalse();
        assertThat(executor.launched()).containsOnlyKeys(id);
    }

    @Test
    void launchesAreRefusedOnUnknownAndRefusingNodesAndRepeatedOnesAreOne() {
        InstanceId id = new InstanceId(new RunId("steered-2"), 1, 0);
        assertThatThrownBy(() -> executor.launch(spec(id, "node-9"))).isInstanceOf(ExecutorException.class).hasMessageContaining("node-9");
        executor.refuseLaunchesOn("node-1");
        assertThatThrownBy(() -> executor.launch(spec(id, "node-1"))).isInstanceOf(ExecutorException.class);
        assertThat(executor.find(id)).isEmpty();
        assertThat(executor.launch(spec(id, "node-2"))).isEqualTo(executor.launch(spec(id, "node-2")));
        assertThat(executor.launched()).hasSize(1);
    }

    @Test
    void whatTheTestPrintsIsReadAndForgottenWithTheRun() {
        InstanceId id = new InstanceId(new RunId("steered-3"), 1, 0);
        executor.launch(spec(id, "node-1"));
        executor.log(id, "step 10\nNCCL error\n");
        executor.print(id, LogStream.STDOUT, "hello\n");
        assertThat(new String(executor.readLogTail(id, Map.of(), LogStream.STDERR, 11).data(), StandardCharsets.UTF_8)).isEqualTo("NCCL error\n");
        assertThat(new String(executor.readLog(id, Map.of(), LogStream.STDOUT, 2, 100).data(), StandardCharsets.UTF_8)).isEqualTo("llo\n");
        executor.forget(id.runId());
        assertThat(executor.find(id)).isEmpty();
        assertThat(executor.readLogTail(id, Map.of(), LogStream.STDERR, 100).data()).isEmpty();
        assertThat(executor.forgotten()).containsExactly(id.runId());
    }
}
