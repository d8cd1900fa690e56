package io.slipstream.store.jdbc;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import io.slipstream.model.usage.UsageChange;
import io.slipstream.model.usage.UsageKind;
import io.slipstream.store.UsageGrouping;
import io.slipstream.store.UsageQuery;
import io.slipstream.store.UsageTotal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.jdbi.v3.core.Handle;

/**
 * The SQL of {@link JdbcStore}'s usage accounting, in table {@code usage_segments}: segments are opened and closed
 * as runs change, and a report adds up each segment's part inside its window in one aggregate query, so that its
 * cost is one indexed range scan however many runs there are.
 */
final class UsageRows {
    private UsageRows() {
    }

    /** {@link io.slipstream.store.Store#recordUsage}, inside the caller's transaction. */
    static void record(Handle h, List<UsageChange> changes) {
        for (UsageChange change : changes) {
            if (change instanceof UsageChange.Closed closed) {
                h.createUpdate("UPDATE usage_segments SET end_ms = GREATEST(start_ms, :at), lost_gpu_ms = :lostGpu, lost_cpu_ms = :lostCpu "
                                + "WHERE run_id = :run AND end_ms IS NULL")
                        .bind("run", closed.run().value()).bind("at", closed.at().toEpochMilli())
                        .bind("lostGpu", closed.lostGpuMillis()).bind("lostCpu", closed.lostCpuMillis()).execute();
            } else if (change instanceof UsageChange.Opened opened) {
                // A run has one open segment: one left open (a change recorded twice) ends where the new one starts.
                h.createUpdate("UPDATE usage_segments SET end_ms = GREATEST(start_ms, :at) WHERE run_id = :run AND end_ms IS NULL")
                        .bind("run", opened.run().value()).bind("at", opened.at().toEpochMilli()).execute();
                h.createUpdate("INSERT INTO usage_segments (run_id, kind, workspace, quota, submitted_by, job, gpu, cpu_millis, start_ms) "
                                + "VALUES (:run, :kind, :workspace, :quota, :user, :job, :gpu, :cpu, :at)")
                        .bind("run", opened.run().value()).bind("kind", opened.kind().name()).bind("workspace", opened.workspace())
                        .bind("quota", opened.quota()).bind("user", opened.user()).bind("job", opened.job())
                        .bind("gpu", opened.gpu()).bind("cpu", opened.cpuMillis()).bind("at", opened.at().toEpochMilli()).execute();
            } else if (change instanceof UsageChange.Lent lent) {
                h.createUpdate("UPDATE usage_segments SET end_ms = GREATEST(start_ms, :at) "
                                + "WHERE kind = 'LENT' AND workspace = :workspace AND quota = :quota AND end_ms IS NULL")
                        .bind("workspace", lent.quota().workspace()).bind("quota", lent.quota().name()).bind("at", lent.at().toEpochMilli()).execute();
                if (lent.gpu() > 0 || lent.cpuMillis() > 0) {
                    h.createUpdate("INSERT INTO usage_segments (kind, workspace, quota, gpu, cpu_millis, start_ms) "
                                    + "VALUES ('LENT', :workspace, :quota, :gpu, :cpu, :at)")
                            .bind("workspace", lent.quota().workspace()).bind("quota", lent.quota().name())
                            .bind("gpu", lent.gpu()).bind("cpu", lent.cpuMillis()).bind("at", lent.at().toEpochMilli()).execute();
                }
            } else {
                throw new IllegalArgumentException("a usage change of a kind this store does not know: " + change);
            }
        }
    }

    /** {@link io.slipstream.store.Store#usage}. */
    static List<UsageTotal> totals(Handle h, UsageQuery query) {
        if (query.workspaces() != null && query.workspaces().isEmpty()) {
            return List.of();
        }
        List<String> keys = keyColumns(query.by());
        String groupBy = String.join(", ", keys) + ", kind";
        // The part of a segment inside [since, until): an open one runs until now.
        String inside = "(LEAST(COALESCE(end_ms, :now), :until) - GREATEST(start_ms, :since))";
        String clipped = "CASE WHEN " + inside + " > 0 THEN " + inside + " ELSE 0 END";
        StringBuilder sql = new StringBuilder("SELECT " + groupBy + ", "
                + "SUM(CAST(gpu AS DOUBLE PRECISION) * " + clipped + ") AS gpu_ms, "
                + "SUM(CAST(cpu_millis AS DOUBLE PRECISION) * " + clipped + ") AS cpu_ms, "
                + "SUM(" + clipped + ") AS ms, "
                + "SUM(CASE WHEN end_ms >= :since AND end_ms < :until THEN lost_gpu_ms ELSE 0 END) AS lost_gpu, "
                + "SUM(CASE WHEN end_ms >= :since AND end_ms < :until THEN lost_cpu_ms ELSE 0 END) AS lost_cpu, "
                + "COUNT(*) AS segments "
                + "FROM usage_segments WHERE start_ms < :until AND (end_ms IS NULL OR end_ms >= :since)");
        if (!query.by().countsLending()) {
            sql.append(" AND kind <> 'LENT'");
        }
        if (query.workspaces() != null) {
            sql.append(" AND workspace IN (<workspaces>)");
        }
        sql.append(" GROUP BY ").append(groupBy);
        var q = h.createQuery(sql.toString())
                .bind("since", query.since().toEpochMilli()).bind("until", query.until().toEpochMilli()).bind("now", query.now().toEpochMilli());
        if (query.workspaces() != null) {
            q.bindList("workspaces", new ArrayList<>(new TreeSet<>(query.workspaces())));
        }
        List<UsageTotal> totals = q.map((rs, ctx) -> new UsageTotal(
                new UsageTotal.Key(keys.contains("workspace") ? rs.getString("workspace") : null, keys.contains("quota") ? rs.getString("quota") : null,
                        keys.contains("submitted_by") ? rs.getString("submitted_by") : null, keys.contains("job") ? rs.getString("job") : null),
                UsageKind.valueOf(rs.getString("kind")), rs.getDouble("gpu_ms"), rs.getDouble("cpu_ms"), rs.getLong("ms"), rs.getLong("lost_gpu"),
                rs.getLong("lost_cpu"), rs.getLong("segments"))).list();
        return io.slipstream.store.UsageSums.ordered(totals);
    }

    /** {@link io.slipstream.store.Store#lending}. */
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
}
