package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.server.support.ShiftedClock;
import io.slipstream.server.support.TestServer;
import io.slipstream.server.support.TestServer.Response;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.JsonNode;

/**
 * GPU-hours as the control loop records them: runs on a quota tree (org = lender 6 + borrower 2 GPUs) are admitted
 * for real, then the server's clock moves hours on, and the report adds them up. On the in-memory store and on the
 * embedded H2 store, which rolls usage up as segments close (and tells waits as it writes them): both must give the
 * same figures. Each test has quotas of its own, and the clock only ever moves on (a segment never ends before it
 * began), so the tests hold in any order.
 */
@ParameterizedClass(name = "on the {0} store")
@ValueSource(strings = {"in-memory", "H2"})
class UsageApiTest {
    @TempDir
    static Path dataDir;

    /** The store of this invocation (in the tests' names; {@link #start} is given it too). */
    @Parameter
    String store;

    private static ShiftedClock clock;
    private static TestServer server;
    private static String admin;
    private static String uma;

    @BeforeParameterizedClassInvocation
    static void start(String store) {
        clock = new ShiftedClock(Duration.ZERO);
        server = store.equals("H2") ? TestServer.startOnH2(dataDir.resolve(store), clock) : TestServer.startInMemory(dataDir.resolve(store), clock);
        admin = server.adminToken();
        Response applied = server.post("/api/v1/apply", admin, """
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-u}
                spec: {members: [uma]}
                ---
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-o}
                spec: {members: [otto]}
                ---
                apiVersion: slipstream/v1
                kind: Workspace
                metadata: {name: team-s}
                spec: {members: [uma]}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: org, workspace: team-u}
                spec: {min: {cpu: 16, memory: 16Gi, gpu: 8}}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: lender, workspace: team-u}
                spec: {parent: org, min: {cpu: 8, memory: 8Gi, gpu: 6}}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: borrower, workspace: team-u}
                spec: {parent: org, min: {cpu: 8, memory: 8Gi, gpu: 2}}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: mine, workspace: team-u}
                spec: {min: {cpu: 2, memory: 2Gi, gpu: 1}}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: theirs, workspace: team-o}
                spec: {min: {cpu: 2, memory: 2Gi, gpu: 1}}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: org, workspace: team-s}
                spec: {min: {cpu: 16, memory: 16Gi, gpu: 8}}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: lender, workspace: team-s}
                spec: {parent: org, min: {cpu: 8, memory: 8Gi, gpu: 6}}
                ---
                apiVersion: slipstream/v1
                kind: Quota
                metadata: {name: borrower, workspace: team-s}
                spec: {parent: org, min: {cpu: 8, memory: 8Gi, gpu: 2}}
                """);
        assertThat(applied.status()).as(applied.text()).isEqualTo(200);
        uma = server.tokenFor("uma");
    }

    @AfterParameterizedClassInvocation
    static void stop() {
        server.close();
    }

    /** Moves the server's clock on by {@code hours}; never back, so no segment recorded so far ends before it began. */
    private static void later(int hours) {
        clock.shift(Duration.between(Instant.now(), clock.instant()).plusHours(hours));
    }

    private static String run(String job, String quota, String idle, int gpus) {
        return run(uma, "team-u", job, quota, idle, gpus);
    }

    private static String run(String token, String workspace, String job, String quota, String idle, int gpus) {
        Response created = server.post("/api/v1/runs", token, """
                {"jobDocument": {"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "%s", "workspace": "%s"},
                 "spec": {"quota": "%s", "idleResources": "%s", "nodeGroups": [{"name": "main",
                  "resources": {"cpu": 1, "memory": "1Gi", "gpu": %d}, "command": ["sleep", "300"]}]}}}
                """.formatted(job, workspace, quota, idle, gpus));
        assertThat(created.status()).as(created.text()).isEqualTo(201);
        return created.json().get("id").asString();
    }

    private static JsonNode line(JsonNode report, String field, String value) {
        for (JsonNode line : report.get("lines")) {
            if (line.has(field) && line.get(field).asString().equals(value)) {
                return line;
            }
        }
        throw new AssertionError("no line with " + field + " " + value + " in " + report);
    }

