package io.slipstream.executor.local.process;

import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.local.files.InstanceDirectory;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stops an instance's process tree: SIGTERM, then SIGKILL after the grace period, or at once once the instance
 * acknowledged its notice; without grace, SIGKILL at once. Everything runs on the executor's threads and timers, so
 * a process that will not die holds up nothing else.
 */
public final class Stopper {
    private static final Logger LOG = LoggerFactory.getLogger(Stopper.class);
    /** How often a stopping instance's acknowledgement is looked for. */
    private static final Duration ACK_POLL = Duration.ofMillis(100);

    private final ScheduledExecutorService timers;
    private final ExecutorService workers;
    private final Clock clock;
    private final Predicate<InstanceId> watched;

    /** @param watched whether an instance is still being watched (once it is not, it is gone and stopping ends) */
    public Stopper(ScheduledExecutorService timers, ExecutorService workers, Clock clock, Predicate<InstanceId> watched) {
        this.timers = timers;
        this.workers = workers;
        this.clock = clock;
        this.watched = watched;
    }

    public void stop(InstanceId id, InstanceProcesses tree, InstanceDirectory dir, Duration gracePeriod) {
        if (gracePeriod.isZero()) {
            workers.execute(() -> forceKill(id, tree, 5)); // no grace (a lost node): no notice, no SIGTERM
            return;
        }
        workers.execute(tree::terminate);
        timers.schedule(() -> forceKill(id, tree, 5), gracePeriod.toMillis(), TimeUnit.MILLISECONDS);
        if (gracePeriod.compareTo(ACK_POLL) > 0) {
            timers.schedule(() -> releaseOnAck(id, tree, dir, clock.instant().plus(gracePeriod)), ACK_POLL.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** An instance that acknowledged the notice has saved what it wanted to: it need not wait for the grace period. */
    private void releaseOnAck(InstanceId id, InstanceProcesses tree, InstanceDirectory dir, Instant deadline) {
        if (!watched.test(id) || clock.instant().isAfter(deadline)) {
            return;
        }
        if (dir.acknowledged()) {
            LOG.debug("instance {} acknowledged its notice: stopping it now", id);
            forceKill(id, tree, 5);
            return;
        }
        timers.schedule(() -> releaseOnAck(id, tree, dir, deadline), ACK_POLL.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** One round of SIGKILL, repeated from the timer until the instance is gone. */
    private void forceKill(InstanceId id, InstanceProcesses tree, long pauseMillis) {
        if (!watched.test(id) || tree.killOnce() == 0) {
            return;
        }
        long next = Math.min(pauseMillis * 2, 1000);
        timers.schedule(() -> forceKill(id, tree, next), pauseMillis, TimeUnit.MILLISECONDS);
    }
}
