package io.slipstream.server.api;

import io.slipstream.store.StoreUnavailableException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;

/**
 * Whether the server can do its work ({@code GET /readyz}), beyond being alive ({@code /healthz}): the store answers
 * and the control loop completes cycles. A store outage, or a loop stuck on something (it should never be: nothing it
 * does may block), shows here, so a supervisor or load balancer can act on it.
 */
public final class Readiness {
    /** A loop that has not completed a cycle for this long is not ready; cycles take milliseconds to a second. */
    public static final Duration MAX_CYCLE_AGE = Duration.ofSeconds(30);

    private final Supplier<Instant> lastCycleAt;
    private final Runnable storeCheck;
    private final Instant startedAt;
    private final Clock clock;

    /** @param storeCheck returns if the store answers, throws {@link StoreUnavailableException} if it does not */
    public Readiness(Supplier<Instant> lastCycleAt, Runnable storeCheck, Clock clock) {
        this.lastCycleAt = lastCycleAt;
        this.storeCheck = storeCheck;
        this.clock = clock;
        this.startedAt = clock.instant();
    }

    /** What readiness says now. */
    public record Status(boolean ready, Instant lastCycleAt, String reason) {
    }

    public Status now() {
        Instant last = lastCycleAt.get();
        try {
            storeCheck.run();
        } catch (StoreUnavailableException e) {
            return new Status(false, last, e.getMessage());
        }
        Instant now = clock.instant();
        Instant since = last == null ? startedAt : last;
        Duration age = Duration.between(since, now);
        if (age.compareTo(MAX_CYCLE_AGE) > 0) {
            String what = last == null ? "the control loop has not completed a cycle since the start, " : "the control loop's last cycle ended ";
            return new Status(false, last, what + age.toSeconds() + " s ago (more than " + MAX_CYCLE_AGE.toSeconds() + " s)");
        }
        return new Status(true, last, null);
    }
}
