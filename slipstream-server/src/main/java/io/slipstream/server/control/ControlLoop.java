package io.slipstream.server.control;

import io.slipstream.model.lifecycle.LifecycleLimits;
import io.slipstream.model.lifecycle.RunLifecycle;
import io.slipstream.store.FencedException;
import io.slipstream.store.Store;
import io.slipstream.store.StoreUnavailableException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control plane's single writer of run and instance state, as a runner: a thread of its own that first adopts
 * what ran before this start ({@link Recovery}), then runs a {@link ControlCycle} at every tick or wake-up. In a
 * store outage it pauses and tries again; when its replica no longer leads (a write refused by the fence) it stops.
 * What a cycle does is {@link ControlCycle}'s; how each decision is applied, {@link DecisionApplier}'s.
 *
 * <p>{@link #wakeUp()} may be called from any thread.
 */
public final class ControlLoop implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ControlLoop.class);
    private static final Duration PAUSE = Duration.ofMillis(500);
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final Store store;
    private final Clock clock;
    private final Duration tick;
    private final Recovery recovery;
    private final ControlCycle cycle;
    private final ProgressReports progressReports;
    private final QueueStatus queueStatus;
    private final Consumer<Duration> cycleTimes;
    private final Semaphore wakeUps = new Semaphore(0);
    /** Counted down by {@link #close}: ends a rest between cycles at once. */
    private final CountDownLatch closing = new CountDownLatch(1);
    private volatile boolean running;
    private Thread thread;
    /** When the loop last completed a cycle ({@code null}: not yet); readiness reads it from other threads. */
    private volatile Instant lastCycleAt;
    /** When the store became unreachable to the loop ({@code null}: it is reachable); for one log line per outage. */
    private Instant outageSince;

    public ControlLoop(LoopParts parts) {
        this.store = parts.store();
        this.clock = parts.clock();
        this.tick = parts.tick();
        this.progressReports = parts.progressReports();
        this.queueStatus = parts.queueStatus();
        this.cycleTimes = parts.cycleTimes();
        RunLifecycle lifecycle = new RunLifecycle(new LifecycleLimits(parts.limits().gracePeriod(), parts.limits().maxRuntime()));
        ReportIntake reports = new ReportIntake(parts.store(), clock, this::wakeUp);
        IdentityRefresh identity = new IdentityRefresh(parts.executor(), parts.identity());
        RunStepper stepper = new RunStepper(parts.store(), parts.executor(),
                new Launcher(parts.store(), parts.executor(), clock, parts.runTokens(), parts.secrets(), identity),
                new FaultWatch(parts.executor(), progressReports), clock, lifecycle);
        this.recovery = new Recovery(parts.store(), parts.executor(), clock, lifecycle, reports);
        this.cycle = new ControlCycle(parts, reports, stepper, identity, this::wakeUp);
        parts.executor().setListener(reports::offer);
    }

    /** Whether its thread has ended (or never started): after {@link #close}, a thread stuck in a call may not have. */
    public boolean stopped() {
        Thread current = thread;
        return current == null || !current.isAlive();
    }

    /** Whether the loop cycles (it stops by itself when it finds that its replica no longer leads). */
    public boolean running() {
        return running;
    }

    /** When the loop last completed a cycle, or {@code null} if it has not yet. */
    public Instant lastCycleAt() {
        return lastCycleAt;
    }

    /** Where instances' progress reported through the API goes. */
    public ProgressReports progressReports() {
        return progressReports;
    }

    /** Why each queued run waits, as the last cycle saw it. */
    public QueueStatus queueStatus() {
        return queueStatus;
    }

    /**
     * Starts cycling on a thread of its own, which first re-attaches to instances that ran before a restart: no cycle
     * runs before that is done, but the server need not wait for it (the API can serve meanwhile; what it asks of the
     * loop waits for the first cycle, as it would for any cycle).
     */
    public void start() {
        running = true;
        thread = new Thread(this::recoverThenLoop, "slipstream-control");
        thread.setDaemon(true);
        thread.start();
    }

    public void wakeUp() {
        if (wakeUps.availablePermits() == 0) {
            wakeUps.release();
        }
    }

    /** Adopts what ran before this start. Package-private so tests can drive the loop step by step. */
    void recover() {
        recovery.adopt();
    }

    /**
     * One full cycle. Its writes are not waited for one by one (a cycle writes each run's step in a transaction of its
     * own, and each waited for its commit to be in the store's file: most of a busy cycle's time); it waits before it
     * tells an executor to act and as it ends ({@link Store#deferDurability}). Package-private so tests can drive
     * the loop step by step.
     */
    void cycle() {
        try (Store.Deferral ignored = store.deferDurability()) {
            cycle.run();
        }
    }

    /** Recovery is retried until it is done (a store that is away for a moment): cycles never run without it. */
    private void recoverThenLoop() {
        while (running) {
            try {
                recover();
                wakeUp(); // the first cycle follows at once, not a tick later
                break;
            } catch (FencedException e) {
                LOG.warn("this replica no longer leads; its control loop stops before adopting: {}", e.getMessage());
                running = false;
                return;
            } catch (StoreUnavailableException e) {
                LOG.warn("the instances of a previous start are adopted once the store can be reached: {}", e.getMessage());
                pause();
            } catch (RuntimeException e) {
                LOG.error("could not adopt the instances that ran before this start; retrying", e);
                pause();
            }
        }
        loop();
    }

    private void loop() {
        long restUntil = System.nanoTime();
        while (running) {
            try {
                boolean woken = wakeUps.tryAcquire(tick.toMillis(), TimeUnit.MILLISECONDS);
                if (woken) {
                    rest(restUntil);
                }
                wakeUps.drainPermits();
                if (running) {
                    long start = System.nanoTime();
                    long cpuAtStart = cpuTime();
                    cycle();
                    lastCycleAt = clock.instant();
                    long end = System.nanoTime();
                    restUntil = cycle.launchesLeft() ? end : end + Math.min(cpuTime() - cpuAtStart, tick.toNanos());
                    cycleTimes.accept(Duration.ofNanos(end - start));
                }
                if (outageSince != null) {
                    LOG.info("the store is reachable again after {} s; the control loop resumes",
                            Duration.between(outageSince, clock.instant()).toSeconds());
                    outageSince = null;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (FencedException e) {
                // Another replica leads now: stop before anything else is decided (its writes would fail anyway).
                LOG.warn("this replica no longer leads; its control loop stops: {}", e.getMessage());
                running = false;
                return;
            } catch (StoreUnavailableException e) {
                // Nothing is decided that cannot be persisted: the cycle stopped at its first read or write that failed.
                if (outageSince == null) {
                    outageSince = clock.instant();
                    LOG.warn("the control loop pauses until the store can be reached again: {}", e.getMessage());
                }
                pause();
            } catch (RuntimeException e) {
                LOG.error("control loop cycle failed; retrying", e);
                pause();
            }
        }
    }

    /**
     * Before a cycle that a wake-up asked for, the loop rests until as long after its last cycle as that cycle took of
     * its thread's CPU (a tick at most): under a steady load, reports and submissions wake it again as soon as a cycle
     * ends, and each cycle does work for every active run, whatever changed. Resting holds the loop's thread to half a
     * core, leaving the rest to the API, and each cycle takes on more changes for that work; a run waits at most one
     * cycle longer to start. The time a cycle waits for launches (processes starting, on threads of their own) is not
     * the thread's CPU and costs no rest, and a cycle that left launches for the next (a run of more instances than a
     * cycle launches) is followed at once. On an idle server cycles take milliseconds, and so do rests.
     */
    private void rest(long until) throws InterruptedException {
        long rest = until - System.nanoTime();
        if (rest > 0) {
            closing.await(rest, TimeUnit.NANOSECONDS);
        }
    }

    /** The loop thread's CPU time so far (its wall time where the JVM cannot tell). */
    private static long cpuTime() {
        return THREADS.isCurrentThreadCpuTimeSupported() ? THREADS.getCurrentThreadCpuTime() : System.nanoTime();
    }

    private static void pause() {
        try {
            TimeUnit.MILLISECONDS.sleep(PAUSE.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        running = false;
        closing.countDown();
        wakeUp();
        if (thread != null) {
            try {
                thread.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        cycle.close();
    }
}
