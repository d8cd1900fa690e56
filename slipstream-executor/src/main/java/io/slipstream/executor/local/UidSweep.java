package io.slipstream.executor.local;

import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kills every process of a run's uid, wherever it went: a daemon that left its instance's session and process group
 * (double fork, {@code setsid}) is in no process tree the executor follows, but it still has the run's uid. The server
 * sends SIGKILL itself, process by process ({@code /proc} tells which have the uid as their real uid), round after round
 * until none is left: nothing of it runs as the uid, so nothing of the run can stop or outlive it (a SIGKILL reaches a
 * stopped process too). Bounded: after {@link #PATIENCE} it gives up, loudly (a process stuck in the kernel).
 */
final class UidSweep {
    private static final Logger LOG = LoggerFactory.getLogger(UidSweep.class);
    static final Duration PATIENCE = Duration.ofSeconds(20);

    private UidSweep() {
    }

    /** Returns once no live process has {@code uid} as its real uid, or after {@link #PATIENCE}; how many it killed. */
    static int killAll(int uid) {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        long pause = 1;
        int killed = 0;
        for (List<Long> left = ProcFs.ownedBy(uid); !left.isEmpty(); left = ProcFs.ownedBy(uid)) {
            // A pid is only reused once the pid space wraps around; it cannot between this scan and the signal.
            left.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
            killed += left.size();
            if (System.nanoTime() > deadline) {
                LOG.error("{} process(es) of uid {} survive SIGKILL after {} s (stuck in the kernel?); giving up on them", left.size(), uid,
                        PATIENCE.toSeconds());
                return killed;
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return killed;
            }
            pause = Math.min(pause * 2, 100);
        }
        return killed;
    }
}
