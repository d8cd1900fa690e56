package io.slipstream.server.bench;

import io.slipstream.server.support.TestServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What the server benchmarks read of a running server and this process: its metrics, resident memory, percentiles. */
final class ServerFigures {
    static final Pattern CYCLE_SUM = Pattern.compile("^slipstream_cycle_duration_seconds_sum ([0-9.E]+)$", Pattern.MULTILINE);
    static final Pattern CYCLE_COUNT = Pattern.compile("^slipstream_cycle_duration_seconds_count ([0-9.E]+)$", Pattern.MULTILINE);
    static final Pattern CYCLE_MAX = Pattern.compile("^slipstream_cycle_duration_seconds_max ([0-9.E]+)$", Pattern.MULTILINE);

    private ServerFigures() {
    }

    /** The gauge of runs in {@code state}. */
    static Pattern runs(String state) {
        return Pattern.compile("^slipstream_runs\\{state=\"" + state + "\",?\\} ([0-9.E]+)$", Pattern.MULTILINE);
    }

    static String metrics(TestServer server, String admin) {
        return server.get("/metrics", admin).text();
    }

    /** The value of the first line {@code pattern} matches, 0 if none does. */
    static double value(Pattern pattern, String metrics) {
        Matcher m = pattern.matcher(metrics);
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }

    /** This process's resident memory (the server, and the benchmark's clients beside it). */
    static long residentMegabytes() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) >> 10;
            }
        }
        return -1;
    }

    /** The size of the store's files under {@code dir}: every file ({@code all}: PostgreSQL's directory) or H2's {@code .db} files. */
    static long storeMegabytes(Path dir, boolean all) throws IOException {
        try (var files = Files.walk(dir)) {
            return files.filter(path -> all || path.toString().endsWith(".db")).mapToLong(path -> path.toFile().length()).sum() >> 20;
        }
    }

    /** The {@code p}th percentile (nearest rank); NaN of none. */
    static double percentile(List<Double> values, int p) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1));
    }

    /** To one decimal. */
    static double round(double value) {
        return Math.round(value * 10) / 10.0;
    }
}
