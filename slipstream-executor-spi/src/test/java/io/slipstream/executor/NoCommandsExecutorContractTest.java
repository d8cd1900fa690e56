package io.slipstream.executor;

import io.slipstream.api.run.InstanceId;

/**
 * The contract for an executor that runs no commands (the fake, simulated nodes): its instances live from their launch
 * until they are stopped or their own time is up, print nothing and read no files, so the tests of what a command does
 * are skipped and the life cycle is not. Its handles are told apart by {@link #identityKey()}.
 */
public abstract class NoCommandsExecutorContractTest extends BaseExecutorContractTest {
    @Override
    protected final boolean runsCommands() {
        return false;
    }

    @Override
    protected final boolean seesNoticeAcknowledgement() {
        return false;
    }

    @Override
    protected final boolean readsProgressFile() {
        return false;
    }

    @Override
    protected abstract String identityKey();

    /** Never used: the tests that block an instance on a gate need a command that runs. */
    @Override
    protected final String gate(InstanceId id) {
        return "no-gate";
    }

    @Override
    protected final void openGate(InstanceId id) {
    }
}
