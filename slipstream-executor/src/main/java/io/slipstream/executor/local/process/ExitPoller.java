package io.slipstream.executor.local.process;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Tells when processes that are not this JVM's children end (the supervisors of instances adopted after a restart):
 * one round over all of them every {@value #EVERY_MILLIS} ms, by pid and start time, on a worker. The JDK's
 * {@code ProcessHandle.onExit} would poll each from a thread of its own, ever more slowly (up to every 5 s): with
 * hundreds of instances adopted, hundreds of threads made while the server starts.
 */
public final class ExitPoller {
    static final long EVERY_MILLIS = 500;

    private record Process(long pid, long startTime) {
    }

    private final Map<Process, CompletableFuture<Void>> followed = new ConcurrentHashMap<>();
    private final Executor workers;
    private final AtomicBoolean polling = new AtomicBoolean();

    public ExitPoller(ScheduledExecutorService timers, Executor workers) {
        this.workers = workers;
        timers.scheduleWithFixedDelay(this::pollSoon, EVERY_MILLIS, EVERY_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Completes once no process with this pid and start time is alive (at once if none is now). */
    public CompletableFuture<Void> onExit(long pid, long startTime) {
        if (!ProcFs.isAlive(pid, startTime)) {
            return CompletableFuture.completedFuture(null);
        }
        return followed.computeIfAbsent(new Process(pid, startTime), p -> new CompletableFuture<>());
    }

    private void pollSoon() {
        if (!followed.isEmpty() && polling.compareAndSet(false, true)) {
            workers.execute(this::poll); // off the timer thread, which also sends the stops' SIGKILLs
        }
    }

    private void poll() {
        try {
            followed.forEach((process, exit) -> {
                if (!ProcFs.isAlive(process.pid(), process.startTime())) {
                    followed.remove(process, exit);
                    exit.complete(null);
                }
            });
        } finally {
            polling.set(false);
        }
    }
}
