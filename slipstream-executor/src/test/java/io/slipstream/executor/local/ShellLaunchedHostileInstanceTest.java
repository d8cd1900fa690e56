package io.slipstream.executor.local;

/** The hostile instances' attacks, with instances started through the shell chain (a build without a C compiler), not the launcher binary. */
class ShellLaunchedHostileInstanceTest extends HostileInstanceTest {
    @Override
    protected Launcher.Mode launcher() {
        return Launcher.Mode.shell;
    }
}
