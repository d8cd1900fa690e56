package io.slipstream.store;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.RunId;
import io.slipstream.model.RunRecord;
import java.time.Instant;

/** One stored run as a list returns it: read, or unreadable with what its row still tells (see {@link UnreadableRecordException}). */
public sealed interface RunRow permits RunRow.Readable, RunRow.Unreadable {
    RunId id();

    Instant createdAt();

    record Readable(RunRecord run) implements RunRow {
        public Readable {
            requireNonNull(run, "run is null");
        }

        @Override
        public RunId id() {
            return run.id();
        }

        @Override
        public Instant createdAt() {
            return run.createdAt();
        }
    }

    /** {@code state} is the row's text as stored (it may be what could not be read). */
    record Unreadable(RunId id, String workspace, String job, String state, Instant createdAt, String error) implements RunRow {
        public Unreadable {
            requireNonNull(id, "id is null");
            requireNonNull(createdAt, "createdAt is null");
            requireNonNull(error, "error is null");
        }
    }
}
