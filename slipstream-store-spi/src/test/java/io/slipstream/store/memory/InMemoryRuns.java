package io.slipstream.store.memory;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.store.NodeCondition;
import io.slipstream.store.NodeDown;
import io.slipstream.store.RunQuery;
import io.slipstream.store.RunReads;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/** {@link RunReads} over {@link RunTable}, {@link InstanceTable}, {@link EventTable}, {@link ScheduleTable} and {@link NodeDownTable}. */
final class InMemoryRuns implements RunReads {
    private final Supplier<Tables> tables;

    InMemoryRuns(Supplier<Tables> tables) {
        this.tables = tables;
    }

    @Override
    public Optional<RunRecord> get(RunId id) {
        return RunTable.get(tables.get(), id);
    }

    @Override
    public List<RunRecord> list(RunQuery query) {
        return InMemoryReads.none(query.workspaces()) ? List.of() : RunTable.list(tables.get(), query);
    }

    @Override
    public List<RunRecord> active() {
        return RunTable.active(tables.get());
    }

    @Override
    public Optional<RunRecord> byIdempotencyKey(String workspace, String key) {
        return key == null ? Optional.empty() : RunTable.findByIdempotencyKey(tables.get(), workspace, key);
    }

    @Override
    public List<RunRecord> finishedBefore(Instant cutoff, int limit) {
        return RunTable.finishedBefore(tables.get(), cutoff, limit);
    }

    @Override
    public List<InstanceRecord> instancesOf(RunId runId) {
        return InstanceTable.of(tables.get(), runId);
    }

    @Override
    public Optional<InstanceRecord> instance(InstanceId id) {
        return InstanceTable.get(tables.get(), id);
    }

    @Override
    public List<InstanceRecord> instancesOfActiveRuns() {
        return InstanceTable.ofActiveRuns(tables.get());
    }

    @Override
    public List<InstanceRecord> activeInstances() {
        return InstanceTable.active(tables.get());
    }

    @Override
    public List<RunEvent> events(RunId runId, long afterSeq, int limit) {
        return EventTable.of(tables.get(), runId, afterSeq, limit);
    }

    @Override
    public Optional<Instant> lastScheduled(String workspace, String job) {
        return ScheduleTable.lastDue(tables.get(), workspace, job);
    }

    @Override
    public Map<String, NodeDown> downNodes() {
        return NodeDownTable.down(tables.get());
    }

    @Override
    public Map<String, NodeCondition> nodeConditions() {
        return NodeDownTable.conditions(tables.get());
    }
}
