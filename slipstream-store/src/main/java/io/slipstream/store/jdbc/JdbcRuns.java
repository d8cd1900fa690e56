package io.slipstream.store.jdbc;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.store.NodeCondition;
import io.slipstream.store.NodeDown;
import io.slipstream.store.RunQuery;
import io.slipstream.store.RunReads;
import io.slipstream.store.RunRow;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.jdbi.v3.core.Handle;

/** {@link RunReads} over {@link RunRows}, {@link InstanceRows}, {@link EventRows}, {@link ScheduleRows} and {@link NodeDownRows}. */
final class JdbcRuns implements RunReads {
    private final Handles handles;
    private final UnreadableRows unreadable;
    private final Function<Handle, List<RunRow>> activeRows;
    private final Function<Handle, List<InstanceRecord>> instancesOfActiveRuns;

    /** A transaction's reads: every row as it is in the transaction. */
    JdbcRuns(Handles handles, UnreadableRows unreadable) {
        this(handles, unreadable, RunRows::active, InstanceRows::ofActiveRuns);
    }

    /**
     * A store's own reads (committed rows only), with the active runs kept between reads by {@code activeRows}, and the
     * instances of those holding resources by {@code held} when this process alone writes the store (else null).
     */
    JdbcRuns(Handles handles, UnreadableRows unreadable, ActiveRunRows activeRows, HeldInstances held) {
        this(handles, unreadable, activeRows::read, h -> !activeRows.statesKnown() ? InstanceRows.ofActiveRuns(h)
                : held != null ? held.read(h) : InstanceRows.ofRunsHoldingResources(h));
    }

    private JdbcRuns(Handles handles, UnreadableRows unreadable, Function<Handle, List<RunRow>> activeRows,
            Function<Handle, List<InstanceRecord>> instancesOfActiveRuns) {
        this.handles = handles;
        this.unreadable = unreadable;
        this.activeRows = activeRows;
        this.instancesOfActiveRuns = instancesOfActiveRuns;
    }

    @Override
    public Optional<RunRecord> get(RunId id) {
        return handles.with(h -> RunRows.get(h, id)).map(unreadable::orThrow);
    }

    @Override
    public List<RunRecord> list(RunQuery query) {
        return unreadable.readableRuns(rows(query));
    }

    @Override
    public List<RunRow> rows(RunQuery query) {
        return Handles.none(query.workspaces()) ? List.of() : handles.with(h -> RunRows.list(h, query));
    }

    @Override
    public List<RunRecord> active() {
        return unreadable.readableRuns(handles.with(activeRows));
    }

    @Override
    public Optional<RunRecord> byIdempotencyKey(String workspace, String key) {
        return handles.with(h -> RunRows.findByIdempotencyKey(h, workspace, key)).map(unreadable::orThrow);
    }

    @Override
    public List<RunRecord> finishedBefore(Instant cutoff, int limit) {
        return unreadable.readableRuns(handles.with(h -> RunRows.finishedBefore(h, cutoff, limit)));
    }

    @Override
    public List<InstanceRecord> instancesOf(RunId runId) {
        return handles.with(h -> InstanceRows.of(h, runId));
    }

    @Override
    public Map<RunId, List<InstanceRecord>> currentInstancesOf(Collection<RunRecord> runs) {
        return runs.isEmpty() ? Map.of() : handles.with(h -> InstanceRows.currentOf(h, runs));
    }

    @Override
    public Optional<InstanceRecord> instance(InstanceId id) {
        return handles.with(h -> InstanceRows.get(h, id));
    }

    @Override
    public List<InstanceRecord> instancesOfActiveRuns() {
        return handles.with(instancesOfActiveRuns);
    }

    @Override
    public List<InstanceRecord> activeInstances() {
        return handles.with(InstanceRows::active);
    }

    @Override
    public List<RunEvent> events(RunId runId, long afterSeq, int limit) {
        return handles.with(h -> EventRows.of(h, runId, afterSeq, limit));
    }

    @Override
    public Optional<Instant> lastScheduled(String workspace, String job) {
        return handles.with(h -> ScheduleRows.lastDue(h, workspace, job));
    }

    @Override
    public Map<String, NodeDown> downNodes() {
        return handles.with(NodeDownRows::down);
    }

    @Override
    public Map<String, NodeCondition> nodeConditions() {
        return handles.with(NodeDownRows::conditions);
    }
}
