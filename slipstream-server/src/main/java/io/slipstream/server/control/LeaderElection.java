package io.slipstream.server.control;

import io.slipstream.executor.EpochSupersededException;
import io.slipstream.executor.Executor;
import io.slipstream.store.FencedStore;
import io.slipstream.store.Leadership;
import io.slipstream.store.Store;
import io.slipstream.store.StoreUnavailableException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replicas of the control plane over one store take turns: the one holding the store's lease runs the control loop,
 * the others serve the API (reads and writes are store operations) and wait. The lease is claimed at the start and
 * renewed every third of its length; a standby takes over once it expires (at once if it was released by a clean
 * stop, or on a store only one process can open). A claim after the lease expired always starts a new epoch, even by
 * the same replica: whatever its old loop still does is fenced. A new leader moves the fencing epoch forward in the store (by
 * claiming) and in the executor ({@link Executor#fence}) before its loop does anything, and its loop writes through a
 * {@link FencedStore}: a replica that lost the lease (paused, cut off) writes, starts and kills nothing once it wakes.
 * It also stops its loop by itself when its renewals have failed for a whole lease.
 */
public final class LeaderElection implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderElection.class);

    public enum Role { LEADER, STANDBY }

    /** What this replica knows: its role, its own holder name, and the lease as last read ({@code null}: none yet). */
    public record Status(Role role, String self, Leadership lease) {
    }

    private final Store store;
    private final Executor executor;
    private final Clock clock;
    private final Duration lease;
    private final String self;
    private final LoopFactory newLoop;
    private final ProgressReports progressReports = new ProgressReports();
    private final QueueStatus queueStatus = new QueueStatus();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "slipstream-leader-election");
        thread.setDaemon(true);
        return thread;
    });
    private volatile ControlLoop loop;
    /** The loop of the last term, until its thread is seen to have ended. */
    private ControlLoop previous;
    private volatile Leadership seen;
    private long epoch;
    /** When the lease was last renewed by this replica (what its own expiry counts from). */
    private Instant renewedAt;
    private boolean closed;

    /** Makes the control loop of one term of leadership. */
    @FunctionalInterface
    public interface LoopFactory {
        /** @param fenced the store, fenced at the term's epoch; the reports and the queue status outlive the term */
        ControlLoop create(Store fenced, ProgressReports progressReports, QueueStatus queueStatus);
    }

    /** @param self this replica's holder name: unique per process start */
    public LeaderElection(Store store, Executor executor, Clock clock, Duration lease, String self, LoopFactory newLoop) {
        this.store = store;
        this.executor = executor;
        this.clock = clock;
        this.lease = lease;
        this.self = self;
        this.newLoop = newLoop;
    }

    /**
     * Claims once at once (a lone replica leads before this returns), then every third of the lease, and a standby
     * also right when the lease it saw expires: so it takes over within one lease of the leader's last renewal.
     */
    public void start() {
        tick();
        timer.schedule(this::tickAndReschedule, nextClaimIn(clock.instant()).toMillis(), TimeUnit.MILLISECONDS);
    }

    private void tickAndReschedule() {
        try {
            tick();
        } catch (RuntimeException e) {
            LOG.error("leader election failed; trying again", e);
        }
        if (!timer.isShutdown()) {
            timer.schedule(this::tickAndReschedule, nextClaimIn(clock.instant()).toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** A third of the lease; for a standby, sooner if the lease it saw ends sooner (just after, to find it expired). */
    Duration nextClaimIn(Instant now) {
        Duration period = lease.dividedBy(3);
        Leadership lastSeen = seen;
        if (loop == null && lastSeen != null && !lastSeen.heldBy(self)) {
            Duration untilExpiry = Duration.between(now, lastSeen.expiresAt()).plusMillis(20);
            if (!untilExpiry.isNegative() && untilExpiry.compareTo(period) < 0) {
                return untilExpiry;
            }
        }
        return period;
    }

    synchronized void tick() {
        if (closed) {
            return;
        }
        Instant now = clock.instant();
        Leadership current;
        try {
            Leadership known = seen != null ? seen : store.leases().current().orElse(null);
            String gone = known != null && !known.heldBy(self) && HolderNames.isGone(known.holder()) ? known.holder() : null;
            current = store.leases().claim(self, gone, now, lease);
        } catch (StoreUnavailableException e) {
            if (loop != null && !now.isBefore(renewedAt.plus(lease))) {
                // Not renewed for a whole lease: another replica may lead by now. Its fence would stop us anyway.
                stepDown("its lease could not be renewed for " + lease.toSeconds() + " s (" + e.getMessage() + ")");
            }
            return;
        }
        seen = current;
        boolean ours = current.heldBy(self);
        if (ours) {
            renewedAt = now;
        }
        if (loop != null && !ours) {
            stepDown(current.holder() + " took over at epoch " + current.epoch());
        } else if (loop != null && current.epoch() != epoch) {
            stepDown("its lease expired before it was renewed; it leads again at epoch " + current.epoch());
        } else if (loop != null && !loop.running()) {
            stepDown("its control loop stopped");
            store.leases().release(self, current.epoch(), now); // the next claim starts a new epoch
            return;
        }
        if (ours && loop == null) {
            lead(current.epoch());
        }
    }

    private void lead(long newEpoch) {
        if (previous != null && !previous.stopped()) {
            // Its thread, stuck in a call, would go on at the new epoch: this executor is fenced for the process. So
            // no term here until it ends; the lease goes back, for another replica (whose fence stops that thread).
            LOG.warn("this replica ({}) won the lease at epoch {} but its previous control loop has not stopped yet; it hands the lease back",
                    self, newEpoch);
            store.leases().release(self, newEpoch, clock.instant());
            return;
        }
        try {
            try {
                executor.fence(newEpoch);
            } catch (EpochSupersededException behind) {
                // The executor saw a newer epoch than the store has (a database restored from a dump): lead past it.
                Leadership moved = store.leases().advanceEpoch(self, newEpoch, behind.newest());
                if (!moved.heldBy(self) || moved.epoch() <= behind.newest()) {
                    throw behind;
                }
                LOG.warn("the store's epoch {} is behind the executor's {}; this replica leads at {}", newEpoch, behind.newest(), moved.epoch());
                newEpoch = moved.epoch();
                executor.fence(newEpoch);
            }
            ControlLoop started = newLoop.create(new FencedStore(store, newEpoch), progressReports, queueStatus);
            started.start();
            epoch = newEpoch;
            loop = started;
            LOG.info("this replica ({}) leads at epoch {}", self, newEpoch);
        } catch (RuntimeException e) {
            LOG.warn("this replica ({}) won the lease at epoch {} but cannot lead: {}", self, newEpoch, e.toString());
            store.leases().release(self, newEpoch, clock.instant());
        }
    }

    private void stepDown(String why) {
        ControlLoop stopping = loop;
        loop = null;
        previous = stopping;
        stopping.close();
        LOG.warn("this replica ({}) no longer leads: {}", self, why);
    }

    public Status status() {
        return new Status(loop != null ? Role.LEADER : Role.STANDBY, self, seen);
    }

    /** The lease as the store has it now (a standby's view of who leads). */
    public Optional<Leadership> leader() {
        return store.leases().current();
    }

    /** Asks the loop for a cycle at once, if this replica leads; a standby's leader finds the work within its tick. */
    public void wakeUp() {
        ControlLoop current = loop;
        if (current != null) {
            current.wakeUp();
        }
    }

    /** A name for this process that no other replica (nor a later start of this one) has. */
    public static String newHolderName() {
        return HolderNames.newName();
    }

    /** When this replica's loop last completed a cycle ({@code null}: it does not lead, or has not yet). */
    public Instant lastCycleAt() {
        ControlLoop current = loop;
        return current == null ? null : current.lastCycleAt();
    }

    public ProgressReports progressReports() {
        return progressReports;
    }

    public QueueStatus queueStatus() {
        return queueStatus;
    }

    /** Stops the loop and hands the lease back, so that a standby takes over at once. */
    @Override
    public synchronized void close() {
        closed = true;
        timer.shutdownNow();
        ControlLoop stopping = loop;
        loop = null;
        if (stopping != null) {
            stopping.close();
            try {
                store.leases().release(self, epoch, clock.instant());
            } catch (RuntimeException e) {
                LOG.warn("could not hand the lease back; a standby takes over when it expires: {}", e.toString());
            }
        }
    }
}
