package io.slipstream.executor.local;

import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Signals every process of an instance: its session, its process group, and their descendants (see {@link ProcFs#treeOf}). */
final class ProcessTree {
    private static final Logger LOG = LoggerFactory.getLogger(ProcessTree.class);

    private ProcessTree() {
    }

    /** SIGTERM to every live process of the tree, once. */
    static void terminate(long leader) {
        ProcFs.treeOf(leader).forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroy));
    }

    /** SIGKILL until no process of the tree is left: an instance counts as ended only once nothing of it runs. */
    static void kill(long leader) {
        long pause = 5;
        long warnAt = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            List<Long> live = ProcFs.treeOf(leader);
            if (live.isEmpty()) {
                return;
            }
            live.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
            if (System.nanoTime() > warnAt) {
                LOG.warn("processes {} of the instance led by {} survive SIGKILL; still trying", live, leader);
                warnAt = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            pause = Math.min(pause * 2, 500);
        }
    }
}