    @Test
    void hoursOnTheQuotaBorrowedAndLentAreReportedByQuotaUserAndJob() {
        String own = run("own", "lender", "Disabled", 2);
        String extra = run("extra", "borrower", "Acceptable", 4);
        server.awaitState(uma, own, "RUNNING");
        server.awaitState(uma, extra, "RUNNING");
        assertThat(server.get("/api/v1/runs/" + extra, uma).json().get("realTimeResources").asString()).isEqualTo("NotInQuota");
        // The lender's unused guarantee is held by the borrower: the loop's next cycle records that it lends.
        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() ->
                line(server.get("/api/v1/usage?by=quota", uma).json(), "quota", "lender").at("/gpuHours/lent").asDouble() > 0);
        later(3);
        try {
            JsonNode byQuota = server.get("/api/v1/usage?by=quota", uma).json();
            assertThat(byQuota.get("by").asString()).isEqualTo("quota");
            JsonNode lender = line(byQuota, "quota", "lender");
            assertThat(lender.at("/gpuHours/inQuota").asDouble()).isBetween(6.0, 6.2);
            assertThat(lender.at("/cpuHours/inQuota").asDouble()).isBetween(3.0, 3.1);
            assertThat(lender.at("/gpuHours/lent").asDouble()).as("it lent for the three hours: %s", lender).isGreaterThan(2.9);
            JsonNode borrower = line(byQuota, "quota", "borrower");
            assertThat(borrower.at("/gpuHours/borrowed").asDouble()).isBetween(12.0, 12.4);
            assertThat(borrower.at("/gpuHours/inQuota").asDouble()).isZero();
            assertThat(byQuota.at("/total/gpuHours/inQuota").asDouble()).isEqualTo(lender.at("/gpuHours/inQuota").asDouble());

            JsonNode byUser = line(server.get("/api/v1/usage?by=user", uma).json(), "user", "uma");
            assertThat(byUser.at("/gpuHours/borrowed").asDouble()).isBetween(12.0, 12.4);
            assertThat(byUser.at("/gpuHours/lent").asDouble()).as("lending is a quota's").isZero();
            JsonNode byJob = line(server.get("/api/v1/usage?by=job&workspace=team-u", uma).json(), "job", "own");
            assertThat(byJob.get("workspace").asString()).isEqualTo("team-u");
            assertThat(byJob.at("/gpuHours/inQuota").asDouble()).isBetween(6.0, 6.2);

            // A window that ends earlier counts only its part; reports are by whole hours (until rounded up).
            JsonNode early = server.get("/api/v1/usage?by=quota&until=2h", uma).json();
            assertThat(java.time.Instant.parse(early.get("until").asString()).toEpochMilli() % 3_600_000).isZero();
            assertThat(line(early, "quota", "borrower").at("/gpuHours/borrowed").asDouble()).isBetween(4.0, 8.0);

            // Another team sees none of it, also when it asks for the workspace by name.
            String otto = server.tokenFor("otto");
            assertThat(server.get("/api/v1/usage?by=job", otto).json().get("lines")).extracting(l -> l.get("workspace").asString())
                    .doesNotContain("team-u");
            assertThat(server.get("/api/v1/usage?workspace=team-u", otto).json().get("lines")).isEmpty();
            assertThat(server.get("/api/v1/usage", admin).json().get("lines").toString()).contains("team-u");
        } finally {
            server.post("/api/v1/runs/" + own + "/cancel", uma, "");
            server.post("/api/v1/runs/" + extra + "/cancel", uma, "");
        }
    }

    @Test
    void aBadQueryIsRefusedNamingItsParameter() {
        Response by = server.get("/api/v1/usage?by=team", uma);
        assertThat(by.status()).isEqualTo(400);
        assertThat(by.json().at("/problems/0/field").asString()).isEqualTo("by");
        assertThat(by.json().at("/problems/0/message").asString()).contains("workspace, quota, user, job");
        Response backwards = server.get("/api/v1/usage?since=1h&until=2h", uma);
        assertThat(backwards.status()).isEqualTo(400);
        assertThat(backwards.json().at("/problems/0/field").asString()).isEqualTo("since");
        Response time = server.get("/api/v1/usage?since=yesterday", uma);
        assertThat(time.status()).isEqualTo(400);
        assertThat(time.json().at("/problems/0/field").asString()).isEqualTo("since");
        assertThat(server.get("/api/v1/usage?workspace=Not_A_Name", uma).status()).isEqualTo(400);
    }

    /**
     * Read while nothing moves (every run ended), the charts' series hold, per quota, the very figures of the report of
     * the same window; each step's averages add up to them. A workspace of its own (team-s), so other tests' runs and
     * lending never move its figures.
     */
    @Test
    void theChartsSeriesOfAWindowAreTheReportsFiguresOfThatWindowStepByStep() {
        String own = run(uma, "team-s", "own-series", "lender", "Disabled", 2);
        String extra = run(uma, "team-s", "extra-series", "borrower", "Acceptable", 4);
        server.awaitState(uma, own, "RUNNING");
        server.awaitState(uma, extra, "RUNNING");
        later(5);
        server.post("/api/v1/runs/" + own + "/cancel", uma, "");
        server.post("/api/v1/runs/" + extra + "/cancel", uma, "");
        server.awaitState(uma, own, "CANCELLED");
        server.awaitState(uma, extra, "CANCELLED");
        for (String window : java.util.List.of("day", "week", "month")) {
            JsonNode[] read = stillReads(window);
            JsonNode series = read[0];
            JsonNode report = read[1];
            assertThat(report.get("since")).isEqualTo(series.get("since"));
            assertThat(series.get("series").size()).as(window).isEqualTo(report.get("lines").size()).isPositive();
            for (JsonNode one : series.get("series")) {
                JsonNode line = line(report, "quota", one.get("quota").asString());
                assertThat(one.at("/totals/gpuHours")).as("%s %s", window, one.get("quota")).isEqualTo(line.get("gpuHours"));
                assertThat(one.at("/totals/queued")).isEqualTo(line.get("queued"));
                // The window ends with the step that holds now: each step has a point, the last averaged over its part so far.
                assertThat(one.get("points").size()).isEqualTo(series.get("buckets").size());
                assertThat(one.get("points").get(one.get("points").size() - 1).get("hours").asDouble())
                        .isPositive().isLessThanOrEqualTo(series.get("stepHours").asDouble());
                for (String kind : java.util.List.of("inQuota", "borrowed", "lent")) {
                    double summed = 0;
                    for (JsonNode point : one.get("points")) {
                        summed += point.get(kind).asDouble() * point.get("hours").asDouble();
                    }
                    assertThat(summed).as("%s %s %s", window, one.get("quota"), kind)
                            .isCloseTo(one.at("/totals/gpuHours/" + kind).asDouble(), org.assertj.core.data.Offset.offset(1e-4));
                }
            }
            JsonNode lender = java.util.stream.StreamSupport.stream(series.get("series").spliterator(), false)
                    .filter(s -> s.get("quota").asString().equals("lender")).findFirst().orElseThrow();
            assertThat(lender.at("/totals/gpuHours/inQuota").asDouble()).as(window).isGreaterThanOrEqualTo(10.0); // 2 GPUs for 5 hours
            assertThat(lender.get("pool").asString()).isEqualTo("tree:team-s/org");
            assertThat(lender.at("/totals/waits").asLong()).as("it queued, then started").isGreaterThanOrEqualTo(1);
        }
        JsonNode pools = server.get("/api/v1/usage/series?by=pool&window=day", admin).json();
        assertThat(pools.get("series")).isNotEmpty().allSatisfy(s -> assertThat(s.has("workspace")).isFalse());
        assertThat(server.get("/api/v1/usage/series?by=cluster", uma).status()).isEqualTo(403);
        JsonNode cluster = server.get("/api/v1/usage/series?by=cluster&window=day", admin).json();
        assertThat(cluster.get("capacityGpu").asInt()).isPositive();
        assertThat(cluster.get("series")).hasSize(1);
        assertThat(server.get("/api/v1/usage/series?workspace=team-o", uma).json().get("series")).as("not uma's").isEmpty();
    }

    /**
     * A series of team-s and the report of its window, read while nothing moved: a report read before and after the
     * series the same, and the series' totals (a run's or a quota's lending's segment still open grows with the clock
     * between the reads). Read again a moment later until then (the loop closes the last lending on its next cycle).
     * The points themselves move on with the clock all the same: the step that holds now is averaged over its part so
     * far.
     */
    private static JsonNode[] stillReads(String window) {
        String asked = "/api/v1/usage/series?by=quota&workspace=team-s&window=" + window;
        return Awaitility.await("the usage of a window stops moving once every run ended").atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(200)).until(() -> {
                    JsonNode series = server.get(asked, uma).json();
                    String report = "/api/v1/usage?by=quota&workspace=team-s&since=" + series.get("since").asString() + "&until="
                            + series.get("until").asString();
                    JsonNode before = server.get(report, uma).json();
                    JsonNode again = server.get(asked, uma).json();
                    JsonNode after = server.get(report, uma).json();
                    return before.equals(after) && totals(series).equals(totals(again)) ? new JsonNode[] {series, before} : null;
                }, read -> read != null);
    }

    private static java.util.List<JsonNode> totals(JsonNode series) {
        return java.util.stream.StreamSupport.stream(series.get("series").spliterator(), false).map(s -> s.get("totals")).toList();
    }

    /**
     * A pool's history is every team's in it: a member who had it could take their own quotas' series away and read
     * the others'. Members get their own quotas' series only; a pool's (and the cluster's) are for admins.
     */
    @Test
    void aMemberSeesTheSeriesOfTheirOwnQuotasOnlyAndNoPoolsHistory() {
        String otto = server.tokenFor("otto");
        String ours = run(uma, "team-u", "ours", "mine", "Disabled", 1);
        String theirs = run(otto, "team-o", "theirs", "theirs", "Disabled", 1);
        try {
            server.awaitState(uma, ours, "RUNNING");
            server.awaitState(otto, theirs, "RUNNING");
            for (String window : java.util.List.of("day", "week", "month")) {
                Response pool = server.get("/api/v1/usage/series?by=pool&window=" + window, otto);
                assertThat(pool.status()).as(pool.text()).isEqualTo(403);
                JsonNode byQuota = server.get("/api/v1/usage/series?by=quota&window=" + window, otto).json();
                assertThat(byQuota.get("series")).extracting(s -> s.get("workspace").asString()).as(window).containsOnly("team-o");
                assertThat(byQuota.get("series")).extracting(s -> s.get("quota").asString()).contains("theirs");
                assertThat(byQuota.toString()).doesNotContain("team-u", "\"mine\"", "lender", "borrower");
            }
            assertThat(server.get("/api/v1/usage/series?by=pool", uma).status()).isEqualTo(403);
            JsonNode pools = server.get("/api/v1/usage/series?by=pool&window=day", admin).json();
            assertThat(pools.get("series")).extracting(s -> s.get("pool").asString()).contains("tree:team-u/mine", "tree:team-o/theirs");
        } finally {
            server.post("/api/v1/runs/" + ours + "/cancel", uma, "");
            server.post("/api/v1/runs/" + theirs + "/cancel", otto, "");
        }
    }

    @Test
    void aBadSeriesQueryIsRefusedNamingItsParameter() {
        Response window = server.get("/api/v1/usage/series?window=year", uma);
        assertThat(window.status()).isEqualTo(400);
        assertThat(window.json().at("/problems/0/field").asString()).isEqualTo("window");
        assertThat(window.json().at("/problems/0/message").asString()).contains("day, week, month");
        Response by = server.get("/api/v1/usage/series?by=user", uma);
        assertThat(by.json().at("/problems/0/field").asString()).isEqualTo("by");
        Response workspace = server.get("/api/v1/usage/series?by=pool&workspace=team-u", admin);
        assertThat(workspace.status()).isEqualTo(400);
        assertThat(workspace.json().at("/problems/0/field").asString()).isEqualTo("workspace");
        assertThat(server.get("/api/v1/usage/series?until=yesterday", uma).json().at("/problems/0/field").asString()).isEqualTo("until");
        // A series' window is named, never given by since: a parameter it does not take is refused, not ignored.
        Response since = server.get("/api/v1/usage/series?window=day&since=2d", uma);
        assertThat(since.status()).isEqualTo(400);
        assertThat(since.json().at("/problems/0/field").asString()).isEqualTo("since");
        assertThat(since.json().at("/problems/0/message").asString()).contains("by, until, window, workspace");
        // Names are read in any case, as the report's are.
        assertThat(server.get("/api/v1/usage/series?window=DAY&by=Quota", uma).status()).isEqualTo(200);
        assertThat(server.get("/api/v1/usage?by=QUOTA", uma).status()).isEqualTo(200);
    }
}
