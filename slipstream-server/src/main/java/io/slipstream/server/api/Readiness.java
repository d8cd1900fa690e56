package io.slipstream.server.api;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;

/**
 * Whether the server can do its work ({@code GET /readyz}), beyond being alive ({@code /healthz}): the control loop
 * completes cycles. A loop stuck on something (it should never be: nothing it does may block) shows here, so a
 * supervisor or load balancer can act on it.
 */
public final class Readiness {
    /** A loop that has not completed a cycle for this long is not ready; cycles take milliseconds to a second. */
    public static final Duration MAX_CYCLE_AGE = Duration.ofSeconds(30);

    private final Supplier<Instant> lastCycleAt;
    private final Instant startedAt;
    private final Clock clock;

    public Readiness(Supplier<Instant> lastCycleAt, Clock clock) {
        this.lastCycleAt = lastCycleAt;
        this.clock = clock;
        this.startedAt = clock.instant();
    }

    /** What readiness says now. */
    public record Status(boolean ready, Instant lastCycleAt, String reason) {
    }

    public Status now() {
        Instant last = lastCycleAt.get();
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
