package io.slipstream.store.jdbc;

import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.model.RunRecord;
import io.slipstream.store.RunRow;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.StatementContext;

/**
 * The active runs as last read by a store's own reads (never a transaction's), so that a run whose row is unchanged
 * since is not read into a record again: binding its spec, overrides and labels from JSON was nine tenths of reading
 * the active runs, which the control loop does twice a cycle. A row is unchanged when its {@code version} is, since
 * every update of a run advances it, and its idempotency key (the one column released without an update) is the same;
 * its state and attempt are compared too, cheaply, in case a database restored or failed over while the server ran
 * numbers a version again. Only committed rows are read here, so a version names one content. Records are immutable
 * and may be shared.
 *
 * <p>Where this process alone writes the store (the embedded file), the rows themselves are kept too: after a first
 * whole read, a read reads only the rows that transactions of this process wrote since ({@link #written}, told once
 * each ended), and those that could not be read (they may have been repaired). With 100,000 runs queued, reading
 * every active row twice a cycle was most of a quiet cycle. As with {@link HeldInstances}, a read that overlaps a
 * write may show the runs it wrote as they were just before it (or some of them after it), and the next read shows
 * the write.
 */
final class ActiveRunRows {
    private static final Set<String> KNOWN_STATES = Arrays.stream(RunState.values()).map(Enum::name).collect(Collectors.toSet());
    private static final Comparator<Key> ORDER = Comparator.comparing(Key::createdAt).thenComparing(key -> key.id().value());

    /** The runs written since the last read, where this process alone writes the store; else null. */
    private final WriteMarks written;
    private volatile Map<RunId, RunRecord> lastRead = Map.of();
    /** Whether the last read found every active run in a state this build knows (none read yet: not known). */
    private volatile boolean statesKnown;
    /** The active rows in the order of {@link RunRows#ACTIVE}, kept where {@link #written} is; null until a whole read. Guarded by this. */
    private TreeMap<Key, RunRow> kept;
    private final Map<RunId, Key> keys = new HashMap<>();
    /** Rows that could not be read or are in a state this build does not know: read again each time. Guarded by this. */
    private final Set<RunId> odd = new HashSet<>();

    private record Key(Instant createdAt, RunId id) {
    }

    /** @param keepRows this process alone writes the store: the rows are kept between reads */
    ActiveRunRows(boolean keepRows) {
        this.written = keepRows ? new WriteMarks() : null;
    }

    /** The runs whose rows a transaction of this process wrote, once it ended. */
    void written(java.util.Collection<RunId> runs) {
        if (written != null) {
            written.add(runs);
        }
    }

    /** Every row is read again at the next read. */
    void forgetAll() {
        if (written != null) {
            written.forgetAll();
        }
    }

    List<RunRow> read(Handle h) {
        if (written == null) {
            return readWhole(h, lastRead);
        }
        synchronized (this) {
            WriteMarks.Taken taken = written.take();
            boolean whole = kept == null || taken.all();
            try {
                if (whole) {
                    keepWhole(readWhole(h, keptRecords()));
                    lastRead = Map.of(); // the records are kept with their rows from now on
                } else {
                    Set<RunId> again = new HashSet<>(taken.runs());
                    again.addAll(odd);
                    readAgain(h, again);
                }
                statesKnown = odd.stream().allMatch(id -> kept.get(keys.get(id)) instanceof RunRow.Unreadable u && KNOWN_STATES.contains(u.state()));
                return new ArrayList<>(kept.values());
            } catch (RuntimeException | Error e) {
                if (whole) {
                    kept = null; // none half kept: the next read is whole again
                }
                written.giveBack(taken);
                throw e;
            }
        }
    }

    /** The readable records kept (none before the first whole read). */
    private Map<RunId, RunRecord> keptRecords() {
        Map<RunId, RunRecord> records = new HashMap<>();
        if (kept != null) {
            kept.values().forEach(row -> {
                if (row instanceof RunRow.Readable readable) {
                    records.put(row.id(), readable.run());
                }
            });
        }
        return records;
    }

    private List<RunRow> readWhole(Handle h, Map<RunId, RunRecord> known) {
        Map<RunId, RunRecord> read = new HashMap<>(Math.max(16, known.size() * 4 / 3 + 16));
        boolean[] unknownState = {false};
        List<RunRow> rows = h.createQuery(RunRows.ACTIVE).map((rs, ctx) -> {
            unknownState[0] |= !KNOWN_STATES.contains(rs.getString("state"));
            return row(rs, ctx, known, read);
        }).list();
        lastRead = read;
        statesKnown = !unknownState[0];
        return rows;
    }

    /** The row as a record: the one read before if its row is unchanged. */
    private static RunRow row(ResultSet rs, StatementContext ctx, Map<RunId, RunRecord> known, Map<RunId, RunRecord> read) throws SQLException {
        RunId id = new RunId(rs.getString("id"));
        RunRecord same = known.get(id);
        if (same != null && same.version() == rs.getLong("version") && same.attempt() == rs.getInt("attempt")
                && same.state().name().equals(rs.getString("state"))
                && Objects.equals(same.origin().idempotencyKey(), rs.getString("idempotency_key"))) {
            read.put(id, same);
            return new RunRow.Readable(same);
        }
        RunRow row = RunRows.run(rs, ctx);
        if (row instanceof RunRow.Readable readable) {
            read.put(id, readable.run()); // an unreadable row is read again each time: it may be repaired
        }
        return row;
    }

    private void keepWhole(List<RunRow> rows) {
        kept = new TreeMap<>(ORDER);
        keys.clear();
        odd.clear();
        rows.forEach(this::keep);
    }

    private void keep(RunRow row) {
        Key key = new Key(row.createdAt(), row.id());
        Key before = keys.put(row.id(), key);
        if (before != null) {
            kept.remove(before);
        }
        kept.put(key, row);
        if (row instanceof RunRow.Unreadable) {
            odd.add(row.id());
        } else {
            odd.remove(row.id());
        }
    }

    private void forget(RunId id) {
        Key key = keys.remove(id);
        if (key != null) {
            kept.remove(key);
        }
        odd.remove(id);
    }

    /** Reads {@code ids}' rows again (whatever their state): an active one is kept, one ended or deleted forgotten. */
    private void readAgain(Handle h, Set<RunId> ids) {
        if (ids.isEmpty()) {
            return;
        }
        Map<RunId, RunRecord> known = new HashMap<>();
        ids.forEach(id -> {
            Key key = keys.get(id);
            if (key != null && kept.get(key) instanceof RunRow.Readable readable) {
                known.put(id, readable.run());
            }
        });
        Map<RunId, RunRecord> read = new HashMap<>();
        List<String> all = ids.stream().map(RunId::value).toList();
        Set<RunId> active = new HashSet<>();
        for (int from = 0; from < all.size(); from += InstanceRows.IN_LIST) {
            h.createQuery("SELECT * FROM runs WHERE id IN (<ids>)")
                    .bindList("ids", InstanceRows.inList(all, from))
                    .map((rs, ctx) -> rs.getBoolean("active") ? row(rs, ctx, known, read) : null)
                    .forEach(row -> {
                        if (row != null) {
                            active.add(row.id());
                            keep(row);
                        }
                    });
        }
        ids.stream().filter(id -> !active.contains(id)).forEach(this::forget);
    }

    /**
     * Whether the last read found every active run in a state this build knows (a newer build's run, read by an
     * older one, may not be): then only runs in the states that hold resources can have instances of their current
     * attempt, which {@link InstanceRows#ofRunsHoldingResources} reads by an index.
     */
    boolean statesKnown() {
        return statesKnown;
    }
}
