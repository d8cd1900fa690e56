package io.slipstream.executor.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.BaseExecutorContractTest;
import io.slipstream.executor.Executor;
import java.time.Clock;
import java.util.Map;

/**
 * The fake, as server tests would use it unsteered ({@link FakeExecutor.Mode#LIFELIKE}), held to the Executor contract.
 * It runs no commands ({@link #runsCommands()}): the tests of what a command does are skipped, the life cycle is not.
 */
class FakeExecutorContractTest extends BaseExecutorContractTest {
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
    protected boolean runsCommands() {
        return false;
    }

    @Override
    protected boolean seesNoticeAcknowledgement() {
        return false;
    }

    @Override
    protected boolean readsProgressFile() {
        return false;
    }

    @Override
    protected String identityKey() {
        return "fake";
    }

    /** Never used: the tests that block an instance on a gate need a command that runs. */
    @Override
    protected String gate(InstanceId id) {
        return "no-gate";
    }

    @Override
    protected void openGate(InstanceId id) {
    }
}
