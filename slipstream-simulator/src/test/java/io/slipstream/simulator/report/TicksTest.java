package io.slipstream.simulator.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TicksTest {
    @ParameterizedTest(name = "[{0}, {1}] in about {2}: step {3}")
    @CsvSource({
            "0, 1142.4, 5, 200",   // not 228.5
            "0, 971.5, 5, 200",
            "0, 194.3, 5, 50",     // not 38.9
            "0, 70.2, 10, 10",
            "0, 1, 5, 0.2",
            "0, 0.03, 3, 0.01",
            "0, 1, 4, 0.2",
            "0, 100, 10, 10",
            "0, 8, 10, 1"})
    void stepsAreOneTwoOrFiveTimesAPowerOfTen(double min, double max, int target, double step) {
        assertThat(Ticks.step(min, max, target)).isEqualTo(step);
    }

    @Test
    void linearTicksAreMultiplesOfTheStepWithinTheRange() {
        assertThat(Ticks.linear(0, 1142.4, 5)).containsExactly(0.0, 200.0, 400.0, 600.0, 800.0, 1000.0);
        assertThat(Ticks.linear(0, 1, 5)).containsExactly(0.0, 0.2, 0.4, 0.6, 0.8, 1.0); // no 0.6000000000000001
        assertThat(Ticks.linear(3, 17, 5)).containsExactly(4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0);
        assertThat(Ticks.label(1000, 200)).isEqualTo("1,000");
        assertThat(Ticks.label(0.2, 0.2)).isEqualTo("0.2");
    }

    @Test
    void logDurationTicksAreRoundDurations() {
        assertThat(Ticks.logDurations(1, Ticks.durationAtLeast(925))).containsExactly(1.0, 10.0, 60.0, 600.0, 3_600.0);
        assertThat(Ticks.durationAtLeast(39)).isEqualTo(60.0);
        assertThat(Ticks.durationAtLeast(1_300_000)).isEqualTo(2_592_000.0);
        List<String> labels = Ticks.logDurations(1, 2_592_000).stream().map(Ticks::durationLabel).toList();
        assertThat(labels).containsExactly("1s", "10s", "1m", "10m", "1h", "6h", "1d", "7d", "30d");
        assertThat(Ticks.durationLabel(0.1)).isEqualTo("0.1s");
    }

    @ParameterizedTest(name = "{0} s reads in {1}")
    @CsvSource({"0, SECONDS", "90, SECONDS", "180, SECONDS", "181, MINUTES", "5400, MINUTES", "14400, HOURS", "259200, HOURS", "5184000, DAYS"})
    void aTimeAxisReadsInTheLargestUnitThatLeavesMoreThanThree(double seconds, Ticks.TimeUnit unit) {
        assertThat(Ticks.TimeUnit.of(seconds)).isEqualTo(unit);
    }
}
