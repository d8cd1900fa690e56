package io.slipstream.executor.local.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Reading {@code /proc}; what the executor does with it is tested through the executor (LocalProcessExecutorTest). */
class ProcFsTest {
    @Test
    void theRealUidsOfTheMachinesProcessesIncludeThisOnesOwn() throws Exception {
        int own = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        assertThat(ProcFs.realUids()).contains(own);
    }

    @Test
    void statLinesWithParenthesesInTheCommandNameParse() {
        ProcFs.Stat stat = ProcFs.parse(42, "42 (a) b (c)) S 1 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 12345 0 0");
        assertThat(stat.ppid()).isEqualTo(1);
        assertThat(stat.session()).isEqualTo(42);
        assertThat(stat.startTime()).isEqualTo(12345);
    }
}
