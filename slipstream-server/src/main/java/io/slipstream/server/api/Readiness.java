package io.slipstream.server.api;

import io.slipstream.server.control.LeaderElection;
import io.slipstream.store.StoreUnavailableException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;

/**
 * Whether the server can do its work ({@code GET /readyz}), beyond being alive ({@code /healthz}): the store answers
 * and, on the replica that leads, the control loop completes cycles (a standby serves the API and waits: it is ready
 * too). A store outage, or a loop stuck on something (it should never be: nothing it does may block), shows here, so
 * a supervisor or load balancer can act on it.
 */
public final class Readiness {
    /** A loop that has not completed a cycle for this long is not ready; cycles take milliseconds to a second. */
    public static final Duration MAX_CYCLE_AGE = Duration.ofSeconds(30);

    private final Supplier<Instant> lastCycleAt;
    private final Supplier<LeaderElection.Status> election;
    private final Runnable storeCheck;
    private final Clock clock;
    /** A store check this recent is answered again rather than repeated: anyone may ask, as often as they like. */
    static final Duration STORE_CHECK_REUSE = Duration.ofSeconds(1);

    /** Since when this replica leads ({@code null}: it does not); a new term's first cycle is awaited from then. */
    private Instant leadingSince;
    /** One store check at a time: a flood of requests must not take the pool's connections from the control loop. */
    private final java.util.concurrent.locks.ReentrantLock checking = new java.util.concurrent.locks.ReentrantLock();
    /** The last store check: when, and what was wrong ({@code null}: the store answered). */
    private volatile StoreCheck lastCheck;

    private record StoreCheck(Instant at, String problem) {
    }

    /** @param storeCheck returns if the store answers, throws {@link StoreUnavailableException} if it does not */
    public Readiness(Supplier<Instant> lastCycleAt, Supplier<LeaderElection.Status> election, Runnable storeCheck, Clock clock) {
        this.lastCycleAt = lastCycleAt;
        this.election = election;
        this.storeCheck = storeCheck;
        this.clock = clock;
    }

    /** What readiness says now, with this replica's role. */
    public record Status(boolean ready, Instant lastCycleAt, String reason, LeaderElection.Status election) {
    }

    public Status now() {
        String storeProblem = storeProblem();
        Instant last = lastCycleAt.get();
        LeaderElection.Status role = election.get();
        if (storeProblem != null) {
            return new Status(false, last, storeProblem, role);
        }
        return ofLoop(last, role);
    }

    /**
     * What is wrong with the store, or {@code null}: checked at most once at a time and once per
     * {@link #STORE_CHECK_REUSE}; a request that finds a check under way answers what the last one found, and waits
     * for it only if there was none. Nothing here waits on the store under a lock another request needs.
     */
    private String storeProblem() {
        StoreCheck seen = lastCheck;
        if (seen != null && Duration.between(seen.at(), clock.instant()).compareTo(STORE_CHECK_REUSE) < 0) {
            return seen.problem();
        }
        if (!checking.tryLock()) {
            if (seen != null) {
                return seen.problem();
            }
            checking.lock(); // the very first check: wait for it (bounded by the pool's connection timeout)
            checking.unlock();
            StoreCheck first = lastCheck;
            return first == null ? "the store is being checked" : first.problem();
        }
        try {
            String problem = null;
            try {
                storeCheck.run();
            } catch (StoreUnavailableException e) {
                problem = e.getMessage();
            }
            lastCheck = new StoreCheck(clock.instant(), problem);
            return problem;
        } finally {
            checking.unlock();
        }
    }

    private synchronized Status ofLoop(Instant last, LeaderElection.Status role) {
        Instant now = clock.instant();
        if (role.role() != LeaderElection.Role.LEADER) {
            leadingSince = null;
            return new Status(true, null, null, role);
        }
        if (leadingSince == null) {
            leadingSince = now;
        }
        Instant since = last == null ? leadingSince : last;
        Duration age = Duration.between(since, now);
        if (age.compareTo(MAX_CYCLE_AGE) > 0) {
            String what = last == null ? "the control loop has not completed a cycle since this replica began to lead, " : "the control loop's last cycle ended ";
            return new Status(false, last, what + age.toSeconds() + " s ago (more than " + MAX_CYCLE_AGE.toSeconds() + " s)", role);
        }
        return new Status(true, last, null, role);
    }
}
