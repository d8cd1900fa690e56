package io.slipstream.store.jdbc;

import static io.slipstream.store.jdbc.Columns.MESSAGE;
import static io.slipstream.store.jdbc.Columns.REASON;
import static io.slipstream.store.jdbc.Columns.instant;
import static io.slipstream.store.jdbc.Columns.time;
import static io.slipstream.store.jdbc.Columns.truncate;

import io.slipstream.api.run.RunId;
import io.slipstream.model.EventType;
import io.slipstream.model.RunEvent;
import java.util.List;
import org.jdbi.v3.core.Handle;

/**
 * The SQL of {@code run_events}: a run's history, appended to only, numbered by the database's sequence ({@code seq},
 * one for every run: a rolled-back transaction's numbers are not reused), read in pages after a number.
 */
final class EventRows {
    private EventRows() {
    }

    /** The event as appended, with its number. */
    static RunEvent append(Handle h, RunEvent event) {
        long seq = time(h.createUpdate("INSERT INTO run_events (run_id, event_time, type, state, reason, message, instance) "
                        + "VALUES (:runId, :time, :type, :state, :reason, :message, :instance)")
                .bind("runId", event.runId().value())
                .bind("type", event.type().name())
                .bind("state", event.state())
                .bind("reason", truncate(event.reason(), REASON))
                .bind("message", truncate(event.message(), MESSAGE))
                .bind("instance", event.instance()), "time", event.time())
                .executeAndReturnGeneratedKeys("seq")
                .mapTo(Long.class)
                .one();
        return new RunEvent(seq, event.runId(), event.time(), event.type(), event.state(), event.reason(), event.message(), event.instance());
    }

    static List<RunEvent> of(Handle h, RunId runId, long afterSeq, int limit) {
        return h.createQuery("SELECT * FROM run_events WHERE run_id = :runId AND seq > :after ORDER BY seq LIMIT :limit")
                .bind("runId", runId.value())
                .bind("after", afterSeq)
                .bind("limit", limit)
                .map((rs, ctx) -> new RunEvent(rs.getLong("seq"), new RunId(rs.getString("run_id")), instant(rs, "event_time"),
                        EventType.valueOf(rs.getString("type")), rs.getString("state"), rs.getString("reason"), rs.getString("message"),
                        rs.getString("instance")))
                .list();
    }

    /** A deleted run's history goes with it. */
    static void deleteOf(Handle h, RunId runId) {
        h.createUpdate("DELETE FROM run_events WHERE run_id = :id").bind("id", runId.value()).execute();
    }
}
