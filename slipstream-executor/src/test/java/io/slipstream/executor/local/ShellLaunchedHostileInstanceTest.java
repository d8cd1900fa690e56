package io.slipstream.executor.local;

import io.slipstream.executor.local.process.SupervisorProgram;


/** The hostile instances' attacks, with instances started through the shell chain (a build without a C compiler), not the launcher binary. */
class ShellLaunchedHostileInstanceTest extends HostileInstanceTest {
    @Override
    protected SupervisorProgram.Mode launcher() {
        return SupervisorProgram.Mode.shell;
    }
}
