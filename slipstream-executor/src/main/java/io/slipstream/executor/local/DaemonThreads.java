package io.slipstream.executor.local;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/** The executor's threads: daemons, so that none holds up the server's exit, named for thread dumps. */
final class DaemonThreads {
    private DaemonThreads() {
    }

    static ThreadFactory named(String name) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, name + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
