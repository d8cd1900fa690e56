package io.slipstream.store.jdbc;

import static io.slipstream.store.jdbc.Columns.REASON;
import static io.slipstream.store.jdbc.Columns.STORED;
import static io.slipstream.store.jdbc.Columns.STRING_MAP;
import static io.slipstream.store.jdbc.Columns.instant;
import static io.slipstream.store.jdbc.Columns.time;
import static io.slipstream.store.jdbc.Columns.truncate;

import io.slipstream.api.codec.Json;
import io.slipstream.api.run.EndCause;
import io.slipstream.api.run.Endpoint;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.InstanceUsage;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.LaunchFailure;
import io.slipstream.model.RunRecord;
import io.slipstream.store.ConflictException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.SqlStatement;
import org.jdbi.v3.core.statement.StatementContext;

/**
 * The SQL of {@code instances}: one row per run, attempt and rank, compare-and-set on {@code version}; {@code active}
 * (not in a final state) is written with the state, so that the active ones are found by an index, not by reading
 * every attempt ever run.
 */
final class InstanceRows {
    private InstanceRows() {
    }

    /** {@link io.slipstream.store.StoreTx#createInstances}, inside the caller's transaction. */
    static List<InstanceRecord> create(Handle h, List<InstanceRecord> instances) {
        List<InstanceRecord> stored = new ArrayList<>();
        for (InstanceRecord instance : instances) {
            InstanceRecord next = instance.withVersion(1);
            bind(h.createUpdate("INSERT INTO instances (run_id, attempt, instance_rank, node_group, group_rank, node, gpus, "
                    + "state, exit_code, reason, handle, started_at, finished_at, endpoint, ready_at, stop_requested_at, probe_failure, "
                    + "launch_failure, end_cause, memory_peak_bytes, cpu_nanos, restarts, active, version) VALUES (:runId, :attempt, :rank, "
                    + ":nodeGroup, :groupRank, :node, :gpus, :state, :exitCode, :reason, :handle, :started, :finished, :endpoint, :ready, "
                    + ":stopRequested, :probeFailure, :launchFailure, :endCause, :memoryPeak, :cpuNanos, :restarts, :active, :version)"),
                    next).execute();
            stored.add(next);
        }
        return stored;
    }

    static List<InstanceRecord> of(Handle h, RunId runId) {
        return h.createQuery("SELECT * FROM instances WHERE run_id = :runId ORDER BY attempt, instance_rank")
                .bind("runId", runId.value())
                .map(InstanceRows::instance)
                .list();
    }

    /** {@link io.slipstream.store.RunReads#currentInstancesOf}. */
    static Map<RunId, List<InstanceRecord>> currentOf(Handle h, Collection<RunRecord> runs) {
        Map<RunId, Integer> attempts = new LinkedHashMap<>();
        runs.forEach(run -> attempts.put(run.id(), run.attempt()));
        return ofAttempts(h, attempts);
    }

    /**
     * The instances of each run's attempt given, by rank (every run a key): the runs' rows of every attempt, in one
     * query per thousand runs, by the primary key.
     */
    static Map<RunId, List<InstanceRecord>> ofAttempts(Handle h, Map<RunId, Integer> attempts) {
        Map<RunId, List<InstanceRecord>> byRun = new LinkedHashMap<>();
        attempts.keySet().forEach(id -> byRun.put(id, new ArrayList<>()));
        List<String> ids = attempts.keySet().stream().map(RunId::value).toList();
        for (int from = 0; from < ids.size(); from += IN_LIST) {
            h.createQuery("SELECT * FROM instances WHERE run_id IN (<ids>) ORDER BY run_id, attempt, instance_rank")
                    .bindList("ids", inList(ids, from))
                    .map(InstanceRows::instance)
                    .forEach(instance -> {
                        RunId run = instance.id().runId();
                        if (instance.id().attempt() == attempts.get(run)) {
                            byRun.get(run).add(instance);
                        }
                    });
        }
        return byRun;
    }

    /** Ids per {@code IN} list: well under any driver's limit on bound parameters. */
    static final int IN_LIST = 1024;

