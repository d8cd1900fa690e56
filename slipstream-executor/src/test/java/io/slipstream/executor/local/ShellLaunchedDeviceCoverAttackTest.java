package io.slipstream.executor.local;

import io.slipstream.executor.local.process.SupervisorProgram;

/** {@link DeviceCoverAttackTest} with the shell chain starting instances (its cover is made by sh and mount, not the launcher). */
class ShellLaunchedDeviceCoverAttackTest extends DeviceCoverAttackTest {
    @Override
    protected SupervisorProgram.Mode launcher() {
        return SupervisorProgram.Mode.shell;
    }
}
