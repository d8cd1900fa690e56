package io.slipstream.executor.local.process;

/** The processes of one instance, as the executor stops them. */
public sealed interface InstanceProcesses permits ProcessTree, PidNamespace, CgroupProcesses {
    /**
     * The processes of an instance in a PID namespace of its own: everything in it (see {@link PidNamespace}).
     *
     * @param leader the process the supervisor started, and its start time (-1: unknown): the namespace's init
     *     ({@code leaderIsInit}: the launcher binary) or the {@code unshare} that waits for it (the shell chain)
     */
    static InstanceProcesses inNamespace(long leader, long leaderStart, boolean leaderIsInit) {
        return new PidNamespace(leader, leaderStart, leaderIsInit);
    }

    /**
     * The processes of an instance without a PID namespace: its session, its group and their descendants (see
     * {@link ProcessTree}).
     *
     * @param supervisor the pid of the supervisor that started {@code leader} (-1: unknown)
     */
    static InstanceProcesses tree(long leader, long leaderStart, long supervisor) {
        return new ProcessTree(leader, leaderStart, supervisor);
    }

    /**
     * The processes of an instance in a cgroup of its own: everything in it, frozen and killed at once, and those
     * {@code found} finds (its namespace or tree: a second line, and what a host without the freezer needs).
     */
    static InstanceProcesses inCgroup(io.slipstream.executor.local.cgroup.InstanceCgroup cgroup, InstanceProcesses found) {
        return new CgroupProcesses(cgroup, found);
    }

    /** SIGTERM to the instance's processes, once. */
    void terminate();

    /** One round of SIGKILL; how many were still alive to receive it (0: nothing of the instance is left). */
    int killOnce();

    /** SIGKILL until nothing of the instance is left; may take a while for a process stuck in the kernel. */
    default void killUntilGone() {
        long pause = 5;
        long warnAt = System.nanoTime() + java.time.Duration.ofSeconds(30).toNanos();
        while (killOnce() > 0) {
            if (System.nanoTime() > warnAt) {
                org.slf4j.LoggerFactory.getLogger(InstanceProcesses.class).warn("processes of an instance survive SIGKILL (stuck in the kernel?); still trying");
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
}
