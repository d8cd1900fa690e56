package io.slipstream.simulator.report;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ProgressLineTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "5201280000 | 5175360000 | 69000 | borrowing: day 60.2 (submissions ended at day 59.9), 69,000 of 69,351 jobs done",
            "864000000  | 5175360000 | 1110  | borrowing: day 10.0 (submissions end at day 59.9), 1,110 of 69,351 jobs done"})
    void saysWhereSubmissionsEndAndHowManyJobsAreDone(long virtual, long lastSubmit, int done, String expected) {
        assertThat(ProgressLine.format("borrowing", virtual, lastSubmit, done, 69_351)).isEqualTo(expected);
    }
}
