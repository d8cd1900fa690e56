package io.slipstream.store.jdbc;

import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.model.RunRecord;
import io.slipstream.store.RunRow;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Handle;

/**
 * The active runs as last read by a store's own reads (never a transaction's), so that a run whose row is unchanged
 * since is not read into a record again: binding its spec, overrides and labels from JSON was nine tenths of reading
 * the active runs, which the control loop does twice a cycle. A row is unchanged when its {@code version} is, since
 * every update of a run advances it, and its idempotency key (the one column released without an update) is the same;
 * its state and attempt are compared too, cheaply, in case a database restored or failed over while the server ran
 * numbers a version again. Only committed rows are read here, so a version names one content. Records are immutable
 * and may be shared; the memory is the active runs', replaced (not grown) at each read.
 */
final class ActiveRunRows {
    private static final Set<String> KNOWN_STATES = Arrays.stream(RunState.values()).map(Enum::name).collect(Collectors.toSet());

    private volatile Map<RunId, RunRecord> lastRead = Map.of();
    /** Whether the last read found every active run in a state this build knows (none read yet: not known). */
    private volatile boolean statesKnown;

    List<RunRow> read(Handle h) {
        Map<RunId, RunRecord> known = lastRead;
        Map<RunId, RunRecord> read = new HashMap<>(Math.max(16, known.size() * 4 / 3 + 16));
        boolean[] unknownState = {false};
        List<RunRow> rows = h.createQuery(RunRows.ACTIVE).map((rs, ctx) -> {
            RunId id = new RunId(rs.getString("id"));
            RunRecord same = known.get(id);
            if (same != null && same.version() == rs.getLong("version") && same.attempt() == rs.getInt("attempt")
                    && same.state().name().equals(rs.getString("state"))
                    && Objects.equals(same.origin().idempotencyKey(), rs.getString("idempotency_key"))) {
                read.put(id, same);
                return new RunRow.Readable(same);
            }
            unknownState[0] |= !KNOWN_STATES.contains(rs.getString("state"));
            RunRow row = RunRows.run(rs, ctx);
            if (row instanceof RunRow.Readable readable) {
                read.put(id, readable.run()); // an unreadable row is read again each time: it may be repaired
            }
            return row;
        }).list();
        lastRead = read;
        statesKnown = !unknownState[0];
        return rows;
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
