package io.slipstream.store.jdbc;

import static io.slipstream.store.jdbc.Columns.REASON;
import static io.slipstream.store.jdbc.Columns.STORED;
import static io.slipstream.store.jdbc.Columns.STRING_MAP;
import static io.slipstream.store.jdbc.Columns.instant;
import static io.slipstream.store.jdbc.Columns.time;
import static io.slipstream.store.jdbc.Columns.truncate;

import io.slipstream.api.codec.Json;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.SpecWriter;
import io.slipstream.api.spec.StoredFormat;
import io.slipstream.api.spec.StoredSpecs;
import io.slipstream.model.ElasticWorld;
import io.slipstream.model.FaultState;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunOrigin;
import io.slipstream.model.RunRecord;
import io.slipstream.store.ConflictException;
import io.slipstream.store.RunQuery;
import io.slipstream.store.RunRow;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.SqlStatement;
import org.jdbi.v3.core.statement.StatementContext;

/**
 * The SQL of {@code runs} and {@code run_labels}: one row per run, compare-and-set on {@code version}. What a run is
 * (workspace, job, spec as its JSON at {@link StoredFormat#CURRENT}, priority, origin, creation) is written once, at
 * its creation; an update writes what changes. {@code active} (not in a final state) is written with the state, for
 * the index the control loop reads by. An idempotency key is unique per workspace (an index), until released. A run's
 * labels are rows of {@code run_labels} too, so that a selector is a condition of the query ({@link LabelSql}). A row
 * that cannot be read is returned as such ({@link RunRow.Unreadable}).
 */
final class RunRows {
    private RunRows() {
    }

    /** {@link io.slipstream.store.StoreTx#createRun}, inside the caller's transaction. */
    static RunRecord create(Handle h, RunRecord run, RunEvent created) {
        boolean exists = h.createQuery("SELECT COUNT(*) FROM runs WHERE id = :id").bind("id", run.id().value()).mapTo(Long.class).one() > 0;
        if (exists) {
            throw new ConflictException("run " + run.id() + " already exists");
        }
        RunRecord stored = run.withVersion(1);
        var insert = bind(h.createUpdate("INSERT INTO runs (id, workspace, job, job_version, state, reason, outcome, attempt, priority, spec, "
                + "created_at, started_at, finished_at, cancel_requested_at, real_time_resources, reclaim_for, capacity_reclaimed, preemptions, overrides, schedule_time, "
                + "idempotency_key, submitted_by, labels, attempt_started_at, prior_runtime_millis, faults, world, schema_version, active, version) "
                + "VALUES (:id, :workspace, :job, :jobVersion, :state, :reason, :outcome, :attempt, :priority, :spec, :created, :started, "
                + ":finished, :cancelRequested, :realTimeResources, :reclaimFor, :capacityReclaimed, :preemptions, :overrides, :scheduleTime, :idempotencyKey, "
                + ":submittedBy, :labels, :attemptStarted, :priorRuntime, :faults, :world, :schemaVersion, :active, :version)"), stored)
                .bind("schemaVersion", StoredFormat.CURRENT)
                .bind("workspace", run.workspace())
                .bind("job", run.job())
                .bind("jobVersion", run.jobVersion())
                .bind("priority", run.priority())
                .bind("spec", SpecWriter.write(new Document<>(ObjectMeta.of(run.job(), run.workspace()), run.spec())).toString())
                .bind("overrides", Json.mapper().writeValueAsString(run.origin().overrides()))
                .bind("idempotencyKey", run.origin().idempotencyKey())
                .bind("submittedBy", run.origin().submittedBy())
                .bind("labels", run.origin().labels().isEmpty() ? null : Json.mapper().writeValueAsString(run.origin().labels()));
        time(insert, "scheduleTime", run.origin().scheduleTime()).execute();
        if (!run.origin().labels().isEmpty()) {
            var labels = h.prepareBatch("INSERT INTO run_labels (run_id, label_key, label_value) VALUES (:id, :key, :value)");
            run.origin().labels().forEach((key, value) -> labels.bind("id", run.id().value()).bind("key", key).bind("value", value).add());
            labels.execute();
        }
        EventRows.append(h, created);
        return stored;
    }

    static Optional<RunRow> get(Handle h, RunId id) {
        return h.createQuery("SELECT * FROM runs WHERE id = :id").bind("id", id.value()).map(RunRows::run).findOne();
    }

