package io.slipstream.store.memory;

import static io.slipstream.store.memory.Stored.micros;
import static io.slipstream.store.memory.Stored.truncate;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.model.InstanceRecord;
import io.slipstream.store.ConflictException;
import io.slipstream.store.memory.Tables.InstanceKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;

/** Instances in an {@link InMemoryStore}, by run, then attempt and rank (the JDBC store's {@code InstanceRows}). */
final class InstanceTable {
    private InstanceTable() {
    }

    static List<InstanceRecord> create(Tables t, List<InstanceRecord> instances) {
        List<InstanceRecord> stored = new ArrayList<>();
        for (InstanceRecord instance : instances) {
            InstanceRecord next = instance.withVersion(1);
            TreeMap<InstanceKey, InstanceRecord> ofRun = t.instancesOf(instance.id().runId().value());
            if (ofRun.containsKey(InstanceKey.of(instance.id()))) {
                throw new ConflictException("it was created by someone else meanwhile: instance " + instance.id() + " exists");
            }
            ofRun.put(InstanceKey.of(instance.id()), asStored(next, next));
            stored.add(next);
        }
        return stored;
    }

    static List<InstanceRecord> of(Tables t, RunId runId) {
        TreeMap<InstanceKey, InstanceRecord> ofRun = t.instances.get(runId.value());
        return ofRun == null ? List.of() : List.copyOf(ofRun.values());
    }

    static Optional<InstanceRecord> get(Tables t, InstanceId id) {
        TreeMap<InstanceKey, InstanceRecord> ofRun = t.instances.get(id.runId().value());
        return ofRun == null ? Optional.empty() : Optional.ofNullable(ofRun.get(InstanceKey.of(id)));
    }

    static List<InstanceRecord> ofActiveRuns(Tables t) {
        List<InstanceRecord> found = new ArrayList<>();
        t.runs.values().stream().filter(r -> !r.state().isFinal()).forEach(run -> {
            TreeMap<InstanceKey, InstanceRecord> ofRun = t.instances.get(run.id().value());
            if (ofRun != null) {
                ofRun.values().stream().filter(i -> i.id().attempt() == run.attempt()).forEach(found::add);
            }
        });
        return List.copyOf(found);
    }

    static List<InstanceRecord> active(Tables t) {
        List<InstanceRecord> found = new ArrayList<>();
        t.instances.values().forEach(ofRun -> ofRun.values().stream().filter(i -> !i.state().isFinal()).forEach(found::add));
        return List.copyOf(found);
    }

    static InstanceRecord update(Tables t, InstanceRecord instance) {
        InstanceRecord stored = t.instances.getOrDefault(instance.id().runId().value(), new TreeMap<>()).get(InstanceKey.of(instance.id()));
        if (stored == null || stored.version() != instance.version()) {
            throw new ConflictException("instance " + instance.id() + " is not at version " + instance.version());
        }
        InstanceRecord next = instance.withVersion(instance.version() + 1);
        t.instancesOf(instance.id().runId().value()).put(InstanceKey.of(instance.id()), asStored(stored, next));
        return next;
    }

    /** {@code instance} as stored: its id, node group and rank as created; times to the microsecond; the reason shortened. */
    private static InstanceRecord asStored(InstanceRecord created, InstanceRecord instance) {
        return new InstanceRecord(created.id(), created.nodeGroup(), created.groupRank(), instance.node(), instance.gpus(), instance.state(),
                instance.exitCode(), truncate(instance.reason(), Stored.REASON), instance.handle(), micros(instance.startedAt()),
                micros(instance.finishedAt()), instance.endpoint(), micros(instance.readyAt()), micros(instance.stopRequestedAt()),
                truncate(instance.probeFailure(), Stored.REASON), instance.launchFailure(), instance.endCause(), instance.usage(),
                instance.restarts(), instance.version());
    }
}