    /**
     * The {@link #IN_LIST} ids of {@code ids} from {@code from}, padded to a power of two by repeating the last: a
     * statement's text names each bound value, and one text per count would crowd the statements each connection keeps
     * parsed (64) out of its cache.
     */
    static List<String> inList(List<String> ids, int from) {
        List<String> part = new ArrayList<>(ids.subList(from, Math.min(ids.size(), from + IN_LIST)));
        int size = Integer.highestOneBit(part.size());
        size = size == part.size() ? size : size * 2;
        while (part.size() < size) {
            part.add(part.get(part.size() - 1));
        }
        return part;
    }

    static Optional<InstanceRecord> get(Handle h, InstanceId id) {
        return h.createQuery("SELECT * FROM instances WHERE run_id = :runId AND attempt = :attempt AND instance_rank = :rank")
                .bind("runId", id.runId().value())
                .bind("attempt", id.attempt())
                .bind("rank", id.rank())
                .map(InstanceRows::instance)
                .findOne();
    }

    static List<InstanceRecord> ofActiveRuns(Handle h) {
        return h.createQuery("SELECT i.* FROM instances i JOIN runs r ON r.id = i.run_id AND r.attempt = i.attempt "
                        + "WHERE r.active = TRUE ORDER BY i.run_id, i.instance_rank")
                .map(InstanceRows::instance)
                .list();
    }

    /**
     * {@link #ofActiveRuns} where every active run's state is one this build knows: only the runs that hold resources
     * are looked at, by their own index. A queued run has no instances of its current attempt (admission writes them
     * as the run leaves {@code QUEUED}; a requeue begins a new attempt), and with a hundred thousand queued, reading
     * every active run's row to join it was a third of a control cycle.
     */
    static List<InstanceRecord> ofRunsHoldingResources(Handle h) {
        return h.createQuery("SELECT i.* FROM instances i JOIN runs r ON r.id = i.run_id AND r.attempt = i.attempt "
                        + "WHERE r.state IN (<holding>) ORDER BY i.run_id, i.instance_rank")
                .bindList("holding", HOLDING)
                .map(InstanceRows::instance)
                .list();
    }

    /** The states in which a run holds resources, which are the active states but {@code QUEUED}. */
    static final List<String> HOLDING = Arrays.stream(RunState.values())
            .filter(RunState::holdsResources).map(Enum::name).toList();

    static List<InstanceRecord> active(Handle h) {
        return h.createQuery("SELECT * FROM instances WHERE active = TRUE ORDER BY run_id, attempt, instance_rank")
                .map(InstanceRows::instance)
                .list();
    }

    static InstanceRecord update(Handle h, InstanceRecord instance) {
        InstanceRecord next = instance.withVersion(instance.version() + 1);
        int updated = bind(h.createUpdate("UPDATE instances SET node = :node, gpus = :gpus, state = :state, "
                + "exit_code = :exitCode, reason = :reason, handle = :handle, started_at = :started, finished_at = :finished, "
                + "endpoint = :endpoint, ready_at = :ready, stop_requested_at = :stopRequested, probe_failure = :probeFailure, "
                + "launch_failure = :launchFailure, end_cause = :endCause, memory_peak_bytes = :memoryPeak, cpu_nanos = :cpuNanos, "
                + "restarts = :restarts, active = :active, version = :version "
                + "WHERE run_id = :runId AND attempt = :attempt AND instance_rank = :rank AND version = :expected"), next)
                .bind("expected", instance.version())
                .execute();
        if (updated == 0) {
            throw new ConflictException("instance " + instance.id() + " is not at version " + instance.version());
        }
        return next;
    }

    /** A deleted run's instances go with it. */
    static void deleteOf(Handle h, RunId runId) {
        h.createUpdate("DELETE FROM instances WHERE run_id = :id").bind("id", runId.value()).execute();
    }

