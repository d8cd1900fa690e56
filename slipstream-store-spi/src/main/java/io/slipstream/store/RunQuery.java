package io.slipstream.store;

import io.slipstream.api.label.LabelSelector;
import io.slipstream.api.run.RunState;
import java.util.Set;

/**
 * Which runs to list. {@code workspaces} {@code null} means all (admins); an empty set means none.
 * {@code createdAfter} (inclusive) and {@code createdBefore} (exclusive) bound the creation time, {@code null}: open.
 * {@code selector} picks runs by their labels ({@code null}: all); the store applies it in its query, so that a page
 * holds {@code limit} matching runs and the cursor stays right.
 * Results are newest first; {@code before} is the id-and-time cursor of the last run of the previous page.
 */
public record RunQuery(Set<String> workspaces, String workspace, String job, Set<RunState> states, java.time.Instant createdAfter,
                       java.time.Instant createdBefore, LabelSelector selector, int limit, Cursor before) {
    public RunQuery {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be positive");
        }
        states = states == null ? Set.of() : Set.copyOf(states);
        workspaces = workspaces == null ? null : Set.copyOf(workspaces);
        selector = selector == null ? LabelSelector.EVERYTHING : selector;
    }

    public RunQuery(Set<String> workspaces, String workspace, String job, Set<RunState> states, java.time.Instant createdAfter,
                    java.time.Instant createdBefore, int limit, Cursor before) {
        this(workspaces, workspace, job, states, createdAfter, createdBefore, null, limit, before);
    }

    public RunQuery(Set<String> workspaces, String workspace, String job, Set<RunState> states, int limit, Cursor before) {
        this(workspaces, workspace, job, states, null, null, null, limit, before);
    }

    /** Position after which the next page starts: runs created before {@code createdAtMillis}, ties by id. */
    public record Cursor(long createdAtMillis, String id) {
    }
}
