package io.slipstream.executor.local;

import io.slipstream.executor.local.process.SupervisorProgram;


/** The executor's contract, with instances started through the shell chain (a build without a C compiler), not the launcher binary. */
class ShellLaunchedExecutorTest extends LocalProcessExecutorTest {
    @Override
    protected SupervisorProgram.Mode launcher() {
        return SupervisorProgram.Mode.shell;
    }
}
