package io.slipstream.simulator.report;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class FormatTest {
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
            "0, 0.0%",
            "0.0005, 0.05%",          // was (0.1%): rounded up a class
            "0.000012, 0.0012%",
            "0.00000001, 0.000001%",  // never 0.0%
            "0.0012, 0.12%",
            "0.005, 0.5%",
            "0.00996, 0.99%",         // 2 significant digits would give 1.0%: stays below 1%
            "0.0099, 0.99%",
            "0.01, 1.0%",
            "0.0123, 1.2%",
            "0.9013, 90.1%",
            "0.95349, 95.3%",
            "0.99949, 99.9%",
            "0.99996, 99.9%",         // never 100.0% for less than all
            "1, 100.0%",
            "-0.0005, -0.05%"})
    void percentages(double fraction, String expected) {
        assertThat(Format.percent(fraction)).isEqualTo(expected);
    }
}
