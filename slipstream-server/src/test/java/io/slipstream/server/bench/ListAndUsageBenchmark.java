package io.slipstream.server.bench;

import io.slipstream.api.codec.Json;
import io.slipstream.api.run.RunId;
import io.slipstream.model.usage.UsageChange;
import io.slipstream.model.usage.UsageKind;
import java.time.Instant;
import io.slipstream.server.support.TestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Latency of the run list (what the console pages through) and of the usage report with 100,000 runs in the
 * embedded store, over HTTP, as an admin (every workspace) and as a member of one of 20 workspaces. Not part of the
 * test run (its name does not end in Test); run it with:
 *
 * <pre>mvn -B -pl slipstream-server -am test -Dtest=ListAndUsageBenchmark -Dsurefire.failIfNoSpecifiedTests=false</pre>
 *
 * The runs are copies of one real run (made through the API), written straight into the H2 file while the server
 * is stopped: 20 workspaces, 5 quotas each, 50 users, 200 jobs, created over the last 6 days, 2% failed; each has a
 * queued and a held usage segment (one in ten borrowed), one in ten a preemption's requeue and a second held one,
 * written through the store as the control loop writes them.
 * Prints the figures and writes them to {@code slipstream-server/target/list-and-usage.json}.
 */
class ListAndUsageBenchmark {
    private static final int RUNS = Integer.getInteger("bench.runs", 100_000);
    private static final int WARMUP = 20;
    private static final int REQUESTS = 200;
    private static final int WORKSPACES = 20;
    private static final String RAW = ";MODE=PostgreSQL;DATABASE_TO_LOWER=TRUE;IFEXISTS=TRUE";

    @TempDir
    Path dataDir;

    @Test
    void runListAndUsageAt100kRuns() throws Exception {
        String template;
        try (TestServer server = TestServer.start(dataDir)) {
            String admin = server.adminToken();
            StringBuilder docs = new StringBuilder();
            for (int w = 0; w < WORKSPACES; w++) {
                docs.append("apiVersion: slipstream/v1\nkind: Workspace\nmetadata: {name: ws-%02d}\nspec: {members: [user-%02d]}\n---\n".formatted(w, w));
            }
            docs.append("apiVersion: slipstream/v1\nkind: Job\nmetadata: {name: tmpl, workspace: ws-00}\nspec:\n  nodeGroups:\n"
                    + "    - {name: main, resources: {cpu: 1, memory: 1Gi}, command: [\"true\"]}\n");
            check(server.post("/api/v1/apply", admin, docs.toString()));
            template = server.post("/api/v1/runs", admin, "{\"workspace\":\"ws-00\",\"job\":\"tmpl\"}").json().get("id").asString();
            server.awaitState(admin, template, "SUCCEEDED");
        }
        long fill = System.nanoTime();
        long now = System.currentTimeMillis();
        fill(template, now);
        double fillSeconds = (System.nanoTime() - fill) / 1e9;
        long account = System.nanoTime();
        account(now);
        double accountSeconds = (System.nanoTime() - account) / 1e9;

        Map<String, Object> result = new LinkedHashMap<>();
        result.put("benchmark", "list-and-usage");
        result.put("runs", RUNS);
        result.put("requestsEach", REQUESTS);
        result.put("cores", Runtime.getRuntime().availableProcessors());
        result.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        result.put("fillSeconds", Math.round(fillSeconds * 10) / 10.0);
        result.put("accountingWriteSeconds", Math.round(accountSeconds * 10) / 10.0);
        try (TestServer server = TestServer.start(dataDir)) {
            String admin = server.adminToken();
            String member = server.tokenFor("user-07");
            String deep = server.get("/api/v1/runs?limit=1000", admin).json().get("next").asString();
            for (int i = 0; i < 20; i++) {
                deep = server.get("/api/v1/runs?limit=1000&before=" + deep, admin).json().get("next").asString();
            }
            Map<String, Object> figures = new LinkedHashMap<>();
            figures.put("runs first page (admin, 50)", measure(server, admin, "/api/v1/runs?limit=50"));
            figures.put("runs first page (member of one workspace, 50)", measure(server, member, "/api/v1/runs?limit=50"));
            figures.put("runs page 21,000 deep (admin, 50)", measure(server, admin, "/api/v1/runs?limit=50&before=" + deep));
            figures.put("runs of one workspace (admin, 50)", measure(server, admin, "/api/v1/runs?limit=50&workspace=ws-13"));
            figures.put("failed runs (admin, 50)", measure(server, admin, "/api/v1/runs?limit=50&state=FAILED"));
            figures.put("usage by workspace, 7 days (admin)", measure(server, admin, "/api/v1/usage?since=7d"));
            figures.put("usage by quota, 7 days (admin)", measure(server, admin, "/api/v1/usage?by=quota&since=7d"));
            figures.put("usage by user, 7 days (admin)", measure(server, admin, "/api/v1/usage?by=user&since=7d"));
            figures.put("usage by job, 7 days (admin)", measure(server, admin, "/api/v1/usage?by=job&since=7d"));
            figures.put("usage by job, 1 day (admin)", measure(server, admin, "/api/v1/usage?by=job&since=1d"));
            figures.put("usage by job, 7 days (member)", measure(server, member, "/api/v1/usage?by=job&since=7d"));
            result.put("millis", figures);
            JsonNode usage = server.get("/api/v1/usage?since=7d", admin).json();
            result.put("gpuHoursInQuotaTotal", usage.at("/total/gpuHours/inQuota").asDouble());
        }
        String json = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(result);
        System.out.println(json);
        Files.writeString(Path.of("target", "list-and-usage.json"), json);
    }

