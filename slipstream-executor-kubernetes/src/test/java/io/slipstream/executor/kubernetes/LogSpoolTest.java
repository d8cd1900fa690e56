package io.slipstream.executor.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The log copy: no line twice, none lost, across copies within one second, partial lines and restarts. */
class LogSpoolTest {
    private static final Instant T = Instant.parse("2026-11-30T10:00:00Z");

    @TempDir
    Path dir;

    /** A pod's log as the API serves it: whole seconds in sinceTime, nanosecond timestamps on lines. */
    private final List<String[]> lines = new ArrayList<>();
    private final LogSpool.Source source = (namespace, pod, since) -> {
        StringBuilder text = new StringBuilder();
        for (String[] line : lines) {
            Instant at = Instant.parse(line[0]);
            if (since == null || !at.isBefore(since)) {
                text.append(line[0]).append(' ').append(line[1]);
            }
        }
        return text.toString();
    };

    private void write(Instant at, String text) {
        lines.add(new String[] {at.toString(), text});
    }

    private static String read(LogSpool spool) {
        return new String(spool.read("ns", "p", 0, 1 << 20).data(), StandardCharsets.UTF_8);
    }

    @Test
    void linesOfTheSameSecondAreCopiedOnceEvenWhenTheyCarryTheSameTimestamp() {
        LogSpool spool = new LogSpool(source, dir);
        write(T.plusMillis(100), "one\n");
        write(T.plusMillis(200), "two\n");
        write(T.plusMillis(200), "two again, same instant\n");
        spool.sync("ns", "p", false, true);
        write(T.plusMillis(200), "and a third at that instant\n");
        write(T.plusMillis(900), "three\n");
        spool.sync("ns", "p", false, true);
        write(T.plusMillis(1500), "four\n");
        spool.sync("ns", "p", false, true);
        spool.sync("ns", "p", false, true);
        assertThat(read(spool)).isEqualTo("one\ntwo\ntwo again, same instant\nand a third at that instant\nthree\nfour\n");
        assertThat(spool.lastOutputAt("ns", "p")).isEqualTo(T.plusMillis(1500));
    }

    @Test
    void aLastLineWithoutNewlineCountsOnlyOnceTheContainerEnded() {
        LogSpool spool = new LogSpool(source, dir);
        write(T, "whole\n");
        write(T.plusMillis(10), "part");
        spool.sync("ns", "p", false, true);
        assertThat(read(spool)).isEqualTo("whole\n");
        spool.sync("ns", "p", true, true);
        assertThat(read(spool)).isEqualTo("whole\npart");
        write(T.plusMillis(20), "never asked for again\n");
        spool.sync("ns", "p", true, true);
        assertThat(read(spool)).as("the copy of an ended container is complete").isEqualTo("whole\npart");
    }

    @Test
    void aRestartedControlPlaneGoesOnWhereTheCopyStopped() {
        write(T, "before\n");
        new LogSpool(source, dir).sync("ns", "p", false, true);
        write(T.plusMillis(5), "after\n");
        LogSpool again = new LogSpool(source, dir);
        again.sync("ns", "p", false, true);
        assertThat(read(again)).isEqualTo("before\nafter\n");
        assertThat(new String(again.tail("ns", "p", 6).data(), StandardCharsets.UTF_8)).isEqualTo("after\n");
        again.delete("ns", "p");
        assertThat(read(again)).isEmpty();
    }
}
