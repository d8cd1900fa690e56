package io.slipstream.store.jdbc;

import static io.slipstream.store.jdbc.Columns.instant;
import static io.slipstream.store.jdbc.Columns.time;

import io.slipstream.store.ConflictException;
import java.time.Instant;
import java.util.Optional;
import org.jdbi.v3.core.Handle;

/**
 * The SQL of {@code schedule_states}: per scheduled job, the last due time its schedule fired for, moved forward by
 * compare-and-set (with the run it creates, in the caller's transaction), so that two replicas never fire one time twice.
 */
final class ScheduleRows {
    private ScheduleRows() {
    }

    static Optional<Instant> lastDue(Handle h, String workspace, String job) {
        return h.createQuery("SELECT last_due FROM schedule_states WHERE workspace = :workspace AND job = :job")
                .bind("workspace", workspace)
                .bind("job", job)
                .map((rs, ctx) -> instant(rs, "last_due"))
                .findOne();
    }

    /** {@link io.slipstream.store.StoreTx#recordScheduled}. */
    static void record(Handle h, String workspace, String job, Instant expectedLastDue, Instant due) {
        int changed;
        if (expectedLastDue == null) {
            boolean exists = h.createQuery("SELECT COUNT(*) FROM schedule_states WHERE workspace = :workspace AND job = :job")
                    .bind("workspace", workspace).bind("job", job).mapTo(Long.class).one() > 0;
            if (exists) {
                throw new ConflictException("the schedule of " + workspace + "/" + job + " fired meanwhile");
            }
            changed = time(h.createUpdate("INSERT INTO schedule_states (workspace, job, last_due) VALUES (:workspace, :job, :due)")
                    .bind("workspace", workspace).bind("job", job), "due", due).execute();
        } else {
            changed = time(time(h.createUpdate("UPDATE schedule_states SET last_due = :due WHERE workspace = :workspace AND job = :job "
                            + "AND last_due = :expected AND last_due < :due")
                    .bind("workspace", workspace).bind("job", job), "due", due), "expected", expectedLastDue).execute();
        }
        if (changed == 0) {
            throw new ConflictException("the schedule of " + workspace + "/" + job + " fired meanwhile");
        }
    }

    /** When its job is deleted: a job made again under the same name starts its schedule afresh, without catching up on old times. */
    static void forget(Handle h, String workspace, String job) {
        h.createUpdate("DELETE FROM schedule_states WHERE workspace = :workspace AND job = :job")
                .bind("workspace", workspace).bind("job", job).execute();
    }
}
