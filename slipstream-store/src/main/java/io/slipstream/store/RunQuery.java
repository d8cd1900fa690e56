package io.slipstream.store;

import io.slipstream.api.run.RunState;
import java.util.Set;

/**
 * Which runs to list. {@code workspaces} {@code null} means all (admins); an empty set means none.
 * {@code createdAfter} (inclusive) and {@code createdBefore} (exclusive) bound the creation time, {@code null}: open.
 * Results are newest first; {@code before} is the id-and-time cursor of the last run of the previous page.
 */
public record RunQuery(Set<String> workspaces, String workspace, String job, Set<RunState> states, java.time.Instant createdAfter,
                       java.time.Instant createdBefore, int limit, Cursor before) {
    public RunQuery {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be positive");
        }
        states = states == null ? Set.of() : Set.copyOf(states);
        workspaces = workspaces == null ? null : Set.copyOf(workspaces);
    }

    public RunQuery(Set<String> workspaces, String workspace, String job, Set<RunState> states, int limit, Cursor before) {
        this(workspaces, workspace, job, states, null, null, limit, before);
    }

    /** Position after which the next page starts: runs created before {@code createdAtMillis}, ties by id. */
    public record Cursor(long createdAtMillis, String id) {
    }
}
