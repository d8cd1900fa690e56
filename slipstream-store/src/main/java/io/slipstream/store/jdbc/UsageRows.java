package io.slipstream.store.jdbc;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import io.slipstream.model.usage.UsageChange;
import io.slipstream.model.usage.UsageKind;
import io.slipstream.store.UsageBuckets;
import io.slipstream.store.UsageGrouping;
import io.slipstream.store.UsagePoint;
import io.slipstream.store.UsageQuery;
import io.slipstream.store.UsageSegment;
import io.slipstream.store.UsageStarts;
import io.slipstream.store.UsageStep;
import io.slipstream.store.UsageSums;
import io.slipstream.store.UsageTotal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.Query;

/**
 * The SQL of {@link JdbcStore}'s usage accounting. Segments live in {@code usage_segments} while open; when one closes,
 * its time is added to hourly and daily roll-ups ({@code usage_rollups}, split by {@link UsageBuckets}), as is an
 * ended instance's measured CPU time at once (it has no segment). A report reads the whole days of its window and the
 * hours at its edges from the roll-ups, and the open segments live: a few thousand rows however many runs there were,
 * where adding up every segment took seconds at 100,000 runs.
 */
final class UsageRows {
    private static final String SEGMENT_COLUMNS = "id, run_id, kind, workspace, quota, submitted_by, job, gpu, cpu_millis, start_ms";
    /** The sums of the roll-ups' columns that a total reads ({@link #total}). */
    private static final String SUMS = "SUM(gpu_ms) AS gpu_ms, SUM(cpu_ms) AS cpu_ms, SUM(ms) AS ms, SUM(lost_gpu_ms) AS lost_gpu, "
            + "SUM(lost_cpu_ms) AS lost_cpu, SUM(used_cpu_ms) AS used_cpu, SUM(waits) AS waits, SUM(waited_ms) AS waited, "
            + "MAX(longest_wait_ms) AS longest_wait";

    private UsageRows() {
    }

    /** {@link io.slipstream.store.StoreTx#recordUsage}, inside the caller's transaction. */
    static void record(Handle h, List<UsageChange> changes) {
        for (int i = 0; i < changes.size(); i++) {
            UsageChange change = changes.get(i);
            boolean starts = UsageStarts.startsRun(changes, i);
            if (change instanceof UsageChange.Closed closed) {
                close(h, "run_id = :run", closed.run().value(), null, closed.at().toEpochMilli(), closed.lostGpuMillis(), closed.lostCpuMillis(), starts);
            } else if (change instanceof UsageChange.Opened opened) {
                // A run has one open segment (two opened together): one left open (a change recorded twice) ends where the new one starts.
                if (!opened.alongside()) {
                    close(h, "run_id = :run", opened.run().value(), null, opened.at().toEpochMilli(), 0, 0, starts);
                }
                h.createUpdate("INSERT INTO usage_segments (run_id, kind, workspace, quota, submitted_by, job, gpu, cpu_millis, start_ms) "
                                + "VALUES (:run, :kind, :workspace, :quota, :user, :job, :gpu, :cpu, :at)")
                        .bind("run", opened.run().value()).bind("kind", opened.kind().name()).bind("workspace", opened.workspace())
                        .bind("quota", opened.quota()).bind("user", opened.user()).bind("job", opened.job())
                        .bind("gpu", opened.gpu()).bind("cpu", opened.cpuMillis()).bind("at", opened.at().toEpochMilli()).execute();
            } else if (change instanceof UsageChange.Lent lent) {
                close(h, "kind = 'LENT' AND workspace = :workspace AND quota = :quota", null, lent.quota(), lent.at().toEpochMilli(), 0, 0, false);
                if (lent.gpu() > 0 || lent.cpuMillis() > 0) {
                    h.createUpdate("INSERT INTO usage_segments (kind, workspace, quota, gpu, cpu_millis, start_ms) "
                                    + "VALUES ('LENT', :workspace, :quota, :gpu, :cpu, :at)")
                            .bind("workspace", lent.quota().workspace()).bind("quota", lent.quota().name())
                            .bind("gpu", lent.gpu()).bind("cpu", lent.cpuMillis()).bind("at", lent.at().toEpochMilli()).execute();
                }
            } else if (change instanceof UsageChange.Measured measured) {
                rollUp(h, UsageSegment.measured(measured)); // a moment, not a stretch: straight into its hour and day
            } else {
                throw new IllegalArgumentException("a usage change of a kind this store does not know: " + change);
            }
        }
    }

