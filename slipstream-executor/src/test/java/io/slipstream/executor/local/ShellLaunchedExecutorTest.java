package io.slipstream.executor.local;

/** The executor's contract, with instances started through the shell chain (a build without a C compiler), not the launcher binary. */
class ShellLaunchedExecutorTest extends LocalProcessExecutorTest {
    @Override
    protected Launcher.Mode launcher() {
        return Launcher.Mode.shell;
    }
}