    private static void check(TestServer.Response response) {
        if (response.status() != 200) {
            throw new AssertionError(response.text());
        }
    }

    /** Copies the template run RUNS times, and writes each copy's usage segments, in one transaction each. */
    private void fill(String template, long now) throws Exception {
        String url = "jdbc:h2:file:" + dataDir.resolve("store").resolve("slipstream") + RAW;
        try (Connection db = DriverManager.getConnection(url, "sa", "")) {
            db.setAutoCommit(false);
            List<String> columns = new ArrayList<>();
            try (ResultSet rs = db.getMetaData().getColumns(null, null, "runs", null)) {
                while (rs.next()) {
                    columns.add(rs.getString("COLUMN_NAME"));
                }
            }
            // g.n: 1..RUNS. Created over 6 days, newest last; held from 1 to 31 minutes after a wait of up to a minute.
            String created = "DATEADD(MILLISECOND, -MOD(g.n * 7919, 518400000), CAST(? AS TIMESTAMP WITH TIME ZONE))";
            Map<String, String> replaced = Map.of(
                    "id", "CONCAT('bench-', LPAD(CAST(g.n AS VARCHAR), 8, '0'))",
                    "workspace", "CONCAT('ws-', LPAD(CAST(MOD(g.n, 20) AS VARCHAR), 2, '0'))",
                    "job", "CONCAT('job-', LPAD(CAST(MOD(g.n, 200) AS VARCHAR), 3, '0'))",
                    "submitted_by", "CONCAT('user-', LPAD(CAST(MOD(g.n, 50) AS VARCHAR), 2, '0'))",
                    "state", "CASE WHEN MOD(g.n, 50) = 0 THEN 'FAILED' ELSE 'SUCCEEDED' END",
                    "created_at", created,
                    "idempotency_key", "NULL");
            StringBuilder select = new StringBuilder();
            for (String column : columns) {
                select.append(select.length() == 0 ? "" : ", ").append(replaced.getOrDefault(column, "r." + column));
            }
            try (PreparedStatement insert = db.prepareStatement("INSERT INTO runs (" + String.join(", ", columns) + ") SELECT " + select
                    + " FROM runs r, (SELECT \"X\" AS n FROM SYSTEM_RANGE(1, ?)) g WHERE r.id = ?")) {
                insert.setObject(1, java.time.OffsetDateTime.ofInstant(java.time.Instant.ofEpochMilli(now), java.time.ZoneOffset.UTC));
                insert.setInt(2, RUNS);
                insert.setString(3, template);
                insert.executeUpdate();
            }
            db.commit();
            try (Statement s = db.createStatement()) {
                s.execute("SHUTDOWN COMPACT");
            }
        }
    }

