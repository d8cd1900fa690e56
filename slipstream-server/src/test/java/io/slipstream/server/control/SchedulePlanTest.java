package io.slipstream.server.control;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.spec.ConcurrencyPolicy;
import io.slipstream.api.spec.ScheduleSpec;
import io.slipstream.testing.TestingClock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The schedule's decisions over a fake clock, with the last due time kept as the store keeps it. */
class SchedulePlanTest {
    private final TestingClock clock = new TestingClock(Instant.parse("2026-06-01T09:59:30Z"));
    private Instant lastDue;
    private Instant applied = clock.instant();
    private final List<Instant> fired = new ArrayList<>();

    private static ScheduleSpec schedule(String cron, String zone, Duration startingDeadline, boolean suspend) {
        return new ScheduleSpec(cron, ZoneId.of(zone), ConcurrencyPolicy.Allow, startingDeadline, suspend);
    }

    /** One tick of the control loop: plan, then record as {@link Schedules} does. */
    private void tick(ScheduleSpec schedule) {
        SchedulePlan plan = SchedulePlan.at(schedule, lastDue, applied, clock.instant());
        if (plan.lastDue() != null) {
            assertThat(lastDue == null || plan.lastDue().isAfter(lastDue)).as("the last due time only moves forward").isTrue();
            lastDue = plan.lastDue();
        }
        if (plan.fire() != null) {
            fired.add(plan.fire());
        }
    }

    /** Ticks every {@code step} for {@code total}, like a running server. */
    private void runFor(ScheduleSpec schedule, Duration total, Duration step) {
        Instant end = clock.instant().plus(total);
        while (clock.instant().isBefore(end)) {
            tick(schedule);
            clock.advance(step);
        }
    }

    @Test
    void firesOncePerDueTimeAndNeverForTimesBeforeTheJobWasApplied() {
        ScheduleSpec everyMinute = schedule("* * * * *", "UTC", null, false);
        tick(everyMinute); // applied at 09:59:30: 09:59 is in the past and does not run
        assertThat(fired).isEmpty();
        runFor(everyMinute, Duration.ofMinutes(3), Duration.ofSeconds(1));
        assertThat(fired).containsExactly(Instant.parse("2026-06-01T10:00:00Z"), Instant.parse("2026-06-01T10:01:00Z"),
                Instant.parse("2026-06-01T10:02:00Z"));
    }

    @Test
    void afterADowntimeMissedTimesRunOnceLateNeverInABurst() {
        ScheduleSpec everyMinute = schedule("* * * * *", "UTC", null, false);
        tick(everyMinute);
        clock.advance(Duration.ofMinutes(30).plusSeconds(10)); // the server was down for half an hour
        tick(everyMinute);
        tick(everyMinute);
        assertThat(fired).containsExactly(Instant.parse("2026-06-01T10:29:00Z"));
    }

    @Test
    void aMissedTimeLaterThanTheStartingDeadlineIsSkipped() {
        ScheduleSpec hourly = schedule("0 * * * *", "UTC", Duration.ofMinutes(5), false);
        tick(hourly);
        clock.set(Instant.parse("2026-06-01T10:07:00Z")); // 7 minutes late: too late
        tick(hourly);
        assertThat(fired).isEmpty();
        assertThat(lastDue).as("recorded as handled, so it is not tried again").isEqualTo(Instant.parse("2026-06-01T10:00:00Z"));
        clock.set(Instant.parse("2026-06-01T11:04:59Z")); // within the deadline
        tick(hourly);
        assertThat(fired).containsExactly(Instant.parse("2026-06-01T11:00:00Z"));
    }

    @Test
    void aSuspendedScheduleStartsNothingAndDoesNotCatchUpWhenResumed() {
        ScheduleSpec suspended = schedule("* * * * *", "UTC", null, true);
        tick(suspended);
        runFor(suspended, Duration.ofMinutes(5), Duration.ofSeconds(10));
        assertThat(fired).isEmpty();
        ScheduleSpec resumed = schedule("* * * * *", "UTC", null, false);
        applied = clock.instant(); // resuming is applying the changed job
        tick(resumed);
        assertThat(fired).isEmpty();
        runFor(resumed, Duration.ofMinutes(1), Duration.ofSeconds(10));
        assertThat(fired).hasSize(1);
    }

    @Test
    void aRestartAtTheDueTimeDoesNotFireItAgain() {
        ScheduleSpec everyMinute = schedule("* * * * *", "UTC", null, false);
        tick(everyMinute);
        clock.set(Instant.parse("2026-06-01T10:00:00Z"));
        tick(everyMinute); // fires, and the store records 10:00 with the run, in one transaction
        Instant recorded = lastDue;
        // A new server process reads the recorded due time and ticks at the same instant, and a moment later.
        lastDue = recorded;
        tick(everyMinute);
        clock.advance(Duration.ofMillis(500));
        tick(everyMinute);
        assertThat(fired).containsExactly(Instant.parse("2026-06-01T10:00:00Z"));
    }

