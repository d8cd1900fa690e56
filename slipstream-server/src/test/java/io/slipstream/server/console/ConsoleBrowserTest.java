package io.slipstream.server.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RunId;
import io.slipstream.model.usage.UsageChange;
import io.slipstream.model.usage.UsageKind;
import io.slipstream.server.support.TestServer;
import io.slipstream.testing.NoProcessLeftBehind;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.logging.Level;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;
import tools.jackson.databind.JsonNode;

/**
 * The console in a real headless Chromium (Debian's chromium and chromedriver; Selenium Manager never runs, nothing is
 * downloaded) against a real server with the local executor: every page loads without a console error, a borrowed run
 * turns RESOURCE_PREEMPTED live when the owner takes its guarantee back, hostile output stays text, a member sees only
 * their workspaces, and 1,000 runs page through. One browser for the class; screenshots in target/console-screenshots.
 * {@code -Dconsole.skip=true} skips it where no Chromium is installed; elsewhere (CI) a missing one fails it.
 */
@ExtendWith(NoProcessLeftBehind.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleBrowserTest {
    private static final Path EXAMPLES = Path.of("..", "examples");
    private static final String CHROMIUM = "/usr/bin/chromium";
    private static final String CHROMEDRIVER = "/usr/bin/chromedriver";
    private static final Path SCREENSHOTS = Path.of("target", "console-screenshots");
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String HOSTILE = "<img src=x onerror=\"window.__pwned=1\">";

    @TempDir
    static Path dataDir;

    private static TestServer server;
    private static ChromeDriver browser;
    private static String admin;
    private static String alice;
    private static String bob;

    @BeforeAll
    static void start() throws Exception {
        Assumptions.assumeFalse(Boolean.getBoolean("console.skip"), "console.skip=true: the browser tests of the console are skipped");
        for (String tool : List.of(CHROMIUM, CHROMEDRIVER)) {
            if (!Files.isExecutable(Path.of(tool))) {
                throw new AssertionError(tool + " is missing: install Debian's chromium and chromium-driver (apt-get install chromium "
                        + "chromium-driver; .ci/run does), or skip these tests locally with -Dconsole.skip=true");
            }
        }
        Files.createDirectories(SCREENSHOTS);
        seedUsageHistory();
        server = TestServer.start(dataDir);
        admin = server.adminToken();
        apply(Files.readString(EXAMPLES.resolve("quotas/teams.yaml")));
        apply(Files.readString(EXAMPLES.resolve("quotas/owner.yaml")));
        apply("""
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: borrower, workspace: team-b}
                spec:
                  quota: gpus
                  idleResources: OnlyIdle
                  preemptionGracePeriod: 1s
                  nodeGroups:
                    - name: main
                      resources: {cpu: 4, memory: 32Gi, gpu: 8}
                      command: [sh, -c, 'echo "borrowing"; exec sleep 600']
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: hostile, workspace: team-b}
                spec:
                  quota: gpus
                  idleResources: Acceptable
                  nodeGroups:
                    - name: main
                      resources: {cpu: 1, memory: 1Gi}
                      command: [sh, -c, 'echo "$LINE"; echo "$LINE" >&2; exit 3']
                      env: {LINE: '%s'}
                ---
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-c}
                spec: {members: []}
                ---
                apiVersion: slipstream/v1
                kind: Job
                metadata: {name: many, workspace: team-c}
                spec:
                  nodeGroups:
                    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: [sh, -c, "true"]}
                """.formatted(HOSTILE));
        alice = server.tokenFor("alice");
        bob = server.tokenFor("bob");

        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM);
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1366,768", "--disable-gpu");
        LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability(ChromeOptions.LOGGING_PREFS, logs);
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(new File(CHROMEDRIVER)).usingAnyFreePort().build();
        browser = new ChromeDriver(service, options);
    }

    @AfterAll
    static void stop() {
        try {
            if (browser != null) {
                browser.quit();
            }
        } finally {
            if (server != null) {
                cancelWhatIsActive();
                server.close();
            }
        }
    }

    /** Every test leaves the browser's log without errors (read, so the next test starts clean). */
    @AfterEach
    void noConsoleErrors() {
        List<String> severe = browser.manage().logs().get(LogType.BROWSER).getAll().stream().filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue())
                .map(LogEntry::toString).toList();
        assertThat(severe).as("browser console errors").isEmpty();
    }

    private static void apply(String yaml) {
        TestServer.Response applied = server.post("/api/v1/apply", admin, yaml);
        assertThat(applied.status()).as(applied.text()).isEqualTo(200);
    }

    private static String start(String token, String workspace, String job, Map<String, Object> overrides) {
        TestServer.Response created = server.post("/api/v1/runs", token,
                Json.mapper().writeValueAsString(Map.of("workspace", workspace, "job", job, "overrides", overrides)));
        assertThat(created.status()).as(created.text()).isIn(200, 201);
        return created.json().get("id").asString();
    }

    private static void cancelWhatIsActive() {
        for (JsonNode run : server.get("/api/v1/runs?limit=1000&state=STARTING,RUNNING,TERMINATING", admin).json().get("items")) {
            String id = run.get("id").asString();
            server.post("/api/v1/runs/" + id + "/cancel", admin, "{}");
            server.awaitRun(admin, id, r -> io.slipstream.api.run.RunState.valueOf(r.get("state").asString()).isFinal());
        }
    }

    /** Signs in as a person would: the sign-in form, the token pasted. */
    private static void signIn(String token, String hash) {
        signOut();
        browser.get(server.server().url() + "/" + hash);
        WebElement field = waitFor(By.id("token"));
        field.sendKeys(token);
        browser.findElement(By.id("sign-in-button")).click();
        waitFor(By.id("who"));
        new WebDriverWait(browser, WAIT).until(d -> !d.findElement(By.id("who")).getText().isEmpty());
    }

    /** Forgets the tab's token from a page of the origin that is not the console (so that no call of it goes out unsigned). */
    private static void signOut() {
        browser.get(server.server().url() + "/console/favicon.svg");
        ((JavascriptExecutor) browser).executeScript("sessionStorage.clear()");
    }

    private static void go(String hash) {
        browser.get(server.server().url() + "/" + hash);
    }

    private static WebElement waitFor(By by) {
        return new WebDriverWait(browser, WAIT).until(ExpectedConditions.presenceOfElementLocated(by));
    }

    /** Rows are replaced as the watch stream tells of changes: an element read a moment ago may be gone, so look again. */
    private static WebDriverWait waiting() {
        return (WebDriverWait) new WebDriverWait(browser, WAIT).ignoring(StaleElementReferenceException.class);
    }

    private static void waitForText(By by, String text) {
        waiting().until(d -> {
            List<WebElement> found = d.findElements(by);
            return !found.isEmpty() && found.get(0).getText().contains(text);
        });
    }

    private static void screenshot(String name) throws IOException {
        byte[] png = ((TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES);
        Files.write(SCREENSHOTS.resolve(name + ".png"), png);
    }

    private static Set<String> shownRuns() {
        // One script, so that the rows are read at one moment.
        @SuppressWarnings("unchecked")
        List<String> ids = (List<String>) ((JavascriptExecutor) browser)
                .executeScript("return [...document.querySelectorAll('#runs tbody tr')].map(tr => tr.dataset.run)");
        return new HashSet<>(ids);
    }

    @Test
    @Order(1)
    void theSignInPageLoadsAndEveryPageLoadsForAnAdmin() throws Exception {
        signOut();
        browser.get(server.server().url() + "/");
        waitFor(By.id("sign-in"));
        screenshot("sign-in");
        assertThat(browser.findElement(By.id("nav")).isDisplayed()).as("the Runs and Quotas links before sign-in").isFalse();
        assertThat(browser.findElement(By.id("sign-out")).isDisplayed()).isFalse();

        signIn(admin, "#/runs");
        waitForText(By.id("page-where"), "page 1");
        assertThat(browser.findElement(By.id("nav")).isDisplayed()).isTrue();
        screenshot("runs-empty");
        go("#/quotas");
        waitFor(By.cssSelector("#quota-tree li.quota[data-quota='org/gpus'] li.quota[data-quota='team-a/gpus']"));
        waitFor(By.cssSelector("#pools tr[data-pool]"));
        waitForText(By.id("pools"), "lendable");
        waitForText(By.id("quota-tree"), "(fair "); // each quota's fair share beside its weighted share
        screenshot("quotas");
        go("#/nodes");
        waiting().until(d -> d.findElements(By.cssSelector("#nodes [data-node]")).size() == server.server().nodes().size());
        String node = server.server().nodes().get(server.server().nodes().size() - 1).name();
        assertThat(server.post("/api/v1/nodes/" + node + "/down", admin, "{\"reason\": \"disk replaced\"}").status()).isEqualTo(200);
        waitForText(By.cssSelector("#nodes [data-node='" + node + "'] .node-state"), "Down");
        waitForText(By.cssSelector("#nodes [data-node='" + node + "'] .reason"), "disk replaced");
        screenshot("nodes");
        assertThat(server.post("/api/v1/nodes/" + node + "/up", admin, "{}").status()).isEqualTo(200);
        waitForText(By.cssSelector("#nodes [data-node='" + node + "'] .node-state"), "Ready");
        go("#/quotas/team-b/gpus/pending");
        waitForText(By.id("pending"), "Nothing waits");
        screenshot("pending-empty");
    }

    @Test
    @Order(2)
    void aBorrowedRunShowsNotInQuotaAndTurnsResourcePreemptedWhenTheOwnerSubmits() throws Exception {
        String borrower = start(bob, "team-b", "borrower", Map.of());
        signIn(bob, "#/runs");
        By resources = By.cssSelector("#runs tr[data-run='" + borrower + "'] td.resources");
        waitForText(resources, "NotInQuota"); // arrives through the watch stream: the page is not reloaded
        screenshot("runs-borrowing");

        go("#/runs/" + borrower);
        waitForText(By.id("run-resources"), "NotInQuota");
        waitForText(By.cssSelector("#instances tr[data-instance='main-0'][data-attempt='1'] td.state"), "RUNNING");
        waitForText(By.cssSelector("#instances tr[data-instance='main-0'][data-attempt='1'] td.node"), "hidden"); // a borrower is not shown the lender's node
        screenshot("run-borrowing");

        String owner = start(admin, "team-a", "owner", Map.of("nodeGroups.worker.env.SECONDS_TO_RUN", "600"));
        waitForText(By.cssSelector("#instances tr[data-instance='main-0'][data-attempt='1'] td.state"), "RESOURCE_PREEMPTED");
        waitForText(By.id("run-state"), "QUEUED");
        waitForText(By.id("events"), "Reclaimed");
        screenshot("run-preempted");
        // Queued again, the run no longer says it borrowed: the nodes of its borrowed attempt stay hidden all the same.
        waitForText(By.cssSelector("#instances tr[data-instance='main-0'][data-attempt='1'] td.node"), "hidden");
        org.assertj.core.api.Assertions.assertThat(server.get("/api/v1/runs/" + borrower, bob).json().get("instances"))
                .allSatisfy(i -> org.assertj.core.api.Assertions.assertThat(i.get("node").asString()).isEqualTo("hidden"));
        org.assertj.core.api.Assertions.assertThat(server.get("/api/v1/runs/" + borrower + "/logs?attempt=1", bob).text()).doesNotContain("node-");

        go("#/quotas/team-b/gpus/pending");
        waitFor(By.cssSelector("#pending-runs tr[data-run='" + borrower + "']"));
        screenshot("pending-borrower");
        server.post("/api/v1/runs/" + owner + "/cancel", admin, "{}");
        server.post("/api/v1/runs/" + borrower + "/cancel", admin, "{}");
    }

    /** The nodes page says which runs hold each node; a run's page cancels it, once asked to confirm. */
    @Test
    @Order(3)
    void theNodesPageNamesTheRunsOnEachNodeAndARunIsCancelledFromItsPage() throws Exception {
        String borrower = start(bob, "team-b", "borrower", Map.of());
        server.awaitState(admin, borrower, "RUNNING");
        signIn(admin, "#/nodes");
        waitForText(By.cssSelector("#nodes .node-runs"), borrower);
        screenshot("nodes-with-runs");

        signIn(bob, "#/runs/" + borrower);
        waitForText(By.id("run-state"), "RUNNING");
        clickCancel();
        new WebDriverWait(browser, WAIT).until(ExpectedConditions.alertIsPresent()).dismiss();
        assertThat(server.get("/api/v1/runs/" + borrower, admin).json().get("state").asString()).as("not confirmed: not cancelled")
                .isEqualTo("RUNNING");
        clickCancel();
        new WebDriverWait(browser, WAIT).until(ExpectedConditions.alertIsPresent()).accept();
        waitForText(By.id("run-state"), "CANCELLED");
        assertThat(browser.findElements(By.id("cancel-run"))).as("nothing to cancel once it ended").isEmpty();
        screenshot("run-cancelled");
    }

    /** The run's page is drawn again as its events arrive: the button read a moment ago may be gone, so look again. */
    private static void clickCancel() {
        waiting().until(d -> {
            d.findElement(By.id("cancel-run")).click();
            return true;
        });
    }

    @Test
    @Order(4)
    void hostileOutputAndReasonsStayText() throws Exception {
        String hostile = start(bob, "team-b", "hostile", Map.of());
        server.awaitState(admin, hostile, "FAILED");
        signIn(bob, "#/runs/" + hostile);
        waitForText(By.id("run-state"), "FAILED");
        waiting().until(d -> {
            d.findElement(By.cssSelector("#instances tr[data-instance='main-0'] button.logs-button")).click();
            return true;
        });
        waitForText(By.id("log"), HOSTILE);
        ((JavascriptExecutor) browser).executeScript("document.getElementById('log').scrollIntoView()");
        screenshot("run-hostile");
        assertThat(browser.findElements(By.cssSelector("#main img"))).as("no element was made of the output").isEmpty();
        assertThat(((JavascriptExecutor) browser).executeScript("return window.__pwned === undefined")).isEqualTo(true);
        go("#/runs");
        waitFor(By.cssSelector("#runs tr[data-run='" + hostile + "']"));
        assertThat(browser.findElements(By.cssSelector("#main img"))).isEmpty();
        assertThat(((JavascriptExecutor) browser).executeScript("return window.__pwned === undefined")).isEqualTo(true);
    }

    @Test
    @Order(5)
    void aMemberOfOneWorkspaceSeesNoOtherWorkspacesRuns() throws Exception {
        String theirs = start(bob, "team-b", "hostile", Map.of());
        String mine = start(alice, "team-a", "owner", Map.of("nodeGroups.worker.env.SECONDS_TO_RUN", "0"));
        signIn(alice, "#/runs");
        waitFor(By.cssSelector("#runs tr[data-run='" + mine + "']"));
        screenshot("runs-alice");
        assertThat(shownRuns()).contains(mine).doesNotContain(theirs);
        assertThat(browser.findElements(By.cssSelector("#filter-workspace option")).stream().map(WebElement::getText).toList())
                .containsExactly("all workspaces", "team-a");
        go("#/runs/" + theirs);
        waitForText(By.cssSelector("#main .message.error"), "not found"); // another team's run is 404 to alice, as one that does not exist
        screenshot("run-not-found");
        List<String> severe = browser.manage().logs().get(LogType.BROWSER).getAll().stream()
                .filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue()).map(LogEntry::getMessage).toList();
        assertThat(severe).as("the only error is the 404 the page shows").isNotEmpty()
                .allMatch(line -> line.contains(theirs) && line.contains("404"));
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
    @Order(6)
    void theUsageChartsShowTheUsageReportsFiguresForTheSameWindow() throws Exception {
        cancelWhatIsActive();
        signIn(admin, "#/usage");
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
            screenshot("usage-" + window);
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
        waitFor(By.cssSelector(".usage-card[data-series='cluster'] line.usage-capacity"));
        assertThat(browser.findElement(By.cssSelector(".usage-card[data-series='cluster'] td[data-figure='utilization']")).getText()).endsWith(" %");
        screenshot("usage-cluster");
        showUsage("week", "pool");
        waitFor(By.cssSelector(".usage-card[data-series] rect[data-kind='inQuota']"));
        screenshot("usage-pools");

        signIn(alice, "#/usage");
        waitFor(By.cssSelector("#usage-charts[data-by='quota'] .usage-card"));
        assertThat(browser.findElements(By.cssSelector("#usage-by option")).stream().map(e -> e.getDomAttribute("value")).toList())
                .as("pools and the cluster are for admins").containsExactly("quota");
        assertThat(browser.findElements(By.cssSelector(".usage-card")).stream().map(e -> e.getDomAttribute("data-series")).toList())
                .containsExactly("team-a/gpus");
        screenshot("usage-alice");
    }

    /** The usage report of the window the charts of {@code window} show now. */
    private static JsonNode report(String window) {
        JsonNode series = server.get("/api/v1/usage/series?by=quota&window=" + window, admin).json();
        return server.get("/api/v1/usage?by=quota&since=" + series.get("since").asString() + "&until=" + series.get("until").asString(), admin).json();
    }

    /** Picks the window and the series in the page's selects, and waits until it shows them. */
    private static void showUsage(String window, String by) {
        go("#/usage");
        waitFor(By.cssSelector("#usage-charts[data-window]"));
        ((JavascriptExecutor) browser).executeScript("document.getElementById('usage-charts').removeAttribute('data-window')");
        new Select(browser.findElement(By.id("usage-window"))).selectByValue(window);
        new Select(browser.findElement(By.id("usage-by"))).selectByValue(by);
        // Choosing what is chosen already changes nothing: read again, as a change would.
        ((JavascriptExecutor) browser).executeScript("document.getElementById('usage-by').dispatchEvent(new Event('change'))");
        waitFor(By.cssSelector("#usage-charts[data-window='" + window + "'][data-by='" + by + "']"));
    }

    /** The totals beside each chart, by series, read in one script (the waits left out: the report has none). */
    @SuppressWarnings("unchecked")
    private static Map<String, Map<String, Double>> shownTotals() {
        Map<String, Map<String, Object>> read = (Map<String, Map<String, Object>>) ((JavascriptExecutor) browser).executeScript("""
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
        Object sum = ((JavascriptExecutor) browser).executeScript("return [...document.querySelectorAll(arguments[0])]"
                + ".reduce((a, r) => a + Number(r.dataset.value) * Number(r.dataset.hours), 0)", ".usage-card[data-series='" + series + "'] rect[data-kind='" + kind + "']");
        return ((Number) sum).doubleValue();
    }

    @Test
    @Order(7)
    void aThousandRunsPageThroughTheList() throws Exception {
        submitMany(1000);
        signIn(admin, "#/runs");
        new org.openqa.selenium.support.ui.Select(browser.findElement(By.id("filter-workspace"))).selectByValue("team-c");
        Set<String> seen = new HashSet<>();
        List<Long> pageMillis = new ArrayList<>();
        for (int page = 1; ; page++) {
            int number = page;
            long started = System.nanoTime();
            waiting().until(d -> d.findElement(By.id("page-where")).getText().startsWith("page " + number + " ·"));
            pageMillis.add((System.nanoTime() - started) / 1_000_000);
            Set<String> shown = shownRuns();
            assertThat(shown).as("page %d", page).hasSize(100);
            assertThat(seen).as("pages do not overlap").doesNotContainAnyElementsOf(shown);
            seen.addAll(shown);
            if (page == 1) {
                screenshot("runs-1000");
            }
            WebElement older = browser.findElement(By.id("page-older"));
            if (!older.isEnabled()) {
                break;
            }
            older.click();
        }
        assertThat(seen).hasSize(1000);
        System.out.println("console: 1000 runs in " + pageMillis.size() + " pages of 100; ms to show each page after the click: " + pageMillis);
    }

    /** Runs that stay queued (team-c has no quota and every resource is guaranteed to team-a), submitted 8 at a time. */
    private static void submitMany(int count) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        Semaphore inFlight = new Semaphore(8);
        List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            inFlight.acquire();
            HttpRequest request = HttpRequest.newBuilder(URI.create(server.server().url() + "/api/v1/runs")).header("Authorization", "Bearer " + admin)
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"workspace\": \"team-c\", \"job\": \"many\"}", StandardCharsets.UTF_8)).build();
            sent.add(http.sendAsync(request, HttpResponse.BodyHandlers.ofString()).whenComplete((r, e) -> inFlight.release()));
        }
        for (CompletableFuture<HttpResponse<String>> response : sent) {
            assertThat(response.get().statusCode()).as(response.get().body()).isEqualTo(201);
        }
    }
}
