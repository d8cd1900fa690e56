package io.slipstream.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/** A clock that moves only when a test says so. Safe for concurrent use. */
public final class TestingClock extends Clock {
    private final AtomicReference<Instant> now;
    private final ZoneId zone;

    public TestingClock() {
        this(Instant.parse("2026-01-01T00:00:00Z"));
    }

    public TestingClock(Instant start) {
        this(new AtomicReference<>(start), ZoneOffset.UTC);
    }

    private TestingClock(AtomicReference<Instant> now, ZoneId zone) {
        this.now = now;
        this.zone = zone;
    }

    public void advance(Duration duration) {
        now.updateAndGet(instant -> instant.plus(duration));
    }

    public void set(Instant instant) {
        now.set(instant);
    }

    @Override
    public Instant instant() {
        return now.get();
    }

    @Override
    public ZoneId getZone() {
        return zone;
    }

    @Override
    public Clock withZone(ZoneId newZone) {
        return new TestingClock(now, newZone);
    }
}
