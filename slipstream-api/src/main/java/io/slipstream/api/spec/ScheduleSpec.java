package io.slipstream.api.spec;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.time.ZoneId;

/**
 * When a job runs on its own: a cron expression (five fields: minute hour day-of-month month day-of-week) in a time
 * zone. {@code startingDeadline}: how late a missed due time may still start (after downtime: one late run, never a
 * burst); {@code null} means any lateness. {@code suspend} stops new runs without removing the schedule.
 */
public record ScheduleSpec(String cron, ZoneId timeZone, ConcurrencyPolicy concurrencyPolicy, Duration startingDeadline, boolean suspend) {
    public ScheduleSpec {
        requireNonNull(cron, "cron is null");
        requireNonNull(timeZone, "timeZone is null");
        requireNonNull(concurrencyPolicy, "concurrencyPolicy is null");
    }
}