    @Test
    void daylightSavingTimeNeitherDoublesNorLosesARegularTime() {
        // Every day at 02:30 in Berlin, ticking every 5 minutes from Saturday to Tuesday, across both changes of 2026.
        ScheduleSpec nightly = schedule("30 2 * * *", "Europe/Berlin", null, false);
        clock.set(Instant.parse("2026-03-28T00:00:00Z"));
        applied = clock.instant();
        tick(nightly);
        runFor(nightly, Duration.ofDays(3), Duration.ofMinutes(5));
        // 2026-03-29 has no 02:30 (the clocks jump from 02:00 to 03:00): that night is skipped.
        assertThat(fired).containsExactly(Instant.parse("2026-03-28T01:30:00Z"), Instant.parse("2026-03-30T00:30:00Z"));

        fired.clear();
        lastDue = null;
        clock.set(Instant.parse("2026-10-24T00:00:00Z"));
        applied = clock.instant();
        tick(nightly);
        runFor(nightly, Duration.ofDays(3), Duration.ofMinutes(5));
        // 2026-10-25 has 02:30 twice: it runs once.
        assertThat(fired).containsExactly(Instant.parse("2026-10-24T00:30:00Z"), Instant.parse("2026-10-25T00:30:00Z"),
                Instant.parse("2026-10-26T01:30:00Z"));
    }

    @Test
    void theNextRunShownIsTheDueTimeThatFiresNextAlsoAcrossDaylightSavingTime() {
        ScheduleSpec nightly = schedule("30 2 * * *", "Europe/Berlin", null, false);
        clock.set(Instant.parse("2026-03-28T00:00:00Z"));
        applied = clock.instant();
        List<Instant> shown = new ArrayList<>();
        Instant end = clock.instant().plus(Duration.ofDays(3));
        while (clock.instant().isBefore(end)) {
            Instant next = SchedulePlan.next(nightly, clock.instant()).orElseThrow();
            assertThat(next).isAfter(clock.instant());
            if (shown.isEmpty() || !shown.get(shown.size() - 1).equals(next)) {
                shown.add(next);
            }
            tick(nightly);
            clock.advance(Duration.ofMinutes(5));
        }
        // Each time shown fired in its turn (the last is still ahead), the night without 02:30 was never shown.
        assertThat(shown).containsExactly(Instant.parse("2026-03-28T01:30:00Z"), Instant.parse("2026-03-30T00:30:00Z"),
                Instant.parse("2026-03-31T00:30:00Z"));
        assertThat(fired).isEqualTo(shown.subList(0, 2));
        assertThat(SchedulePlan.next(schedule("30 2 * * *", "Europe/Berlin", null, true), clock.instant())).as("suspended").isEmpty();
    }

    @Test
    void aDueTimeRightAfterTheApplyFiresEvenIfTheFirstTickComesLater() {
        applied = Instant.parse("2026-06-01T01:59:59.800Z");
        clock.set(Instant.parse("2026-06-01T02:00:00.300Z"));
        tick(schedule("0 2 * * *", "UTC", null, false));
        assertThat(fired).containsExactly(Instant.parse("2026-06-01T02:00:00Z"));
    }

    @Test
    void aChangedScheduleDoesNotFireForTimesBeforeTheChange() {
        applied = Instant.parse("2026-06-01T00:00:00Z");
        clock.set(Instant.parse("2026-06-01T02:00:01Z"));
        tick(schedule("0 2 * * *", "UTC", null, false));
        assertThat(fired).hasSize(1);
        // At 10:00 the job moves to 03:00: today's 03:00 is before the change and is not run late.
        applied = Instant.parse("2026-06-01T10:00:00Z");
        clock.set(Instant.parse("2026-06-01T10:00:01Z"));
        ScheduleSpec moved = schedule("0 3 * * *", "UTC", null, false);
        tick(moved);
        assertThat(fired).hasSize(1);
        clock.set(Instant.parse("2026-06-02T03:00:00.500Z"));
        tick(moved);
        assertThat(fired).containsExactly(Instant.parse("2026-06-01T02:00:00Z"), Instant.parse("2026-06-02T03:00:00Z"));
    }

    @Test
    void aStoredExpressionThatNoLongerParsesNeverFires() {
        ScheduleSpec garbage = schedule("61 * * * *", "UTC", null, false);
        tick(garbage);
        runFor(garbage, Duration.ofMinutes(3), Duration.ofSeconds(30));
        assertThat(fired).isEmpty();
    }
}
