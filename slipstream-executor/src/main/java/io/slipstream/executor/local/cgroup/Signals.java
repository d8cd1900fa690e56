package io.slipstream.executor.local.cgroup;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/** SIGKILL to a cgroup's processes, and the short wait for a freeze to take hold. */
final class Signals {
    /** How long a freeze is waited for: a process in an uninterruptible sleep holds it up; it is killed all the same. */
    private static final long FREEZE_WAIT_MILLIS = 1_000;

    private Signals() {
    }

    /** As root: every pid is a process of the cgroup, listed by the kernel a moment ago. */
    static void kill(List<Long> pids) {
        for (long pid : pids) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    /** Polls {@code file} until it reads {@code state} (or a line {@code state}), for at most a second. */
    static void awaitState(Path file, String state) throws IOException {
        long deadline = System.nanoTime() + FREEZE_WAIT_MILLIS * 1_000_000;
        long pause = 1;
        while (System.nanoTime() < deadline) {
            String text = CgroupFiles.read(file);
            if (text == null || text.equals(state) || text.lines().anyMatch(state::equals)) {
                return;
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            pause = Math.min(pause * 2, 50);
        }
    }
}
