package io.slipstream.store.memory;

import static io.slipstream.store.memory.Stored.micros;
import static io.slipstream.store.memory.Stored.truncate;

import io.slipstream.api.run.RunId;
import io.slipstream.model.RunEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs' histories in an {@link InMemoryStore} (the JDBC store's {@code EventRows}), numbered by one sequence of the
 * store's: numbers taken by a rolled-back transaction are not reused, as with a database sequence.
 */
final class EventTable {
    private EventTable() {
    }

    static RunEvent append(Tables t, AtomicLong seq, RunEvent event) {
        long number = seq.incrementAndGet();
        List<RunEvent> ofRun = new ArrayList<>(t.events.getOrDefault(event.runId().value(), List.of()));
        ofRun.add(new RunEvent(number, event.runId(), micros(event.time()), event.type(), event.state(), truncate(event.reason(), Stored.REASON),
                truncate(event.message(), Stored.MESSAGE), event.instance()));
        t.events().put(event.runId().value(), List.copyOf(ofRun));
        return new RunEvent(number, event.runId(), event.time(), event.type(), event.state(), event.reason(), event.message(), event.instance());
    }

    static List<RunEvent> of(Tables t, RunId runId, long afterSeq, int limit) {
        return t.events.getOrDefault(runId.value(), List.of()).stream().filter(e -> e.seq() > afterSeq).limit(limit).toList();
    }
}
