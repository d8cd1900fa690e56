package io.slipstream.cli.command;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.cli.CliException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class WatchTest {
    @ParameterizedTest
    @CsvSource({"500ms, PT0.5S", "2s, PT2S", "1m, PT1M", "100ms, PT0.1S", " 3s , PT3S"})
    void intervals(String text, Duration expected) {
        assertThat(Watch.interval("--watch-interval", text)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(value = {"2, not a duration", "2h, not a duration", "-1s, not a duration", "'', not a duration", "50ms, too short",
            "0s, too short"})
    void badIntervalsNameTheOption(String text, String why) {
        assertThatThrownBy(() -> Watch.interval("--watch-interval", text)).isInstanceOf(CliException.class)
                .hasMessageContaining("--watch-interval").hasMessageContaining(why);
    }

    @Test
    void printsEachChangeOnceAndStopsWhenDone() {
        Iterator<String> polls = List.of("QUEUED", "STARTING", "STARTING", "RUNNING", "RUNNING", "RUNNING", "SUCCEEDED").iterator();
        List<Duration> pauses = new ArrayList<>();
        StringWriter out = new StringWriter();
        String last = Watch.run(polls::next, state -> new Watch.Frame(state + "\n", state, state.equals("SUCCEEDED")),
                new PrintWriter(out), Duration.ofMillis(50), Duration.ofMillis(300), pauses::add);
        assertThat(last).isEqualTo("SUCCEEDED");
        assertThat(out.toString()).isEqualTo("QUEUED\nSTARTING\nRUNNING\nSUCCEEDED\n");
        assertThat(pauses).containsExactly(Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(300),
                Duration.ofMillis(300), Duration.ofMillis(300));
        assertThat(polls.hasNext()).isFalse();
    }

    @Test
    void theKeyDecidesWhatIsAChange() {
        // The text carries an AGE that moves; the key leaves it out: no re-print for time passing alone.
        Iterator<String[]> polls = List.of(new String[] {"a RUNNING 5s", "a RUNNING"}, new String[] {"a RUNNING 7s", "a RUNNING"},
                new String[] {"a SUCCEEDED 9s", "a SUCCEEDED"}).iterator();
        StringWriter out = new StringWriter();
        Watch.run(polls::next, p -> new Watch.Frame(p[0] + "\n", p[1], p[1].endsWith("SUCCEEDED")), new PrintWriter(out),
                Duration.ofSeconds(2), Duration.ofSeconds(2), d -> { });
        assertThat(out.toString()).isEqualTo("a RUNNING 5s\na SUCCEEDED 9s\n");
    }

    @Test
    void anInterruptEndsTheWatchWithWhatWasLastSeen() {
        StringWriter out = new StringWriter();
        String last = Watch.run(() -> "RUNNING", s -> new Watch.Frame(s + "\n", s, false), new PrintWriter(out), Duration.ofSeconds(1),
                Duration.ofSeconds(1), d -> {
                    throw new InterruptedException();
                });
        assertThat(last).isEqualTo("RUNNING");
        assertThat(out.toString()).isEqualTo("RUNNING\n");
        assertThat(Thread.interrupted()).isTrue(); // the flag is kept (and cleared here)
    }
}
