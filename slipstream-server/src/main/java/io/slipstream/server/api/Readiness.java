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
    /** Since when this replica leads ({@code null}: it does not); a new term's first cycle is awaited from then. */
    private Instant leadingSince;

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

    public synchronized Status now() {
        Instant last = lastCycleAt.get();
        LeaderElection.Status role = election.get();
        try {
            storeCheck.run();
        } catch (StoreUnavailableException e) {
            return new Status(false, last, e.getMessage(), role);
        }
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
