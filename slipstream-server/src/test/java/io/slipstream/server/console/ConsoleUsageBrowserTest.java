package io.slipstream.server.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RunId;
import io.slipstream.model.usage.UsageChange;
import io.slipstream.model.usage.UsageKind;
import io.slipstream.server.support.TestServer;
import io.slipstream.testing.NoProcessLeftBehind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.Select;
import tools.jackson.databind.JsonNode;

/**
 * The console's usage charts in a real headless Chromium ({@link ConsoleBrowser}) against a real server whose store
 * holds a day of seeded history: the charts of a day, a week and a month show beside each quota's chart the very
 * totals {@code GET /api/v1/usage} gives for the same window, and each quota's bars add up to them; an hour of the
 * history shows its GPUs and its wait; a member is offered no pool's or cluster's chart. A server and a browser of its
 * own, so that no other test's runs move its figures.
 */
@ExtendWith(NoProcessLeftBehind.class)
class ConsoleUsageBrowserTest {
    private static final Path EXAMPLES = Path.of("..", "examples");
    private static final java.time.Duration WAIT = ConsoleBrowser.WAIT;

    @TempDir
    static Path dataDir;

    private static TestServer server;
    private static ConsoleBrowser console;
    private static ChromeDriver browser;
    private static String admin;
    private static String alice;

    @BeforeAll
    static void start() throws Exception {
        ConsoleBrowser.requireChromium();
        seedUsageHistory();
        server = TestServer.start(dataDir);
        admin = server.adminToken();
        TestServer.Response applied = server.post("/api/v1/apply", admin, Files.readString(EXAMPLES.resolve("quotas/teams.yaml")));
        assertThat(applied.status()).as(applied.text()).isEqualTo(200);
        alice = server.tokenFor("alice");
        console = ConsoleBrowser.open(server);
        browser = console.driver();
    }

    @AfterAll
    static void stop() {
        try {
            if (console != null) {
                console.close();
            }
        } finally {
            if (server != null) {
                server.close();
            }
        }
    }

    @AfterEach
    void noConsoleErrors() {
        console.assertNoConsoleErrors();
    }

    /** Today's hour, floored: the seeded history lies in the day before it. */
    private static final long HISTORY = Math.floorDiv(System.currentTimeMillis(), 3_600_000L) * 3_600_000L - 20 * 3_600_000L;

    /**
     * Usage of the day before the tests (runs cannot be run in the past): through the store as the control loop writes
     * it. team-a's run waits 30 min, then holds 8 GPUs in quota for 5.5 h; team-b's waits 2 h, then borrows 4 GPUs for
     * 6 h, the last 3 h of them lent by team-a; another of team-b's queues for 2 h and is given up on.
     */
    private static void seedUsageHistory() {
        try (io.slipstream.store.Store store = io.slipstream.store.jdbc.JdbcStore.openH2(dataDir)) {
            store.commit(tx -> tx.recordUsage(List.of(
                    opened("hist-a", UsageKind.QUEUED, "team-a", 8, 0), closed("hist-a", 30), opened("hist-a", UsageKind.IN_QUOTA, "team-a", 8, 30),
                    opened("hist-b", UsageKind.QUEUED, "team-b", 4, 60), closed("hist-b", 180), opened("hist-b", UsageKind.BORROWED, "team-b", 4, 180),
                    opened("hist-c", UsageKind.QUEUED, "team-b", 2, 120), closed("hist-c", 240),
                    new UsageChange.Lent(new QuotaId("team-a", "gpus"), 4, 0, at(360)),
                    closed("hist-a", 360), closed("hist-b", 540),
                    new UsageChange.Lent(new QuotaId("team-a", "gpus"), 0, 0, at(540)))));
        }
    }

    private static Instant at(long minutes) {
        return Instant.ofEpochMilli(HISTORY + minutes * 60_000);
    }

    private static UsageChange opened(String run, UsageKind kind, String workspace, long gpu, long minute) {
        return new UsageChange.Opened(new RunId(run), kind, workspace, "gpus", "alice", "train", gpu, 4000, at(minute));
    }

    private static UsageChange closed(String run, long minute) {
        return new UsageChange.Closed(new RunId(run), at(minute), 0, 0);
    }

