package io.slipstream.executor.local;

import java.util.List;

/**
 * Signals every process of an instance: its session, its process group, and their descendants (see
 * {@link ProcFs#treeOf}). Nothing is signalled if the leader's pid now belongs to another process: the kernel
 * reuses a pid only once its session and group are empty, so a live pid with another start time means that
 * nothing of the instance is left.
 */
final class ProcessTree {
    private final long leader;
    private final long leaderStart;

    ProcessTree(long leader, long leaderStart) {
        this.leader = leader;
        this.leaderStart = leaderStart;
    }

    private List<Long> members() {
        boolean reused = leaderStart >= 0 && ProcFs.stat(leader).map(s -> s.startTime() != leaderStart).orElse(false);
        return reused ? List.of() : ProcFs.treeOf(leader);
    }

    /** SIGTERM to every live process of the tree, once. */
    void terminate() {
        members().forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroy));
    }

    /** SIGKILL until nothing of the tree is left; may take a while for a process stuck in the kernel. */
    void killUntilGone() {
        long pause = 5;
        long warnAt = System.nanoTime() + java.time.Duration.ofSeconds(30).toNanos();
        while (killOnce() > 0) {
            if (System.nanoTime() > warnAt) {
                org.slf4j.LoggerFactory.getLogger(ProcessTree.class).warn("processes of an instance survive SIGKILL (stuck in the kernel?); still trying");
                warnAt = System.nanoTime() + java.time.Duration.ofSeconds(30).toNanos();
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

    /** One round of SIGKILL; returns how many processes were still alive to receive it. */
    int killOnce() {
        List<Long> live = members();
        live.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
        return live.size();
    }
}
