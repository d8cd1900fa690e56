package io.slipstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HintsTest {
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', nullValues = "-", quoteCharacter = '`', value = {
            "-                          | ./slipstream",
            "``                         | ./slipstream",
            "./slipstream               | ./slipstream",
            "slipstream                 | slipstream",
            "/opt/slipstream/slipstream | /opt/slipstream/slipstream",
            "/home/my dir/slipstream    | '/home/my dir/slipstream'",
            "/home/o'neil/slipstream    | '/home/o'\\''neil/slipstream'",
    })
    void theCommandIsSpelledAsInvokedAndSafeToPaste(String invokedAs, String expected) {
        assertThat(Hints.command(invokedAs)).isEqualTo(expected);
    }
}
