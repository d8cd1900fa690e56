package io.slipstream.server.support;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The system clock (millisecond ticks, as the server's) moved by an offset a test sets: start a server in the past,
 * give it a token with an expiry, and return to the present, and the token has expired while everything else runs
 * on real time.
 */
public final class ShiftedClock extends Clock {
    private final AtomicReference<Duration> offset;
    private final ZoneId zone;

    public ShiftedClock(Duration offset) {
        this(new AtomicReference<>(offset), ZoneOffset.UTC);
    }

    private ShiftedClock(AtomicReference<Duration> offset, ZoneId zone) {
        this.offset = offset;
        this.zone = zone;
    }

    public void shift(Duration newOffset) {
        offset.set(newOffset);
    }

    @Override
    public Instant instant() {
        Instant now = Instant.now().plus(offset.get());
        return Instant.ofEpochMilli(now.toEpochMilli());
    }

    @Override
    public ZoneId getZone() {
        return zone;
    }

    @Override
    public Clock withZone(ZoneId newZone) {
        return new ShiftedClock(offset, newZone);
    }
}
