package io.slipstream.executor.local;

import io.slipstream.executor.local.process.SupervisorProgram;

/** {@link CgroupEnforcementTest} with the shell chain starting instances: it joins the cgroup the same way. */
class ShellLaunchedCgroupEnforcementTest extends CgroupEnforcementTest {
    @Override
    protected SupervisorProgram.Mode launcher() {
        return SupervisorProgram.Mode.shell;
    }
}
