package io.slipstream.executor.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.executor.NoCommandsExecutorContractTest;
import io.slipstream.executor.Executor;
import java.time.Clock;
import java.util.Map;

/**
 * The fake, as server tests would use it unsteered ({@link FakeExecutor.Mode#LIFELIKE}), held to the Executor contract.
 * It runs no commands ({@link #runsCommands()}): the tests of what a command does are skipped, the life cycle is not.
 */
class FakeExecutorContractTest extends NoCommandsExecutorContractTest {
    private final FakeExecutor.Cluster cluster = new FakeExecutor.Cluster(2, 4);

    @Override
    protected Executor createExecutor() {
        return new FakeExecutor(cluster, Clock.systemUTC(), FakeExecutor.Mode.LIFELIKE);
    }

    @Override
    protected String nodeName() {
        return "node-1";
    }

    @Override
    protected void assertNothingRuns(Map<String, String> handle) {
        assertThat(cluster.runs(handle)).as("the fake instance still runs").isFalse();
    }

    @Override
    protected String identityKey() {
        return "fake";
    }
}
