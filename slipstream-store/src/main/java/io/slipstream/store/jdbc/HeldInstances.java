package io.slipstream.store.jdbc;

import io.slipstream.api.run.RunId;
import io.slipstream.model.InstanceRecord;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jdbi.v3.core.Handle;

/**
 * The instances of the current attempt of every run that holds resources, kept between reads, for a store that this
 * process alone writes (the embedded H2 file, locked by it). Reading them all at each control cycle (a join of every
 * running run to its instances, each row bound) was the largest part of the cycle with thousands running. A read now
 * asks the database which runs hold resources and at which attempt (an index on the state), and reads the instances
 * only of the runs that are new to it, began another attempt, or whose instances a transaction of this store wrote
 * since it last read them ({@link #written}, told once the transaction ended).
 *
 * <p>A transaction's mark comes after its commit: a read that overlaps a write may return that run's instances as
 * they were before it, and the next read reads them again. The control loop, which writes instances, does so on its
 * own thread or waits for its workers before it reads, so it always reads what it wrote. Reads are serialised: two
 * at once could otherwise consume one mark and keep what the other read before it.
 *
 * <p>One store object per file: H2 lets a second connection of this JVM open the same file, whose writes would mark
 * nothing here (the server opens its store once; its other connections to the file only read).
 */
final class HeldInstances {
    private final WriteMarks written = new WriteMarks();
    /** Guarded by this. */
    private Map<RunId, Held> kept = Map.of();

    private record Held(int attempt, List<InstanceRecord> instances) {
    }

    /** The runs whose instances a transaction wrote, once it ended. */
    void written(Collection<RunId> runs) {
        written.add(runs);
    }

    /** Every run's instances are read again at the next read. */
    void forgetAll() {
        written.forgetAll();
    }

    /**
     * {@link InstanceRows#ofRunsHoldingResources}, from what was kept where nothing changed: by run, then rank. A read
     * that fails gives its marks back: the next one must still read those runs again.
     */
    synchronized List<InstanceRecord> read(Handle h) {
        WriteMarks.Taken taken = written.take();
        try {
            return read(h, taken.runs(), taken.all());
        } catch (RuntimeException | Error e) {
            written.giveBack(taken);
            throw e;
        }
    }

    private List<InstanceRecord> read(Handle h, Set<RunId> changed, boolean forget) {
        if (forget) {
            kept = Map.of();
        }
        Map<RunId, Integer> holding = new LinkedHashMap<>();
        h.createQuery("SELECT id, attempt FROM runs WHERE state IN (<holding>) ORDER BY id")
                .bindList("holding", InstanceRows.HOLDING)
                .map((rs, ctx) -> Map.entry(new RunId(rs.getString("id")), rs.getInt("attempt")))
                .forEach(run -> holding.put(run.getKey(), run.getValue()));
        Map<RunId, Integer> toRead = new LinkedHashMap<>();
        holding.forEach((run, attempt) -> {
            Held held = kept.get(run);
            if (held == null || held.attempt() != attempt || changed.contains(run)) {
                toRead.put(run, attempt);
            }
        });
        Map<RunId, List<InstanceRecord>> read = InstanceRows.ofAttempts(h, toRead);
        Map<RunId, Held> next = new LinkedHashMap<>(holding.size() * 4 / 3 + 16);
        List<InstanceRecord> all = new ArrayList<>();
        holding.forEach((run, attempt) -> {
            List<InstanceRecord> instances = toRead.containsKey(run) ? read.getOrDefault(run, List.of()) : kept.get(run).instances();
            next.put(run, new Held(attempt, instances));
            all.addAll(instances);
        });
        kept = next;
        return all;
    }
}
