package io.slipstream.store.jdbc;

import io.slipstream.store.UnreadableRecordException;
import java.util.Set;
import tools.jackson.core.JacksonException;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says once, at ERROR, which stored rows cannot be read and why: lists skip them on every call (the control loop reads
 * the active runs every cycle), and the log should name each once, not once a second.
 */
final class UnreadableRows {
    private static final Logger LOG = LoggerFactory.getLogger(UnreadableRows.class);
    private static final int MAX_WHY = 500;

    private final Set<String> reported = ConcurrentHashMap.newKeySet();

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
