package io.slipstream.server.control;

import io.slipstream.api.spec.Cron;
import io.slipstream.api.spec.ScheduleSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * What a schedule does at {@code now}, as a pure function (tests drive it with any clock). The due times since the last
 * one fired for are collapsed into one: the latest, started if it is not later than {@code startingDeadline}, skipped
 * otherwise. After a downtime that is one late run, never a burst of every missed time.
 *
 * @param lastDue the new last due time to record ({@code null}: nothing changes)
 * @param fire    the due time to start a run for, if any
 */
record SchedulePlan(Instant lastDue, Instant fire) {
    static final SchedulePlan NOTHING = new SchedulePlan(null, null);

    /**
     * @param lastDue the last due time the schedule fired for, or {@code null} if it never did: then the schedule starts
     *                from now, and due times before it are not started
     */
    static SchedulePlan at(ScheduleSpec schedule, Instant lastDue, Instant now) {
        Cron cron;
        try {
            cron = Cron.parse(schedule.cron(), schedule.timeZone());
        } catch (IllegalArgumentException e) {
            return NOTHING; // validated when applied; a stored garbage expression simply never fires
        }
        Optional<Instant> latest = cron.lastAtOrBefore(now);
        if (lastDue == null) {
            return new SchedulePlan(latest.orElse(now), null);
        }
        Optional<Instant> next = cron.nextAfter(lastDue);
        if (next.isEmpty() || next.get().isAfter(now) || latest.isEmpty()) {
            return NOTHING;
        }
        Instant due = latest.get();
        if (schedule.suspend()) {
            return new SchedulePlan(due, null);
        }
        Duration late = Duration.between(due, now);
        if (schedule.startingDeadline() != null && late.compareTo(schedule.startingDeadline()) > 0) {
            return new SchedulePlan(due, null);
        }
        return new SchedulePlan(due, due);
    }
}
