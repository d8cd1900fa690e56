package io.slipstream.api.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.time.ZoneId;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class CronTest {
    @ParameterizedTest
    @ValueSource(strings = {"", "   ", "* * * *", "* * * * * *", "61 * * * *", "* 25 * * *", "a b c d e", "*/0 * * * *", "L L L L L",
            "0 0 31 2 ?", "99999999999 * * * *", "- - - - -", "1-/2 * * * *", "0 0 30 2 *"})
    void garbageIsRefusedWithAMessageNeverAnUncheckedException(String expression) {
        String problem = Cron.problem(expression);
        if (problem != null) {
            assertThat(problem).contains("is not a cron expression");
        }
        // Either way, nothing escaped: a parse either works or explains itself.
    }

    @Test
    void aTimeThatDaylightSavingSkipsDoesNotRunAndARepeatedOneRunsOnce() {
        Cron twoAm = Cron.parse("0 2 * * *", ZoneId.of("Europe/Berlin"));
        // 2026-03-29: Berlin's clocks jump from 02:00 to 03:00, so that night has no 02:00.
        Instant saturday = twoAm.nextAfter(Instant.parse("2026-03-27T12:00:00Z")).orElseThrow();
        assertThat(saturday).isEqualTo(Instant.parse("2026-03-28T01:00:00Z"));
        assertThat(twoAm.nextAfter(saturday)).contains(Instant.parse("2026-03-30T00:00:00Z"));
        // 2026-10-25: 02:30 happens twice in Berlin; the schedule fires once.
        Cron halfPastTwo = Cron.parse("30 2 * * *", ZoneId.of("Europe/Berlin"));
        Instant sunday = halfPastTwo.nextAfter(Instant.parse("2026-10-24T12:00:00Z")).orElseThrow();
        assertThat(sunday).isEqualTo(Instant.parse("2026-10-25T00:30:00Z"));
        assertThat(halfPastTwo.nextAfter(sunday)).contains(Instant.parse("2026-10-26T01:30:00Z"));
    }

    @Test
    void theLastDueTimeAtOrBeforeAnInstant() {
        Cron everyMinute = Cron.parse("* * * * *", ZoneId.of("UTC"));
        assertThat(everyMinute.lastAtOrBefore(Instant.parse("2026-06-01T10:05:00Z"))).contains(Instant.parse("2026-06-01T10:05:00Z"));
        assertThat(everyMinute.lastAtOrBefore(Instant.parse("2026-06-01T10:05:30Z"))).contains(Instant.parse("2026-06-01T10:05:00Z"));
    }

    @Test
    void aWrongNumberOfFieldsIsExplained() {
        assertThatThrownBy(() -> Cron.parse("* * *", ZoneId.of("UTC"))).hasMessageContaining("five fields");
    }
}
