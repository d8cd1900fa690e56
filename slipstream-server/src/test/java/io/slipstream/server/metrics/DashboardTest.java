package io.slipstream.server.metrics;

import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.QuotaSpec;
import io.slipstream.api.spec.QuotaType;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.executor.NodeInfo;
import io.slipstream.model.EventType;
import io.slipstream.model.FaultState;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.server.control.LiveSnapshot;
import io.slipstream.store.Store;
import io.slipstream.store.memory.InMemoryStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** The Grafana dashboard in deploy/ asks only for metrics the server exports, under the names it exports them. */
class DashboardTest {
    private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");
    private static final Path DASHBOARD = Path.of(System.getProperty("slipstream.repo", "..")).resolve("deploy/grafana/slipstream.json");

    @Test
    void everyMetricTheDashboardQueriesIsExported() throws Exception {
        String scrape = scrapeAfterEveryKindOfChange();
        Set<String> queried = new TreeSet<>();
        JsonNode dashboard = Json.mapper().readTree(Files.readString(DASHBOARD));
        for (JsonNode panel : dashboard.get("panels")) {
            for (JsonNode target : panel.get("targets")) {
                Matcher names = Pattern.compile("slipstream_[a-z_]+").matcher(target.get("expr").asString());
                while (names.find()) {
                    queried.add(names.group());
                }
            }
        }
        assertThat(queried).hasSizeGreaterThan(15);
        for (String name : queried) {
            assertThat(scrape).as("the dashboard queries %s", name).containsPattern("(?m)^" + Pattern.quote(name) + "[{ ]");
        }
    }

    /** A quota, and runs admitted, preempted for an owner, restarted, finished: every metric has a sample. */
    private static String scrapeAfterEveryKindOfChange() {
        InMemoryStore target = new InMemoryStore();
        Clock clock = Clock.fixed(T0, ZoneOffset.UTC);
        try (ServerMetrics metrics = new ServerMetrics(clock)) {
            Store store = metrics.observe(target);
            List<NodeInfo> nodes = List.of(new NodeInfo("node-1", new Resources(32_000, 256L << 30, 8, "sim-gpu"), List.of(), Map.of()));
            metrics.readFrom(() -> LiveSnapshot.read(store, nodes), () -> T0, () -> true);
            store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of("team-a", null), new WorkspaceSpec(List.of())), T0));
            store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of("gpus", "team-a"),
                    new QuotaSpec(QuotaType.General, new Resources(8_000, 64L << 30, 4, null), null, null, false, null)), T0));
            RunRecord owner = create(store, "owner");
            RunRecord borrower = create(store, "borrower");
            borrower = updated(store, borrower.admitted(RealTimeResources.NotInQuota, "Admitted", T0));
            borrower = updated(store, borrower.preempting(owner.id(), "Preempted"));
            borrower = updated(store, borrower.withFaults(new FaultState(0, 0, 0, 0, null, 0, FaultState.RestartCause.PREEMPTION, null, null, null, null,
                    null, 5_000)));
            updated(store, borrower.requeued("Preempted", T0));
            owner = updated(store, owner.admitted(RealTimeResources.InQuota, "Admitted", T0));
            owner = updated(store, owner.moveTo(RunState.RUNNING, "Running", T0));
            updated(store, owner.moveTo(RunState.TERMINATING, "Done", T0).moveTo(RunState.SUCCEEDED, "Done", T0));
            metrics.cycle(java.time.Duration.ofMillis(3));
            metrics.request("GET", "/api/v1/runs", 200, 4);
            return metrics.scrape();
        }
    }

    private static RunRecord updated(Store store, RunRecord run) {
        return store.write(tx -> tx.updateRun(run));
    }

    private static RunRecord create(Store store, String job) {
        RunRecord run = RunRecord.queued(RunId.newFor(job), "team-a", job, 1, aJob(job).workspace("team-a").quota("gpus").spec(), T0);
        store.runs().active(); // read first, as the control loop does: the metrics know the run before it changes
        return store.write(tx -> tx.createRun(run, RunEvent.of(run.id(), T0, EventType.StateChanged, "QUEUED", "Submitted", null, null)));
    }
}
