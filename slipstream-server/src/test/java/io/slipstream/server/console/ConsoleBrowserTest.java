package io.slipstream.server.console;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.codec.Json;
import io.slipstream.server.support.TestServer;
import io.slipstream.testing.NoProcessLeftBehind;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;
import tools.jackson.databind.JsonNode;

/**
 * The console in a real headless Chromium ({@link ConsoleBrowser}) against a real server with the local executor:
 * every page loads without a console error, a borrowed run turns RESOURCE_PREEMPTED live when the owner takes its
 * guarantee back, hostile output stays text, a member sees only their workspaces, and 1,000 runs page through. One
 * browser for the class; the usage charts are {@link ConsoleUsageBrowserTest}'s.
 */
@ExtendWith(NoProcessLeftBehind.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleBrowserTest {
    private static final Path EXAMPLES = Path.of("..", "examples");
    private static final Duration WAIT = ConsoleBrowser.WAIT;
    private static final String HOSTILE = "<img src=x onerror=\"window.__pwned=1\">";

    @TempDir
    static Path dataDir;

    private static TestServer server;
    private static ConsoleBrowser console;
    private static ChromeDriver browser;
    private static String admin;
    private static String alice;
    private static String bob;

    @BeforeAll
    static void start() throws Exception {
        ConsoleBrowser.requireChromium();
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
                cancelWhatIsActive();
                server.close();
            }
        }
    }

    @AfterEach
    void noConsoleErrors() {
        console.assertNoConsoleErrors();
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

    private static Set<String> shownRuns() {
        // One script, so that the rows are read at one moment.
        @SuppressWarnings("unchecked")
        List<String> ids = (List<String>) console.script("return [...document.querySelectorAll('#runs tbody tr')].map(tr => tr.dataset.run)");
        return new HashSet<>(ids);
    }

    @Test
    @Order(1)
    void theSignInPageLoadsAndEveryPageLoadsForAnAdmin() throws Exception {
        console.signOut();
        browser.get(server.server().url() + "/");
        console.waitFor(By.id("sign-in"));
        console.screenshot("sign-in");
        assertThat(browser.findElement(By.id("nav")).isDisplayed()).as("the Runs and Quotas links before sign-in").isFalse();
        assertThat(browser.findElement(By.id("sign-out")).isDisplayed()).isFalse();

        console.signIn(admin, "#/runs");
        console.waitForText(By.id("page-where"), "page 1");
        assertThat(browser.findElement(By.id("nav")).isDisplayed()).isTrue();
        console.screenshot("runs-empty");
        console.go("#/quotas");
        console.waitFor(By.cssSelector("#quota-tree li.quota[data-quota='org/gpus'] li.quota[data-quota='team-a/gpus']"));
        console.waitFor(By.cssSelector("#pools tr[data-pool]"));
        console.waitForText(By.id("pools"), "lendable");
        console.waitForText(By.id("quota-tree"), "(fair "); // each quota's fair share beside its weighted share
        console.screenshot("quotas");
        console.go("#/nodes");
        console.waiting().until(d -> d.findElements(By.cssSelector("#nodes [data-node]")).size() == server.server().nodes().size());
        String node = server.server().nodes().get(server.server().nodes().size() - 1).name();
        assertThat(server.post("/api/v1/nodes/" + node + "/down", admin, "{\"reason\": \"disk replaced\"}").status()).isEqualTo(200);
        console.waitForText(By.cssSelector("#nodes [data-node='" + node + "'] .node-state"), "Down");
        console.waitForText(By.cssSelector("#nodes [data-node='" + node + "'] .reason"), "disk replaced");
        console.screenshot("nodes");
        assertThat(server.post("/api/v1/nodes/" + node + "/up", admin, "{}").status()).isEqualTo(200);
        console.waitForText(By.cssSelector("#nodes [data-node='" + node + "'] .node-state"), "Ready");
        console.go("#/quotas/team-b/gpus/pending");
        console.waitForText(By.id("pending"), "Nothing waits");
        console.screenshot("pending-empty");
    }

    @Test
    @Order(2)
    void aBorrowedRunShowsNotInQuotaAndTurnsResourcePreemptedWhenTheOwnerSubmits() throws Exception {
        String borrower = start(bob, "team-b", "borrower", Map.of());
        console.signIn(bob, "#/runs");
        By resources = By.cssSelector("#runs tr[data-run='" + borrower + "'] td.resources");
        console.waitForText(resources, "NotInQuota"); // arrives through the watch stream: the page is not reloaded
        console.screenshot("runs-borrowing");

        console.go("#/runs/" + borrower);
        console.waitForText(By.id("run-resources"), "NotInQuota");
        console.waitForText(By.cssSelector("#instances tr[data-instance='main-0'][data-attempt='1'] td.state"), "RUNNING");
        console.waitForText(By.cssSelector("#instances tr[data-instance='main-0'][data-attempt='1'] td.node"), "hidden"); // a borrower is not shown the lender's node
        console.screenshot("run-borrowing");

        String owner = start(admin, "team-a", "owner", Map.of("nodeGroups.worker.env.SECONDS_TO_RUN", "600"));
        console.waitForText(By.cssSelector("#instances tr[data-instance='main-0'][data-attempt='1'] td.state"), "RESOURCE_PREEMPTED");
        console.waitForText(By.id("run-state"), "QUEUED");
        console.waitForText(By.id("events"), "Reclaimed");
        console.screenshot("run-preempted");
        // Queued again, the run no longer says it borrowed: the nodes of its borrowed attempt stay hidden all the same.
        console.waitForText(By.cssSelector("#instances tr[data-instance='main-0'][data-attempt='1'] td.node"), "hidden");
        org.assertj.core.api.Assertions.assertThat(server.get("/api/v1/runs/" + borrower, bob).json().get("instances"))
                .allSatisfy(i -> org.assertj.core.api.Assertions.assertThat(i.get("node").asString()).isEqualTo("hidden"));
        org.assertj.core.api.Assertions.assertThat(server.get("/api/v1/runs/" + borrower + "/logs?attempt=1", bob).text()).doesNotContain("node-");

        console.go("#/quotas/team-b/gpus/pending");
        console.waitFor(By.cssSelector("#pending-runs tr[data-run='" + borrower + "']"));
        console.screenshot("pending-borrower");
        server.post("/api/v1/runs/" + owner + "/cancel", admin, "{}");
        server.post("/api/v1/runs/" + borrower + "/cancel", admin, "{}");
    }

    /** The nodes page says which runs hold each node; a run's page cancels it, once asked to confirm. */
    @Test
    @Order(3)
    void theNodesPageNamesTheRunsOnEachNodeAndARunIsCancelledFromItsPage() throws Exception {
        String borrower = start(bob, "team-b", "borrower", Map.of());
        server.awaitState(admin, borrower, "RUNNING");
        console.signIn(admin, "#/nodes");
        console.waitForText(By.cssSelector("#nodes .node-runs"), borrower);
        console.screenshot("nodes-with-runs");

        console.signIn(bob, "#/runs/" + borrower);
        console.waitForText(By.id("run-state"), "RUNNING");
        clickCancel();
        new WebDriverWait(browser, WAIT).until(ExpectedConditions.alertIsPresent()).dismiss();
        assertThat(server.get("/api/v1/runs/" + borrower, admin).json().get("state").asString()).as("not confirmed: not cancelled")
                .isEqualTo("RUNNING");
        clickCancel();
        new WebDriverWait(browser, WAIT).until(ExpectedConditions.alertIsPresent()).accept();
        console.waitForText(By.id("run-state"), "CANCELLED");
        assertThat(browser.findElements(By.id("cancel-run"))).as("nothing to cancel once it ended").isEmpty();
        console.screenshot("run-cancelled");
    }

    /** The run's page is drawn again as its events arrive: the button read a moment ago may be gone, so look again. */
    private static void clickCancel() {
        console.waiting().until(d -> {
            d.findElement(By.id("cancel-run")).click();
            return true;
        });
    }

    @Test
    @Order(4)
    void hostileOutputAndReasonsStayText() throws Exception {
        String hostile = start(bob, "team-b", "hostile", Map.of());
        server.awaitState(admin, hostile, "FAILED");
        console.signIn(bob, "#/runs/" + hostile);
        console.waitForText(By.id("run-state"), "FAILED");
        console.waiting().until(d -> {
            d.findElement(By.cssSelector("#instances tr[data-instance='main-0'] button.logs-button")).click();
            return true;
        });
        console.waitForText(By.id("log"), HOSTILE);
        console.script("document.getElementById('log').scrollIntoView()");
        console.screenshot("run-hostile");
        assertThat(browser.findElements(By.cssSelector("#main img"))).as("no element was made of the output").isEmpty();
        assertThat(console.script("return window.__pwned === undefined")).isEqualTo(true);
        console.go("#/runs");
        console.waitFor(By.cssSelector("#runs tr[data-run='" + hostile + "']"));
        assertThat(browser.findElements(By.cssSelector("#main img"))).isEmpty();
        assertThat(console.script("return window.__pwned === undefined")).isEqualTo(true);
    }

    @Test
    @Order(5)
    void aMemberOfOneWorkspaceSeesNoOtherWorkspacesRuns() throws Exception {
        String theirs = start(bob, "team-b", "hostile", Map.of());
        String mine = start(alice, "team-a", "owner", Map.of("nodeGroups.worker.env.SECONDS_TO_RUN", "0"));
        console.signIn(alice, "#/runs");
        console.waitFor(By.cssSelector("#runs tr[data-run='" + mine + "']"));
        console.screenshot("runs-alice");
        assertThat(shownRuns()).contains(mine).doesNotContain(theirs);
        assertThat(browser.findElements(By.cssSelector("#filter-workspace option")).stream().map(WebElement::getText).toList())
                .containsExactly("all workspaces", "team-a");
        console.go("#/runs/" + theirs);
        console.waitForText(By.cssSelector("#main .message.error"), "not found"); // another team's run is 404 to alice, as one that does not exist
        console.screenshot("run-not-found");
        List<String> severe = console.severeErrors().stream().map(LogEntry::getMessage).toList();
        assertThat(severe).as("the only error is the 404 the page shows").isNotEmpty()
                .allMatch(line -> line.contains(theirs) && line.contains("404"));
    }

    @Test
    @Order(7)
    void aThousandRunsPageThroughTheList() throws Exception {
        submitMany(1000);
        console.signIn(admin, "#/runs");
        new Select(browser.findElement(By.id("filter-workspace"))).selectByValue("team-c");
        Set<String> seen = new HashSet<>();
        List<Long> pageMillis = new ArrayList<>();
        for (int page = 1; ; page++) {
            int number = page;
            long started = System.nanoTime();
            console.waiting().until(d -> d.findElement(By.id("page-where")).getText().startsWith("page " + number + " ·"));
            pageMillis.add((System.nanoTime() - started) / 1_000_000);
            Set<String> shown = shownRuns();
            assertThat(shown).as("page %d", page).hasSize(100);
            assertThat(seen).as("pages do not overlap").doesNotContainAnyElementsOf(shown);
            seen.addAll(shown);
            if (page == 1) {
                console.screenshot("runs-1000");
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