    private static <S extends SqlStatement<S>> S bind(S statement, InstanceRecord instance) {
        statement.bind("runId", instance.id().runId().value())
                .bind("attempt", instance.id().attempt())
                .bind("rank", instance.id().rank())
                .bind("nodeGroup", instance.nodeGroup())
                .bind("groupRank", instance.groupRank())
                .bind("node", instance.node())
                .bind("gpus", instance.gpus().stream().map(String::valueOf).collect(Collectors.joining(",")))
                .bind("state", instance.state().name())
                .bind("reason", truncate(instance.reason(), REASON))
                .bind("handle", Json.mapper().writeValueAsString(new LinkedHashMap<>(instance.handle())))
                .bind("endpoint", instance.endpoint() == null ? null : Json.mapper().writeValueAsString(instance.endpoint()))
                .bind("probeFailure", truncate(instance.probeFailure(), REASON))
                .bind("launchFailure", instance.launchFailure() == null ? null : instance.launchFailure().name())
                .bind("endCause", instance.endCause() == null ? null : instance.endCause().name())
                .bind("restarts", instance.restarts())
                .bind("active", !instance.state().isFinal())
                .bind("version", instance.version());
        if (instance.exitCode() == null) {
            statement.bindNull("exitCode", Types.INTEGER);
        } else {
            statement.bind("exitCode", instance.exitCode());
        }
        InstanceUsage usage = instance.usage();
        figure(statement, "memoryPeak", usage == null ? InstanceUsage.UNKNOWN : usage.memoryPeakBytes());
        figure(statement, "cpuNanos", usage == null ? InstanceUsage.UNKNOWN : usage.cpuNanos());
        time(statement, "started", instance.startedAt());
        time(statement, "ready", instance.readyAt());
        time(statement, "stopRequested", instance.stopRequestedAt());
        return time(statement, "finished", instance.finishedAt());
    }

    /** A measured figure, NULL where it was not measured. */
    private static void figure(SqlStatement<?> statement, String name, long value) {
        if (value < 0) {
            statement.bindNull(name, Types.BIGINT);
        } else {
            statement.bind(name, value);
        }
    }

    /** The usage of a row: none where neither figure was measured (as for every instance stored before V16). */
    private static InstanceUsage usage(ResultSet rs) throws SQLException {
        long peak = rs.getLong("memory_peak_bytes");
        long memoryPeak = rs.wasNull() ? InstanceUsage.UNKNOWN : peak;
        long cpu = rs.getLong("cpu_nanos");
        return InstanceUsage.of(memoryPeak, rs.wasNull() ? InstanceUsage.UNKNOWN : cpu);
    }

    /**
     * A stored end cause; one this build does not know (written by a newer one that added it) reads as none, as the
     * instance's reason still says it in words.
     */
    private static EndCause endCause(String name) {
        if (name == null) {
            return null;
        }
        try {
            return EndCause.valueOf(name);
        } catch (IllegalArgumentException unknown) {
            return null;
        }
    }

    private static InstanceRecord instance(ResultSet rs, StatementContext ctx) throws SQLException {
        String gpus = rs.getString("gpus");
        int exitCode = rs.getInt("exit_code");
        Integer exit = rs.wasNull() ? null : exitCode;
        return new InstanceRecord(
                new InstanceId(new RunId(rs.getString("run_id")), rs.getInt("attempt"), rs.getInt("instance_rank")),
                rs.getString("node_group"), rs.getInt("group_rank"), rs.getString("node"),
                gpus.isEmpty() ? List.of() : Arrays.stream(gpus.split(",")).map(Integer::valueOf).toList(),
                InstanceState.valueOf(rs.getString("state")), exit, rs.getString("reason"),
                Json.mapper().readValue(rs.getString("handle"), STRING_MAP),
                instant(rs, "started_at"), instant(rs, "finished_at"),
                rs.getString("endpoint") == null ? null : STORED.readValue(rs.getString("endpoint"), Endpoint.class),
                instant(rs, "ready_at"), instant(rs, "stop_requested_at"), rs.getString("probe_failure"),
                rs.getString("launch_failure") == null ? null : LaunchFailure.valueOf(rs.getString("launch_failure")),
                endCause(rs.getString("end_cause")), usage(rs), rs.getInt("restarts"), rs.getLong("version"));
    }
}
