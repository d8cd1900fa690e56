package io.slipstream.executor.local;

/** The executor's contract for instances with an image (bubblewrap), started through the shell chain, not the launcher binary. */
class ShellLaunchedImageExecutorTest extends ImageExecutorContractTest {
    @Override
    protected Launcher.Mode launcher() {
        return Launcher.Mode.shell;
    }
}
