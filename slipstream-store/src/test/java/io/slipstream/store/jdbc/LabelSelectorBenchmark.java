package io.slipstream.store.jdbc;

import static io.slipstream.testing.JobBuilder.aJob;

import io.slipstream.api.codec.Json;
import io.slipstream.api.label.LabelSelector;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.model.EventType;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunOrigin;
import io.slipstream.model.RunRecord;
import io.slipstream.store.RunQuery;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A page of runs selected by labels from 100,000 runs in the embedded H2 store (the default), for selectors from
 * broad to rare: the first page, and a page half-way through (by cursor). Not part of the test run (its name does
 * not end in Test); run it with:
 *
 * <pre>mvn -B -pl slipstream-store -am test -Dtest=LabelSelectorBenchmark -Dsurefire.failIfNoSpecifiedTests=false</pre>
 *
 * Prints the figures (medians and p99 of repeated queries, milliseconds) and writes them to
 * {@code slipstream-store/target/label-selector-benchmark.json}. Figures, never assertions.
 */
class LabelSelectorBenchmark {
    private static final int RUNS = Integer.getInteger("bench.runs", 100_000);
    private static final int PER_TRANSACTION = 1_000;
    private static final int REPEATS = 31;
    private static final int PAGE = 100;
    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    @TempDir
    Path dataDir;

    @Test
    void selectedPagesOf100000Runs() throws Exception {
        try (JdbcStore store = JdbcStore.openH2(dataDir)) {
            JobSpec spec = aJob("train").workspace("team-a").spec();
            long filling = System.nanoTime();
            for (int start = 0; start < RUNS; start += PER_TRANSACTION) {
                int from = start;
                store.commit(tx -> {
                    for (int i = from; i < Math.min(RUNS, from + PER_TRANSACTION); i++) {
                        // team: 10 values (10% each); sweep on 1 run in 1,000; every run 3 or 4 labels.
                        Map<String, String> labels = new LinkedHashMap<>(Map.of("team", "t" + (i % 10), "tier", i % 3 == 0 ? "gold" : "silver",
                                "example.com/owner", "user-" + (i % 97)));
                        if (i % 1000 == 7) {
                            labels.put("sweep", "s" + (i / 1000 % 5));
                        }
                        Instant created = T0.plusMillis(i * 10L);
                        RunRecord run = RunRecord.queued(new RunId("train-" + Integer.toString(i, 36) + "x"), "team-a", "train", 1, spec,
                                new RunOrigin(Map.of(), null, null, "alice", labels), created);
                        tx.createRun(run, RunEvent.of(run.id(), created, EventType.StateChanged, "QUEUED", "Submitted", null, null));
                    }
                });
            }
            double fillSeconds = (System.nanoTime() - filling) / 1e9;

            Map<String, Object> figures = new LinkedHashMap<>();
            for (String selector : List.of("", "team=t3", "team in (t1,t2),tier=gold", "team!=t3", "sweep", "sweep=s2", "!sweep", "nobody=here")) {
                LabelSelector parsed = LabelSelector.parse(selector);
                List<RunRecord> first = store.runs().list(query(parsed, null));
                RunQuery.Cursor middle = cursorHalfWay(store, parsed);
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("matchesOnFirstPage", first.size());
                row.put("firstPageMillis", timed(() -> store.runs().list(query(parsed, null))));
                if (middle != null) {
                    row.put("pageHalfWayMillis", timed(() -> store.runs().list(query(parsed, middle))));
                }
                figures.put(selector.isEmpty() ? "(none)" : selector, row);
            }
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("benchmark", "label-selector-pages");
            result.put("store", "h2 (embedded file)");
            result.put("runs", RUNS);
            result.put("page", PAGE);
            result.put("repeats", REPEATS);
            result.put("cores", Runtime.getRuntime().availableProcessors());
            result.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
            result.put("fillSeconds", Math.round(fillSeconds * 10) / 10.0);
            result.put("selectors", figures);
            String json = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(result);
            System.out.println(json);
            Files.writeString(Path.of("target", "label-selector-benchmark.json"), json);
        }
    }

    private static RunQuery query(LabelSelector selector, RunQuery.Cursor before) {
        return new RunQuery(null, null, null, null, null, null, selector, PAGE, before);
    }

    /** The cursor after about half of the runs the selector matches (by time: runs are 10 ms apart), or null. */
    private static RunQuery.Cursor cursorHalfWay(JdbcStore store, LabelSelector selector) {
        RunQuery.Cursor half = new RunQuery.Cursor(T0.plusMillis(RUNS * 5L).toEpochMilli(), "~");
        List<RunRecord> page = store.runs().list(query(selector, half));
        return page.isEmpty() ? null : half;
    }

    private static Map<String, Double> timed(Runnable query) {
        for (int i = 0; i < 5; i++) {
            query.run();
        }
        List<Double> millis = new ArrayList<>();
        for (int i = 0; i < REPEATS; i++) {
            long start = System.nanoTime();
            query.run();
            millis.add((System.nanoTime() - start) / 1e6);
        }
        Collections.sort(millis);
        Map<String, Double> summary = new LinkedHashMap<>();
        summary.put("median", round(millis.get(millis.size() / 2)));
        summary.put("p99", round(millis.get((int) Math.ceil(millis.size() * 0.99) - 1)));
        return summary;
    }

    private static double round(double value) {
        return Math.round(value * 100) / 100.0;
    }
}