    /**
     * Each run's usage, through the store as the control loop writes it (segments opened and closed, roll-ups added):
     * queued up to a minute, then held 1 to 31 minutes (one in ten borrowed); one in ten preempted with a minute of one
     * GPU lost, queued 5 s and held another minute.
     */
    private void account(long now) {
        try (io.slipstream.store.Store store = io.slipstream.store.jdbc.JdbcStore.openH2(dataDir)) {
            for (int first = 1; first <= RUNS; first += 1000) {
                int from = first;
                store.commit(tx -> {
                    for (int n = from; n < from + 1000 && n <= RUNS; n++) {
                        tx.recordUsage(changes(n, now));
                    }
                });
            }
        }
    }

    private static List<UsageChange> changes(int n, long now) {
        RunId run = new RunId("bench-%08d".formatted(n));
        String workspace = "ws-%02d".formatted(n % 20);
        String quota = "q-" + (n % 5);
        String user = "user-%02d".formatted(n % 50);
        String job = "job-%03d".formatted(n % 200);
        long gpu = 1 + n % 8;
        long created = now - Math.floorMod(n * 7919L, 518_400_000L);
        long admitted = created + n % 60_000;
        long ended = admitted + 60_000 + Math.floorMod(n * 31L, 1_800_000L);
        UsageKind held = n % 10 == 3 ? UsageKind.BORROWED : UsageKind.IN_QUOTA;
        List<UsageChange> changes = new ArrayList<>(List.of(
                new UsageChange.Opened(run, UsageKind.QUEUED, workspace, quota, user, job, gpu, 4000, Instant.ofEpochMilli(created)),
                new UsageChange.Closed(run, Instant.ofEpochMilli(admitted), 0, 0),
                new UsageChange.Opened(run, held, workspace, quota, user, job, gpu, 4000, Instant.ofEpochMilli(admitted))));
        if (n % 10 == 7) {
            changes.addAll(List.of(new UsageChange.Closed(run, Instant.ofEpochMilli(ended), 60_000, 0),
                    new UsageChange.Opened(run, UsageKind.QUEUED, workspace, quota, user, job, gpu, 4000, Instant.ofEpochMilli(ended)),
                    new UsageChange.Closed(run, Instant.ofEpochMilli(ended + 5_000), 0, 0),
                    new UsageChange.Opened(run, held, workspace, quota, user, job, gpu, 4000, Instant.ofEpochMilli(ended + 5_000))));
            ended += 65_000;
        }
        changes.add(new UsageChange.Closed(run, Instant.ofEpochMilli(ended), 0, 0));
        return changes;
    }

    private static Map<String, Double> measure(TestServer server, String token, String path) {
        for (int i = 0; i < WARMUP; i++) {
            ok(server.get(path, token), path);
        }
        List<Double> millis = new ArrayList<>();
        for (int i = 0; i < REQUESTS; i++) {
            long start = System.nanoTime();
            ok(server.get(path, token), path);
            millis.add((System.nanoTime() - start) / 1e6);
        }
        Collections.sort(millis);
        Map<String, Double> summary = new LinkedHashMap<>();
        summary.put("median", round((millis.get((millis.size() - 1) / 2) + millis.get(millis.size() / 2)) / 2));
        summary.put("p99", round(millis.get((int) Math.ceil(millis.size() * 0.99) - 1)));
        summary.put("max", round(millis.get(millis.size() - 1)));
        return summary;
    }

    private static void ok(TestServer.Response response, String path) {
        if (response.status() != 200) {
            throw new AssertionError(path + ": " + response.status() + " " + response.text());
        }
    }

    private static double round(double value) {
        return Math.round(value * 10) / 10.0;
    }
}
