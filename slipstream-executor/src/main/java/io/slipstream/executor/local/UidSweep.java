package io.slipstream.executor.local;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kills every process of a run's uid, wherever it went: a daemon that left its instance's session and process group
 * (double fork, {@code setsid}) is in no process tree the executor follows, but it still has the run's uid. The kill
 * is {@code kill(-1, SIGKILL)} made as that uid, which the kernel delivers to all of the uid's processes in one pass
 * (no fork can slip between), and it is repeated until {@code /proc} shows none left.
 */
final class UidSweep {
    private static final Logger LOG = LoggerFactory.getLogger(UidSweep.class);

    private UidSweep() {
    }

    /** Returns once no live process has {@code uid} as its real uid; how many rounds it took (0: there was none). */
    static int killAll(int uid) {
        long pause = 5;
        long warnAt = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        for (int round = 0; ; round++) {
            List<Long> left = ProcFs.ownedBy(uid);
            if (left.isEmpty()) {
                return round;
            }
            killAsUid(uid);
            if (System.nanoTime() > warnAt) {
                LOG.warn("{} process(es) of uid {} survive SIGKILL (stuck in the kernel?); still trying", left.size(), uid);
                warnAt = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return round;
            }
            pause = Math.min(pause * 2, 200);
        }
    }

    private static void killAsUid(int uid) {
        try {
            // Exit code 1 is usual: the signal reaches everything but kill itself, which reports that one as failed.
            SystemCommand.run(List.of("setpriv", "--reuid=" + uid, "--regid=" + uid, "--clear-groups", "kill", "-KILL", "-1"));
        } catch (IOException e) {
            LOG.warn("cannot kill the processes of uid {}: {}", uid, e.getMessage());
        }
    }
}