    /** A page of runs, newest first, selected by the query's fields and its label selector inside the query. */
    static List<RunRow> list(Handle h, RunQuery query) {
        if (query.workspaces() != null && query.workspaces().isEmpty()) {
            return List.of();
        }
        StringBuilder sql = new StringBuilder("SELECT * FROM runs WHERE 1 = 1");
        if (query.workspaces() != null) {
            sql.append(" AND workspace IN (<workspaces>)");
        }
        if (query.workspace() != null) {
            sql.append(" AND workspace = :workspace");
        }
        if (query.job() != null) {
            sql.append(" AND job = :job");
        }
        if (!query.states().isEmpty()) {
            sql.append(" AND state IN (<states>)");
        }
        if (query.before() != null) {
            // The first condition is implied by the second; said alone, it is where an index's scan starts.
            sql.append(" AND created_at <= :beforeTime AND (created_at < :beforeTime OR (created_at = :beforeTime AND id < :beforeId))");
        }
        if (query.createdAfter() != null) {
            sql.append(" AND created_at >= :createdAfter");
        }
        if (query.createdBefore() != null) {
            sql.append(" AND created_at < :createdBefore");
        }
        Map<Integer, Long> labelled = LabelSql.counts(h, query.selector());
        if (labelled.containsValue(0L)) {
            return List.of(); // no run has a label the selector requires
        }
        LabelSql.where(query.selector(), LabelSql.plan(query.selector(), labelled), sql);
        // One workspace's (asked for, or the only one the caller sees): the same order, said as runs_by_workspace's (V22),
        // which H2 then reads in its order and stops.
        boolean oneWorkspace = query.workspace() != null || query.workspaces() != null && query.workspaces().size() == 1;
        sql.append(oneWorkspace ? " ORDER BY workspace, created_at DESC, id DESC LIMIT :limit" : " ORDER BY created_at DESC, id DESC LIMIT :limit");
        var q = h.createQuery(sql.toString()).bind("limit", query.limit());
        if (query.workspaces() != null) {
            q.bindList("workspaces", new ArrayList<>(new TreeSet<>(query.workspaces())));
        }
        if (query.workspace() != null) {
            q.bind("workspace", query.workspace());
        }
        if (query.job() != null) {
            q.bind("job", query.job());
        }
        if (!query.states().isEmpty()) {
            q.bindList("states", query.states().stream().map(Enum::name).sorted().collect(Collectors.toList()));
        }
        if (query.before() != null) {
            time(q, "beforeTime", Instant.ofEpochMilli(query.before().createdAtMillis())).bind("beforeId", query.before().id());
        }
        if (query.createdAfter() != null) {
            time(q, "createdAfter", query.createdAfter());
        }
        if (query.createdBefore() != null) {
            time(q, "createdBefore", query.createdBefore());
        }
        LabelSql.bind(query.selector(), q);
        return q.map(RunRows::run).list();
    }

    /** The runs not in a final state, oldest first. */
    static final String ACTIVE = "SELECT * FROM runs WHERE active = TRUE ORDER BY created_at, id";

    static List<RunRow> active(Handle h) {
        return h.createQuery(ACTIVE).map(RunRows::run).list();
    }

    static RunRecord update(Handle h, RunRecord run) {
        RunRecord next = run.withVersion(run.version() + 1);
        int updated = bind(h.createUpdate("UPDATE runs SET state = :state, reason = :reason, outcome = :outcome, "
                + "attempt = :attempt, started_at = :started, finished_at = :finished, cancel_requested_at = :cancelRequested, "
                + "real_time_resources = :realTimeResources, reclaim_for = :reclaimFor, capacity_reclaimed = :capacityReclaimed, preemptions = :preemptions, "
                + "attempt_started_at = :attemptStarted, prior_runtime_millis = :priorRuntime, faults = :faults, world = :world, "
                + "active = :active, version = :version WHERE id = :id AND version = :expected"), next)
                .bind("expected", run.version())
                .execute();
        if (updated == 0) {
            throw new ConflictException("run " + run.id() + " is not at version " + run.version());
        }
        return next;
    }

    /**
     * Read as a writer reads ({@code FOR UPDATE}): a repeated request is answered with the run found here, and that
     * answer acknowledges it, so where commits are written in groups (the embedded H2) it waits until the run is.
     */
    static Optional<RunRow> findByIdempotencyKey(Handle h, String workspace, String key) {
        return h.createQuery("SELECT * FROM runs WHERE workspace = :workspace AND idempotency_key = :key FOR UPDATE")
                .bind("workspace", workspace)
                .bind("key", key)
                .map(RunRows::run)
                .findOne();
    }

    static void releaseIdempotencyKey(Handle h, RunId id) {
        h.createUpdate("UPDATE runs SET idempotency_key = NULL WHERE id = :id").bind("id", id.value()).execute();
    }

    static List<RunRow> finishedBefore(Handle h, Instant cutoff, int limit) {
        return time(h.createQuery("SELECT * FROM runs WHERE active = FALSE AND finished_at < :cutoff ORDER BY finished_at, id LIMIT :limit")
                .bind("limit", limit), "cutoff", cutoff)
                .map(RunRows::run)
                .list();
    }

