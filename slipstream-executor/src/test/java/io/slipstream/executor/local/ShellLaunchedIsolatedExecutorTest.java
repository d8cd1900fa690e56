package io.slipstream.executor.local;

import io.slipstream.executor.local.process.SupervisorProgram;


/** The isolated executor's contract, with instances started through the shell chain (a build without a C compiler), not the launcher binary. */
class ShellLaunchedIsolatedExecutorTest extends IsolatedLocalProcessExecutorTest {
    @Override
    protected SupervisorProgram.Mode launcher() {
        return SupervisorProgram.Mode.shell;
    }
}
