package io.slipstream.store.jdbc;

import io.slipstream.model.RunRecord;
import io.slipstream.store.RunRow;
import io.slipstream.store.UnreadableRecordException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import tools.jackson.core.JacksonException;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says once, at ERROR, which stored rows cannot be read and why: lists skip them on every call (the control loop reads
 * the active runs every cycle), and the log should name each once, not once a second. The {@code *Rows} classes return
 * what they read as {@link Read}s (or {@link RunRow}s); the store turns them into records here: a lookup of an
 * unreadable one throws, a list leaves it out.
 */
final class UnreadableRows {
    private static final Logger LOG = LoggerFactory.getLogger(UnreadableRows.class);
    private static final int MAX_WHY = 500;

    private final Set<String> reported = ConcurrentHashMap.newKeySet();

    /** A row read into its record, or why it could not be: mappers never throw for one row, so a list goes on past it. */
    record Read<T>(T value, UnreadableRecordException unreadable) {
        static Read<RunRecord> of(RunRow row) {
            if (row instanceof RunRow.Readable readable) {
                return new Read<>(readable.run(), null);
            }
            RunRow.Unreadable unreadable = (RunRow.Unreadable) row;
            return new Read<>(null, new UnreadableRecordException("run " + unreadable.id(), unreadable.workspace(), unreadable.error(), null));
        }
    }

    /** The record read, or (reported) the exception that names it. */
    <T> T orThrow(Read<T> read) {
        if (read.unreadable() != null) {
            report(read.unreadable());
            throw read.unreadable();
        }
        return read.value();
    }

    RunRecord orThrow(RunRow row) {
        return orThrow(Read.of(row));
    }

    /** The records read; the others reported and left out. */
    <T> List<T> readable(List<Read<T>> reads) {
        List<T> values = new ArrayList<>(reads.size());
        for (Read<T> read : reads) {
            if (read.unreadable() != null) {
                report(read.unreadable());
            } else {
                values.add(read.value());
            }
        }
        return values;
    }

    List<RunRecord> readableRuns(List<RunRow> rows) {
        return readable(rows.stream().map(Read::of).toList());
    }

    /** The exception naming {@code record} (of {@code workspace}, {@code null}: cluster-wide), for what {@code failure} says. */
    static UnreadableRecordException of(String record, String workspace, RuntimeException failure) {
        if (failure instanceof UnreadableRecordException unreadable) {
            return unreadable;
        }
        String why = why(failure);
        return new UnreadableRecordException(record, workspace, why.length() <= MAX_WHY ? why : why.substring(0, MAX_WHY - 1) + "…", failure);
    }

    /** What went wrong, in one line, with the path of the JSON field where binding failed. */
    private static String why(RuntimeException failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof JacksonException json && !json.getPath().isEmpty()) {
                StringBuilder path = new StringBuilder();
                for (JacksonException.Reference reference : json.getPath()) {
                    if (reference.getPropertyName() != null) {
                        path.append(path.isEmpty() ? "" : ".").append(reference.getPropertyName());
                    } else if (reference.getIndex() >= 0) {
                        path.append('[').append(reference.getIndex()).append(']');
                    }
                }
                return "at " + path + ": " + firstLine(json.getOriginalMessage());
            }
        }
        return firstLine(failure.getMessage() == null ? failure.getClass().getSimpleName() : failure.getMessage());
    }

    /** Jackson's further lines point into the JSON text: not for a log line. */
    private static String firstLine(String message) {
        return message == null ? "" : message.lines().findFirst().orElse(message);
    }

    /** Logs {@code unreadable} unless it was logged already (the same record for the same reason). */
    void report(UnreadableRecordException unreadable) {
        if (reported.add(unreadable.record() + "\n" + unreadable.why())) {
            LOG.error("{}; it is left out (every other record is read as usual) until it is repaired or removed", unreadable.getMessage());
        }
    }
}
