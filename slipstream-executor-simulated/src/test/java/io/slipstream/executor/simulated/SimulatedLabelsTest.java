package io.slipstream.executor.simulated;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which label values a run may carry, and why the others are refused (a 400 naming the label, at apply and submit). */
class SimulatedLabelsTest {
    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            slipstream.io/simulated-duration  | 30s  |
            slipstream.io/simulated-duration  | 500ms |
            slipstream.io/simulated-duration  | soon | 'soon' is not a duration
            slipstream.io/simulated-duration  | -5s  | is not a duration
            slipstream.io/simulated-duration  | 0s   | must be longer than 0
            slipstream.io/simulated-duration  | 2h   | must be shorter than the run's maxRuntime (1h
            slipstream.io/simulated-duration  | 1h   | must be shorter than the run's maxRuntime (1h
            slipstream.io/simulated-duration  | 999999999d | must be shorter than the run's maxRuntime
            slipstream.io/simulated-exit-code | 0    |
            slipstream.io/simulated-exit-code | 255  |
            slipstream.io/simulated-exit-code | 256  | from 0 to 255
            slipstream.io/simulated-exit-code | -1   | from 0 to 255
            slipstream.io/simulated-exit-code | one  | from 0 to 255
            """)
    void refusesWhatIsNotADurationOrAnExitCode(String key, String value, String why) {
        Map<String, String> refused = SimulatedLabels.refusals(Map.of(key, value, "team", "vision"), Duration.ofHours(1));
        if (why == null) {
            assertThat(refused).isEmpty();
        } else {
            assertThat(refused).containsOnlyKeys(key);
            assertThat(refused.get(key)).contains(why);
        }
    }
}
