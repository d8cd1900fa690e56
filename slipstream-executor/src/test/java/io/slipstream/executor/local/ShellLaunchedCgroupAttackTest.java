package io.slipstream.executor.local;

import io.slipstream.executor.local.process.SupervisorProgram;

/** {@link CgroupAttackTest} with the shell chain starting instances (its unshare stays in the cgroup as root). */
class ShellLaunchedCgroupAttackTest extends CgroupAttackTest {
    @Override
    protected SupervisorProgram.Mode launcher() {
        return SupervisorProgram.Mode.shell;
    }
}
