package io.slipstream.store.memory;

import static io.slipstream.store.memory.Stored.micros;
import static io.slipstream.store.memory.Stored.truncate;

import io.slipstream.api.run.RunId;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunOrigin;
import io.slipstream.model.RunRecord;
import io.slipstream.store.ConflictException;
import io.slipstream.store.RunQuery;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs in an {@link InMemoryStore}, by id (the JDBC store's {@code RunRows}): what a run is stays as created, an
 * idempotency key is unique per workspace until released, and a deleted run takes its instances and events with it.
 */
final class RunTable {
    private static final Comparator<RunRecord> BY_CREATION = Comparator.comparing(RunRecord::createdAt).thenComparing(r -> r.id().value());

    private RunTable() {
    }

    static RunRecord create(Tables t, AtomicLong eventSeq, RunRecord run, RunEvent created) {
        if (t.runs.containsKey(run.id().value())) {
            throw new ConflictException("run " + run.id() + " already exists");
        }
        String key = run.origin().idempotencyKey();
        if (key != null && t.runs.values().stream().anyMatch(r -> r.workspace().equals(run.workspace()) && key.equals(r.origin().idempotencyKey()))) {
            throw new ConflictException("it was created by someone else meanwhile: a run of " + run.workspace() + " has idempotency key " + key);
        }
        RunRecord stored = run.withVersion(1);
        t.runs().put(run.id().value(), asStored(stored, stored));
        EventTable.append(t, eventSeq, created);
        return stored;
    }

    static Optional<RunRecord> get(Tables t, RunId id) {
        return Optional.ofNullable(t.runs.get(id.value()));
    }

    static List<RunRecord> list(Tables t, RunQuery query) {
        if (query.workspaces() != null && query.workspaces().isEmpty()) {
            return List.of();
        }
        Instant beforeTime = query.before() == null ? null : Instant.ofEpochMilli(query.before().createdAtMillis());
        Instant after = micros(query.createdAfter());
        Instant before = micros(query.createdBefore());
        return t.runs.values().stream()
                .filter(r -> query.workspaces() == null || query.workspaces().contains(r.workspace()))
                .filter(r -> query.workspace() == null || query.workspace().equals(r.workspace()))
                .filter(r -> query.job() == null || query.job().equals(r.job()))
                .filter(r -> query.states().isEmpty() || query.states().contains(r.state()))
                .filter(r -> beforeTime == null || r.createdAt().isBefore(beforeTime)
                        || r.createdAt().equals(beforeTime) && r.id().value().compareTo(query.before().id()) < 0)
                .filter(r -> after == null || !r.createdAt().isBefore(after))
                .filter(r -> before == null || r.createdAt().isBefore(before))
                .filter(r -> query.selector().matches(r.origin().labels()))
                .sorted(BY_CREATION.reversed())
                .limit(query.limit())
                .toList();
    }

    static List<RunRecord> active(Tables t) {
        return t.runs.values().stream().filter(r -> !r.state().isFinal()).sorted(BY_CREATION).toList();
    }

    static RunRecord update(Tables t, RunRecord run) {
        RunRecord stored = t.runs.get(run.id().value());
        if (stored == null || stored.version() != run.version()) {
            throw new ConflictException("run " + run.id() + " is not at version " + run.version());
        }
        RunRecord next = run.withVersion(run.version() + 1);
        t.runs().put(run.id().value(), asStored(stored, next));
        return next;
    }

    /**
     * {@code run} as stored: what a run is (its workspace, job, spec, priority, origin, creation) stays as {@code created}
     * says; the rest comes from {@code run}, with times to the microsecond and the reason shortened to its column.
     */
    private static RunRecord asStored(RunRecord created, RunRecord run) {
        RunOrigin origin = created.origin();
        return new RunRecord(run.id(), created.workspace(), created.job(), created.jobVersion(), run.state(), truncate(run.reason(), Stored.REASON),
                run.outcome(), run.attempt(), created.priority(), created.spec(), micros(created.createdAt()), micros(run.startedAt()),
                micros(run.finishedAt()), micros(run.cancelRequestedAt()), run.realTimeResources(), run.reclaimFor(), run.capacityReclaimed(),
                new RunOrigin(origin.overrides(), micros(origin.scheduleTime()), origin.idempotencyKey(), origin.submittedBy(), origin.labels()),
                micros(run.attemptStartedAt()),
                run.priorRuntimeMillis(), run.faults(), run.world(), run.version());
    }

    static Optional<RunRecord> findByIdempotencyKey(Tables t, String workspace, String key) {
        if (key == null) {
            return Optional.empty();
        }
        return t.runs.values().stream()
                .filter(r -> r.workspace().equals(workspace) && key.equals(r.origin().idempotencyKey()))
                .findFirst();
    }

    static void releaseIdempotencyKey(Tables t, RunId id) {
        RunRecord run = t.runs.get(id.value());
        if (run != null && run.origin().idempotencyKey() != null) {
            RunOrigin origin = run.origin().withoutIdempotencyKey();
            t.runs().put(id.value(), new RunRecord(run.id(), run.workspace(), run.job(), run.jobVersion(), run.state(), run.reason(),
                    run.outcome(), run.attempt(), run.priority(), run.spec(), run.createdAt(), run.startedAt(), run.finishedAt(),
                    run.cancelRequestedAt(), run.realTimeResources(), run.reclaimFor(), run.capacityReclaimed(), origin, run.attemptStartedAt(),
                    run.priorRuntimeMillis(), run.faults(), run.world(), run.version()));
        }
    }

    static List<RunRecord> finishedBefore(Tables t, Instant cutoff, int limit) {
        Instant before = micros(cutoff);
        return t.runs.values().stream()
                .filter(r -> r.state().isFinal() && r.finishedAt() != null && r.finishedAt().isBefore(before))
                .sorted(Comparator.comparing(RunRecord::finishedAt).thenComparing(r -> r.id().value()))
                .limit(limit)
                .toList();
    }

    static void delete(Tables t, RunId id) {
        RunRecord run = t.runs.get(id.value());
        if (run == null || !run.state().isFinal()) {
            throw new ConflictException("run " + id + " is not finished (or does not exist): only finished runs are removed");
        }
        t.runs().remove(id.value());
        t.instances().remove(id.value());
        t.events().remove(id.value());
    }
}
