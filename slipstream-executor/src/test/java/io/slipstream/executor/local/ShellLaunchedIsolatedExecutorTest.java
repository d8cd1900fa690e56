package io.slipstream.executor.local;

/** The isolated executor's contract, with instances started through the shell chain (a build without a C compiler), not the launcher binary. */
class ShellLaunchedIsolatedExecutorTest extends IsolatedLocalProcessExecutorTest {
    @Override
    protected Launcher.Mode launcher() {
        return Launcher.Mode.shell;
    }
}