    /**
     * Ends the open segments {@code where} says at {@code atMs} (never before their start) and adds them to the roll-ups;
     * a queued one is a wait if {@code starts}: its run starts at that moment ({@link UsageStarts}).
     */
    private static void close(Handle h, String where, String run, QuotaId quota, long atMs, long lostGpu, long lostCpu, boolean starts) {
        var select = h.createQuery("SELECT " + SEGMENT_COLUMNS + " FROM usage_segments WHERE " + where + " AND end_ms IS NULL ORDER BY id");
        if (run != null) {
            select.bind("run", run);
        } else {
            select.bind("workspace", quota.workspace()).bind("quota", quota.name());
        }
        List<Map.Entry<Long, UsageSegment>> open = select.map((rs, ctx) -> Map.entry(rs.getLong("id"), openSegment(rs))).list();
        for (Map.Entry<Long, UsageSegment> entry : open) {
            UsageSegment segment = entry.getValue().closedAt(atMs, lostGpu, lostCpu, starts);
            h.createUpdate("UPDATE usage_segments SET end_ms = :end, lost_gpu_ms = :lostGpu, lost_cpu_ms = :lostCpu WHERE id = :id")
                    .bind("id", entry.getKey()).bind("end", segment.endMs()).bind("lostGpu", lostGpu).bind("lostCpu", lostCpu).execute();
            rollUp(h, segment);
            lostGpu = 0; // charged once: to the first of an elastic run's two
            lostCpu = 0;
        }
    }

    private static void rollUp(Handle h, UsageSegment segment) {
        boolean wait = segment.endsWait();
        long waited = wait ? segment.endMs() - segment.startMs() : 0;
        for (UsageBuckets.Share share : UsageBuckets.split(segment.startMs(), segment.endMs())) {
            long lostGpu = share.endsHere() ? segment.lostGpuMillis() : 0;
            long lostCpu = share.endsHere() ? segment.lostCpuMillis() : 0;
            long usedCpu = share.endsHere() ? segment.usedCpuMillis() : 0;
            long waits = share.endsHere() && wait ? 1 : 0;
            long waitedHere = waits * waited;
            Map<String, Object> key = Map.of("grain", String.valueOf(share.grain()), "bucket", share.bucketMs(), "kind", segment.kind().name(),
                    "workspace", segment.workspace(), "quota", orEmpty(segment.quota()), "user", orEmpty(segment.user()), "job", orEmpty(segment.job()));
            // Only the leading replica's control loop closes segments: an update, else an insert, cannot race another writer.
            int updated = h.createUpdate("UPDATE usage_rollups SET gpu_ms = gpu_ms + :gpu, cpu_ms = cpu_ms + :cpu, ms = ms + :ms, "
                            + "lost_gpu_ms = lost_gpu_ms + :lostGpu, lost_cpu_ms = lost_cpu_ms + :lostCpu, used_cpu_ms = used_cpu_ms + :usedCpu, "
                            + "waits = waits + :waits, waited_ms = waited_ms + :waited, longest_wait_ms = GREATEST(longest_wait_ms, :waited) "
                            + "WHERE grain = :grain AND bucket_ms = :bucket "
                            + "AND kind = :kind AND workspace = :workspace AND quota = :quota AND submitted_by = :user AND job = :job")
                    .bindMap(key).bind("gpu", (double) segment.gpu() * share.ms()).bind("cpu", (double) segment.cpuMillis() * share.ms())
                    .bind("ms", share.ms()).bind("lostGpu", lostGpu).bind("lostCpu", lostCpu).bind("usedCpu", usedCpu)
                    .bind("waits", waits).bind("waited", waitedHere).execute();
            if (updated == 0) {
                h.createUpdate("INSERT INTO usage_rollups (grain, bucket_ms, kind, workspace, quota, submitted_by, job, gpu_ms, cpu_ms, ms, lost_gpu_ms, "
                                + "lost_cpu_ms, used_cpu_ms, waits, waited_ms, longest_wait_ms) VALUES (:grain, :bucket, :kind, :workspace, :quota, :user, :job, :gpu, "
                                + ":cpu, :ms, :lostGpu, :lostCpu, :usedCpu, :waits, :waited, :waited)")
                        .bindMap(key).bind("gpu", (double) segment.gpu() * share.ms()).bind("cpu", (double) segment.cpuMillis() * share.ms())
                        .bind("ms", share.ms()).bind("lostGpu", lostGpu).bind("lostCpu", lostCpu).bind("usedCpu", usedCpu)
                        .bind("waits", waits).bind("waited", waitedHere).execute();
            }
        }
    }

