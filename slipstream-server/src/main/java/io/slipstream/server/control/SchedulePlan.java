package io.slipstream.server.control;

import io.slipstream.api.spec.Cron;
import io.slipstream.api.spec.ScheduleSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * What a schedule does at {@code now}, as a pure function (tests drive it with any clock). Due times count from the
 * last one handled, or from when the job was last applied if that is later: a new or changed schedule never catches
 * up on times before it. The due times since then are collapsed into one: the latest, started if it is not later
 * than {@code startingDeadline}, skipped otherwise. After a downtime that is one late run, never a burst.
 *
 * @param lastDue the new last due time to record ({@code null}: nothing changes); always later than the one before
 * @param fire    the due time to start a run for, if any
 */
public record SchedulePlan(Instant lastDue, Instant fire) {
    static final SchedulePlan NOTHING = new SchedulePlan(null, null);

    /**
     * @param lastDue   the last due time handled (started or skipped), or {@code null} if none was
     * @param appliedAt when the job was last changed
     */
    static SchedulePlan at(ScheduleSpec schedule, Instant lastDue, Instant appliedAt, Instant now) {
        Cron cron = cronOf(schedule);
        if (cron == null) {
            return NOTHING;
        }
        Instant since = lastDue == null || appliedAt.isAfter(lastDue) ? appliedAt : lastDue;
        Optional<Instant> next = cron.nextAfter(since);
        if (next.isEmpty() || next.get().isAfter(now)) {
            return NOTHING;
        }
        // The latest due time, never earlier than the next one: the recorded time only ever moves forward.
        Instant due = cron.lastAtOrBefore(now).filter(latest -> latest.isAfter(next.get())).orElse(next.get());
        if (schedule.suspend()) {
            return new SchedulePlan(due, null);
        }
        Duration late = Duration.between(due, now);
        if (schedule.startingDeadline() != null && late.compareTo(schedule.startingDeadline()) > 0) {
            return new SchedulePlan(due, null);
        }
        return new SchedulePlan(due, due);
    }

    /**
     * The next due time of {@code schedule} after {@code now}, as {@link #at} will meet it (empty while suspended, and
     * for a stored expression that never fires). A due time at or before {@code now} is already the control loop's to
     * handle at its next tick, so the one shown is always ahead.
     */
    public static Optional<Instant> next(ScheduleSpec schedule, Instant now) {
        Cron cron = cronOf(schedule);
        return cron == null || schedule.suspend() ? Optional.empty() : cron.nextAfter(now);
    }

    private static Cron cronOf(ScheduleSpec schedule) {
        try {
            return Cron.parse(schedule.cron(), schedule.timeZone());
        } catch (IllegalArgumentException e) {
            return null; // validated when applied; a stored garbage expression simply never fires
        }
    }
}