    /**
     * The charts show, per quota, what the usage report says of the same window: the totals beside each chart are the
     * report's, and each step's bars add up to them. Read while nothing moves: a report read before and after the page
     * the same (a run still going or a quota still lending grows with the clock).
     */
    @Test
    void theUsageChartsShowTheUsageReportsFiguresForTheSameWindow() throws Exception {
        console.signIn(admin, "#/usage");
        for (String window : List.of("day", "week", "month")) {
            Map<String, Map<String, Double>> shown = null;
            JsonNode report = null;
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (shown == null) {
                JsonNode before = report(window);
                showUsage(window, "quota");
                Map<String, Map<String, Double>> read = shownTotals();
                if (before.equals(report(window))) {
                    shown = read;
                    report = before;
                }
                assertThat(System.nanoTime()).as("usage stops moving once nothing runs").isLessThan(deadline);
            }
            Map<String, Map<String, Double>> reported = new TreeMap<>();
            for (JsonNode line : report.get("lines")) {
                String name = line.get("workspace").asString() + "/" + (line.has("quota") ? line.get("quota").asString() : "(no quota)");
                reported.put(name, Map.of("inQuota", line.at("/gpuHours/inQuota").asDouble(), "borrowed", line.at("/gpuHours/borrowed").asDouble(),
                        "lent", line.at("/gpuHours/lent").asDouble(), "lostToPreemption", line.at("/gpuHours/lostToPreemption").asDouble(),
                        "queuedHours", line.at("/queued/hours").asDouble(), "queuedGpuHours", line.at("/queued/gpuHours").asDouble()));
            }
            assertThat(shown).as("the %s's totals beside the charts", window).isEqualTo(reported);
            assertThat(shown.get("team-a/gpus").get("inQuota")).as("the seeded 5.5 h of 8 GPUs, and more").isGreaterThanOrEqualTo(44.0);
            for (String series : shown.keySet()) {
                for (String kind : List.of("inQuota", "borrowed")) {
                    assertThat(barSum(series, kind)).as("%s: %s's %s bars", window, series, kind)
                            .isCloseTo(shown.get(series).get(kind), Offset.offset(1e-3));
                }
            }
            console.screenshot("usage-" + window);
        }
        // The seeded day by hour: team-a held 8 GPUs in quota all through the hour 2 h after the start; team-b's wait of 2 h ended at 3 h.
        showUsage("day", "quota");
        String hour = Instant.ofEpochMilli(HISTORY + 2 * 3_600_000L).toString();
        assertThat(browser.findElement(By.cssSelector(".usage-card[data-series='team-a/gpus'] rect[data-kind='inQuota'][data-bucket='" + hour + "']"))
                .getDomAttribute("data-value")).isEqualTo("8");
        String waited = Instant.ofEpochMilli(HISTORY + 3 * 3_600_000L).toString();
        assertThat(browser.findElement(By.cssSelector(".usage-card[data-series='team-b/gpus'] circle[data-kind='waits'][data-bucket='" + waited + "']"))
                .getDomAttribute("data-longest")).isEqualTo("2");

        showUsage("week", "cluster");
        console.waitFor(By.cssSelector(".usage-card[data-series='cluster'] line.usage-capacity"));
        assertThat(browser.findElement(By.cssSelector(".usage-card[data-series='cluster'] td[data-figure='utilization']")).getText()).endsWith(" %");
        console.screenshot("usage-cluster");
        showUsage("week", "pool");
        console.waitFor(By.cssSelector(".usage-card[data-series] rect[data-kind='inQuota']"));
        console.screenshot("usage-pools");

        console.signIn(alice, "#/usage");
        console.waitFor(By.cssSelector("#usage-charts[data-by='quota'] .usage-card"));
        assertThat(browser.findElements(By.cssSelector("#usage-by option")).stream().map(e -> e.getDomAttribute("value")).toList())
                .as("pools and the cluster are for admins").containsExactly("quota");
        assertThat(browser.findElements(By.cssSelector(".usage-card")).stream().map(e -> e.getDomAttribute("data-series")).toList())
                .containsExactly("team-a/gpus");
        console.screenshot("usage-alice");
    }

    /** The usage report of the window the charts of {@code window} show now. */
    private static JsonNode report(String window) {
        JsonNode series = server.get("/api/v1/usage/series?by=quota&window=" + window, admin).json();
        return server.get("/api/v1/usage?by=quota&since=" + series.get("since").asString() + "&until=" + series.get("until").asString(), admin).json();
    }

    /** Picks the window and the series in the page's selects, and waits until it shows them. */
    private static void showUsage(String window, String by) {
        console.go("#/usage");
        console.waitFor(By.cssSelector("#usage-charts[data-window]"));
        console.script("document.getElementById('usage-charts').removeAttribute('data-window')");
        new Select(browser.findElement(By.id("usage-window"))).selectByValue(window);
        new Select(browser.findElement(By.id("usage-by"))).selectByValue(by);
        // Choosing what is chosen already changes nothing: read again, as a change would.
        console.script("document.getElementById('usage-by').dispatchEvent(new Event('change'))");
        console.waitFor(By.cssSelector("#usage-charts[data-window='" + window + "'][data-by='" + by + "']"));
    }

    /** The totals beside each chart, by series, read in one script (the waits left out: the report has none). */
    @SuppressWarnings("unchecked")
    private static Map<String, Map<String, Double>> shownTotals() {
        Map<String, Map<String, Object>> read = (Map<String, Map<String, Object>>) console.script("""
                const shown = {};
                for (const card of document.querySelectorAll('.usage-card')) {
                  const figures = {};
                  for (const td of card.querySelectorAll('.usage-totals td[data-figure]')) {
                    if (['waits', 'meanWaitHours', 'longestWaitHours'].includes(td.dataset.figure)) continue;
                    figures[td.dataset.figure] = td.dataset.value;
                  }
                  shown[card.dataset.series] = figures;
                }
                return shown;""");
        Map<String, Map<String, Double>> shown = new TreeMap<>();
        read.forEach((series, figures) -> {
            Map<String, Double> values = new TreeMap<>();
            figures.forEach((figure, value) -> values.put(figure, Double.parseDouble((String) value)));
            shown.put(series, values);
        });
        return shown;
    }

    /** The GPU-hours of a series' bars of one kind: each bar's average times the hours it is over, added up. */
    private static double barSum(String series, String kind) {
        Object sum = console.script("return [...document.querySelectorAll(arguments[0])]"
                + ".reduce((a, r) => a + Number(r.dataset.value) * Number(r.dataset.hours), 0)", ".usage-card[data-series='" + series + "'] rect[data-kind='" + kind + "']");
        return ((Number) sum).doubleValue();
    }
}