    /** {@link io.slipstream.store.UsageReads#totals}: the closed segments' roll-ups, and the open segments clipped to the window. */
    static List<UsageTotal> totals(Handle h, UsageQuery query) {
        if (query.workspaces() != null && query.workspaces().isEmpty()) {
            return List.of();
        }
        long since = query.since().toEpochMilli();
        long until = query.until().toEpochMilli();
        long firstDay = UsageBuckets.ceil(since, UsageBuckets.DAY);
        long lastDay = Math.max(firstDay, UsageBuckets.floor(until, UsageBuckets.DAY));
        boolean days = firstDay < lastDay;
        List<String> keys = keyColumns(query.by());
        String groupBy = String.join(", ", keys) + ", kind";
        String filter = filter(query);
        String rollups = "SELECT " + groupBy + ", " + SUMS + " FROM ("
                + "SELECT * FROM usage_rollups WHERE grain = 'H' AND bucket_ms >= :since AND bucket_ms < :hoursUntil" + filter
                + (days ? " UNION ALL SELECT * FROM usage_rollups WHERE grain = 'D' AND bucket_ms >= :firstDay AND bucket_ms < :lastDay" + filter
                        + " UNION ALL SELECT * FROM usage_rollups WHERE grain = 'H' AND bucket_ms >= :lastDay AND bucket_ms < :until" + filter : "")
                + ") r GROUP BY " + groupBy;
        var q = bindWorkspaces(h.createQuery(rollups), query).bind("since", since).bind("until", until).bind("hoursUntil", days ? firstDay : until);
        if (days) {
            q.bind("firstDay", firstDay).bind("lastDay", lastDay);
        }
        List<UsageTotal> totals = new ArrayList<>(q.map((rs, ctx) -> total(rs, keys)).list());
        totals.addAll(UsageSums.of(openSegments(h, query), query));
        return UsageSums.merged(totals);
    }

    /**
     * {@link io.slipstream.store.UsageReads#series}: the roll-ups of the step's grain inside the window, by bucket, and
     * the open segments clipped to each bucket.
     */
    static List<UsagePoint> series(Handle h, UsageQuery query, UsageStep step) {
        step.requireWholeSteps(query);
        if (query.workspaces() != null && query.workspaces().isEmpty()) {
            return List.of();
        }
        List<String> keys = keyColumns(query.by());
        String groupBy = "bucket_ms, " + String.join(", ", keys) + ", kind";
        String filter = filter(query);
        var q = bindWorkspaces(h.createQuery("SELECT " + groupBy + ", " + SUMS + " FROM usage_rollups WHERE grain = :grain AND bucket_ms >= :since "
                        + "AND bucket_ms < :until" + filter + " GROUP BY " + groupBy), query)
                .bind("grain", String.valueOf(step.grain())).bind("since", query.since().toEpochMilli()).bind("until", query.until().toEpochMilli());
        List<UsagePoint> points = new ArrayList<>(q.map((rs, ctx) -> new UsagePoint(rs.getLong("bucket_ms"), total(rs, keys))).list());
        points.addAll(UsageSums.series(openSegments(h, query), query, step));
        Map<Long, List<UsageTotal>> byBucket = new TreeMap<>();
        points.forEach(p -> byBucket.computeIfAbsent(p.bucketMs(), b -> new ArrayList<>()).add(p.total()));
        List<UsagePoint> merged = new ArrayList<>();
        byBucket.forEach((bucket, totals) -> UsageSums.merged(totals).forEach(total -> merged.add(new UsagePoint(bucket, total))));
        return merged;
    }

