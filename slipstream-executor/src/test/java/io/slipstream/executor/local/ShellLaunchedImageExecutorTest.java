package io.slipstream.executor.local;

import io.slipstream.executor.local.process.SupervisorProgram;


/** The executor's contract for instances with an image (bubblewrap), started through the shell chain, not the launcher binary. */
class ShellLaunchedImageExecutorTest extends ImageExecutorContractTest {
    @Override
    protected SupervisorProgram.Mode launcher() {
        return SupervisorProgram.Mode.shell;
    }
}
