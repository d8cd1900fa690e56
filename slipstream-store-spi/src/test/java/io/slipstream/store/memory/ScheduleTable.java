package io.slipstream.store.memory;

import static io.slipstream.store.memory.Stored.micros;

import io.slipstream.store.ConflictException;
import io.slipstream.store.memory.Tables.ScheduleKey;
import java.time.Instant;
import java.util.Optional;

/** Per scheduled job, the last due time its schedule fired for, moved by compare-and-set (the JDBC store's {@code ScheduleRows}). */
final class ScheduleTable {
    private ScheduleTable() {
    }

    static Optional<Instant> lastDue(Tables t, String workspace, String job) {
        return Optional.ofNullable(t.schedules.get(new ScheduleKey(workspace, job)));
    }

    static void record(Tables t, String workspace, String job, Instant expectedLastDue, Instant due) {
        ScheduleKey key = new ScheduleKey(workspace, job);
        Instant stored = t.schedules.get(key);
        boolean moves = expectedLastDue == null
                ? stored == null
                : stored != null && stored.equals(micros(expectedLastDue)) && stored.isBefore(micros(due));
        if (!moves) {
            throw new ConflictException("the schedule of " + workspace + "/" + job + " fired meanwhile");
        }
        t.schedules().put(key, micros(due));
    }
}