    /** {@link io.slipstream.store.StoreTx#deleteRun}, inside the caller's transaction: the run with its instances, events and labels. */
    static void delete(Handle h, RunId id) {
        int deleted = h.createUpdate("DELETE FROM runs WHERE id = :id AND active = FALSE").bind("id", id.value()).execute();
        if (deleted == 0) {
            throw new ConflictException("run " + id + " is not finished (or does not exist): only finished runs are removed");
        }
        InstanceRows.deleteOf(h, id);
        EventRows.deleteOf(h, id);
        h.createUpdate("DELETE FROM run_labels WHERE run_id = :id").bind("id", id.value()).execute();
    }

    private static <S extends SqlStatement<S>> S bind(S statement, RunRecord run) {
        statement.bind("id", run.id().value())
                .bind("state", run.state().name())
                .bind("reason", truncate(run.reason(), REASON))
                .bind("outcome", run.outcome() == null ? null : run.outcome().name())
                .bind("attempt", run.attempt())
                .bind("realTimeResources", run.realTimeResources() == null ? null : run.realTimeResources().name())
                .bind("reclaimFor", run.reclaimFor() == null ? null : run.reclaimFor().value())
                .bind("capacityReclaimed", run.capacityReclaimed())
                .bind("preemptions", run.preemptions())
                .bind("priorRuntime", run.priorRuntimeMillis())
                .bind("faults", run.faults().equals(FaultState.NONE) ? null : Json.mapper().writeValueAsString(run.faults()))
                .bind("world", run.world() == null ? null : Json.mapper().writeValueAsString(run.world()))
                .bind("active", !run.state().isFinal())
                .bind("version", run.version());
        time(statement, "created", run.createdAt());
        time(statement, "started", run.startedAt());
        time(statement, "finished", run.finishedAt());
        time(statement, "attemptStarted", run.attemptStartedAt());
        return time(statement, "cancelRequested", run.cancelRequestedAt());
    }

    /** A run's row, read or with why it cannot be (what it tells beside that: its id, workspace, job, state, creation). */
    static RunRow run(ResultSet rs, StatementContext ctx) throws SQLException {
        try {
            return new RunRow.Readable(readRun(rs));
        } catch (RuntimeException e) {
            RunId id = new RunId(rs.getString("id"));
            String workspace = rs.getString("workspace");
            return new RunRow.Unreadable(id, workspace, rs.getString("job"), rs.getString("state"), instant(rs, "created_at"),
                    UnreadableRows.of("run " + id, workspace, e).why());
        }
    }

    private static RunRecord readRun(ResultSet rs) throws SQLException {
        JobSpec spec = StoredSpecs.readJob(Json.mapper().readTree(rs.getString("spec")), rs.getInt("schema_version"));
        String outcome = rs.getString("outcome");
        String where = rs.getString("real_time_resources");
        String reclaimFor = rs.getString("reclaim_for");
        String faults = rs.getString("faults");
        String world = world(rs);
        return new RunRecord(new RunId(rs.getString("id")), rs.getString("workspace"), rs.getString("job"), rs.getLong("job_version"),
                RunState.valueOf(rs.getString("state")), rs.getString("reason"), outcome == null ? null : RunState.valueOf(outcome),
                rs.getInt("attempt"), rs.getInt("priority"), spec, instant(rs, "created_at"), instant(rs, "started_at"),
                instant(rs, "finished_at"), instant(rs, "cancel_requested_at"), where == null ? null : RealTimeResources.valueOf(where),
                reclaimFor == null ? null : new RunId(reclaimFor), rs.getBoolean("capacity_reclaimed"), origin(rs), instant(rs, "attempt_started_at"),
                rs.getLong("prior_runtime_millis"),
                (faults == null ? FaultState.NONE : STORED.readValue(faults, FaultState.class)).withPreemptionsAtLeast(rs.getInt("preemptions")),
                world == null ? null : STORED.readValue(world, ElasticWorld.class), rs.getLong("version"));
    }

    /** The run's elastic world; none in a store read as it is before its migrations ran (a check of a store of before V21). */
    private static String world(ResultSet rs) throws SQLException {
        try {
            rs.findColumn("world");
        } catch (SQLException noSuchColumn) {
            return null;
        }
        return rs.getString("world");
    }

    private static RunOrigin origin(ResultSet rs) throws SQLException {
        String overrides = rs.getString("overrides");
        String labels = rs.getString("labels");
        return new RunOrigin(overrides == null ? Map.of() : Json.mapper().readValue(overrides, STRING_MAP), instant(rs, "schedule_time"),
                rs.getString("idempotency_key"), rs.getString("submitted_by"), labels == null ? Map.of() : Json.mapper().readValue(labels, STRING_MAP));
    }
}