    /** The open segments a query counts (one per run not ended, one per quota lending now): they count until now. */
    private static List<UsageSegment> openSegments(Handle h, UsageQuery query) {
        return bindWorkspaces(h.createQuery("SELECT " + SEGMENT_COLUMNS + " FROM usage_segments WHERE end_ms IS NULL AND start_ms < :until"
                + filter(query)), query).bind("until", query.until().toEpochMilli()).map((rs, ctx) -> openSegment(rs)).list();
    }

    /** Binds {@code <workspaces>} of {@link #filter}, where the query names them. */
    private static Query bindWorkspaces(Query q, UsageQuery query) {
        return query.workspaces() == null ? q : q.bindList("workspaces", new ArrayList<>(new TreeSet<>(query.workspaces())));
    }

    private static UsageTotal total(java.sql.ResultSet rs, List<String> keys) throws java.sql.SQLException {
        return new UsageTotal(key(rs, keys), UsageKind.valueOf(rs.getString("kind")), rs.getDouble("gpu_ms"), rs.getDouble("cpu_ms"), rs.getLong("ms"),
                rs.getLong("lost_gpu"), rs.getLong("lost_cpu"), rs.getLong("used_cpu"),
                new UsageTotal.Waits(rs.getLong("waits"), rs.getLong("waited"), rs.getLong("longest_wait")));
    }

    /** The kinds and workspaces a query reads ({@code <workspaces>} bound by the caller where it names them). */
    private static String filter(UsageQuery query) {
        return (query.by().countsLending() ? "" : " AND kind <> 'LENT'") + (query.workspaces() == null ? "" : " AND workspace IN (<workspaces>)");
    }

    /** An open segment's row ({@link #SEGMENT_COLUMNS} at least). */
    private static UsageSegment openSegment(java.sql.ResultSet rs) throws java.sql.SQLException {
        return new UsageSegment(rs.getString("run_id"), UsageKind.valueOf(rs.getString("kind")), rs.getString("workspace"), rs.getString("quota"),
                rs.getString("submitted_by"), rs.getString("job"), rs.getLong("gpu"), rs.getLong("cpu_millis"), rs.getLong("start_ms"), null, 0, 0);
    }

    private static UsageTotal.Key key(java.sql.ResultSet rs, List<String> keys) throws java.sql.SQLException {
        return new UsageTotal.Key(keys.contains("workspace") ? rs.getString("workspace") : null,
                keys.contains("quota") ? orNull(rs.getString("quota")) : null,
                keys.contains("submitted_by") ? orNull(rs.getString("submitted_by")) : null, keys.contains("job") ? orNull(rs.getString("job")) : null);
    }

    /** {@link io.slipstream.store.UsageReads#lending}. */
    static Map<QuotaId, Resources> lending(Handle h) {
        Map<QuotaId, Resources> lending = new TreeMap<>();
        h.createQuery("SELECT workspace, quota, gpu, cpu_millis FROM usage_segments WHERE kind = 'LENT' AND end_ms IS NULL")
                .map((rs, ctx) -> Map.entry(new QuotaId(rs.getString("workspace"), rs.getString("quota")),
                        new Resources(rs.getLong("cpu_millis"), 0, rs.getInt("gpu"), null)))
                .forEach(e -> lending.put(e.getKey(), e.getValue()));
        return lending;
    }

    /** The columns of a grouping: from a closed set, never from input. */
    private static List<String> keyColumns(UsageGrouping by) {
        return switch (by) {
            case WORKSPACE -> List.of("workspace");
            case QUOTA -> List.of("workspace", "quota");
            case USER -> List.of("submitted_by");
            case JOB -> List.of("workspace", "job");
        };
    }

    private static String orEmpty(String value) {
        return value == null ? "" : value;
    }

    private static String orNull(String value) {
        return value == null || value.isEmpty() ? null : value;
    }
}
