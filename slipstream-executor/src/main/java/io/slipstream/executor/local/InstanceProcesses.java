package io.slipstream.executor.local;

/** The processes of one instance, as the executor stops them. */
sealed interface InstanceProcesses permits ProcessTree, PidNamespace {
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
