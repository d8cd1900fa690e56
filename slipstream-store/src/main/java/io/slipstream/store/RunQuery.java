package io.slipstream.store;

import io.slipstream.api.run.RunState;
import java.util.Set;

/**
 * Which runs to list. {@code workspaces} {@code null} means all (admins); an empty set means none.
 * Results are newest first; {@code before} is the id-and-time cursor of the last run of the previous page.
 */
public record RunQuery(Set<String> workspaces, String workspace, String job, Set<RunState> states, int limit, Cursor before) {
    public RunQuery {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be positive");
        }
        states = states == null ? Set.of() : Set.copyOf(states);
        workspaces = workspaces == null ? null : Set.copyOf(workspaces);
    }

    /** Position after which the next page starts: runs created before {@code createdAtMillis}, ties by id. */
    public record Cursor(long createdAtMillis, String id) {
    }
}
