package io.slipstream.testing;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class NoProcessLeftBehindTest {
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "/tmp/a/data/instances/r/0/launch --x | true",
            "sh -c cd /tmp/a/data && x              | true",
            "sleep 1 /tmp/a/data                    | true",
            "/tmp/a/data2/instances/r/0/launch      | false",
            "/tmp/a/database /tmp/a/data.old        | false",
            "/tmp/a/data2 /tmp/a/data/x             | true",
            "sleep 300                              | false"})
    void aCommandLineIsInADirectoryOnlyWhereItNamesThatDirectoryOrAPathUnderIt(String commandLine, boolean inside) {
        assertThat(NoProcessLeftBehind.names(commandLine, "/tmp/a/data")).isEqualTo(inside);
    }
}
