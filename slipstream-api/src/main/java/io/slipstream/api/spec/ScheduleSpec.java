package io.slipstream.api.spec;

import com.fasterxml.jackson.annotation.JsonInclude;
import static java.util.Objects.requireNonNull;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;

import java.time.Duration;
import java.time.ZoneId;

/**
 * When a job runs on its own: a cron expression (five fields: minute hour day-of-month month day-of-week) in a time
 * zone. {@code startingDeadline}: how late a missed due time may still start (after downtime: one late run, never a
 * burst); {@code null} means any lateness. {@code suspend} stops new runs without removing the schedule.
 */
public record ScheduleSpec(String cron, ZoneId timeZone, ConcurrencyPolicy concurrencyPolicy, Duration startingDeadline,
                           @JsonInclude(JsonInclude.Include.NON_DEFAULT) boolean suspend) {
    public ScheduleSpec {
        requireNonNull(cron, "cron is null");
        requireNonNull(timeZone, "timeZone is null");
        requireNonNull(concurrencyPolicy, "concurrencyPolicy is null");
    }

    /** The document form, with the defaults: UTC, {@code Allow}, no deadline, not suspended. */
    @JsonCreator
    public static ScheduleSpec of(@JsonProperty("cron") String cron, @JsonProperty("timeZone") ZoneId timeZone,
                                  @JsonProperty("concurrencyPolicy") ConcurrencyPolicy concurrencyPolicy,
                                  @JsonProperty("startingDeadline") Duration startingDeadline, @JsonProperty("suspend") Boolean suspend) {
        return new ScheduleSpec(cron == null ? null : cron.trim(), timeZone == null ? ZoneId.of("UTC") : timeZone,
                concurrencyPolicy == null ? ConcurrencyPolicy.Allow : concurrencyPolicy, startingDeadline, suspend != null && suspend);
    }
}
