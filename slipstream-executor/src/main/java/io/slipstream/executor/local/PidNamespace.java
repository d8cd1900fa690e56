package io.slipstream.executor.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The processes of an instance that runs in a PID namespace of its own (see {@link Supervisor#INIT}): everything in
 * the namespace, whatever it did. The namespace's init is the only child of {@code unshare}, found through
 * {@code /proc/<pid>/task/<pid>/children} (no scan of {@code /proc}). SIGTERM goes to the init, which passes it on to
 * the whole namespace; SIGKILL to the init kills the whole namespace at once (the kernel's doing, atomically).
 */
final class PidNamespace implements InstanceProcesses {
    /** How long the init gets to kill the namespace itself before it is killed with it. */
    private static final long INIT_GRACE_NANOS = java.time.Duration.ofSeconds(2).toNanos();

    private final long unshare;
    private final long unshareStart;
    private long firstKillAt = -1;

    /** @param unshare the pid of the {@code unshare} the supervisor started, and its start time (-1: unknown) */
    PidNamespace(long unshare, long unshareStart) {
        this.unshare = unshare;
        this.unshareStart = unshareStart;
    }

    @Override
    public void terminate() {
        Long init = init();
        if (init != null) {
            ProcessHandle.of(init).ifPresent(ProcessHandle::destroy);
        }
    }

    /**
     * First asks the init to SIGKILL everything in the namespace (SIGHUP: the command then ends with 137, which the
     * init reports); an init that has not ended within {@link #INIT_GRACE_NANOS} is itself killed, and the namespace
     * with it (the exit code then is unshare's own).
     */
    @Override
    public synchronized int killOnce() {
        if (!ProcFs.isAlive(unshare, unshareStart)) {
            return 0; // unshare returns only once its child, the init, is gone; and with it the namespace
        }
        long now = System.nanoTime();
        firstKillAt = firstKillAt < 0 ? now : firstKillAt;
        Long init = init();
        if (init == null) {
            ProcessHandle.of(unshare).ifPresent(ProcessHandle::destroyForcibly);
        } else if (now - firstKillAt < INIT_GRACE_NANOS) {
            signal(init, "HUP");
        } else {
            ProcessHandle.of(init).ifPresent(ProcessHandle::destroyForcibly);
        }
        return 1;
    }

    /** A signal Java's ProcessHandle cannot send, through the kill the server runs as itself. */
    private static void signal(long pid, String name) {
        try {
            SystemCommand.run(java.util.List.of("kill", "-s", name, Long.toString(pid)), java.time.Duration.ofSeconds(5));
        } catch (IOException e) {
            // the next round tries again, and then kills the init
        }
    }

    /** The namespace's init (as the host numbers it), or {@code null} if it is gone or not started yet. */
    private Long init() {
        if (!ProcFs.isAlive(unshare, unshareStart)) {
            return null;
        }
        try {
            String children = Files.readString(Path.of("/proc", Long.toString(unshare), "task", Long.toString(unshare), "children"),
                    StandardCharsets.US_ASCII).trim();
            return children.isEmpty() ? null : Long.valueOf(children.split(" ")[0]);
        } catch (IOException | NumberFormatException e) {
            return null;
        }
    }
}
