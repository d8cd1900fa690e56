package io.slipstream.store;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.Set;

/**
 * A usage report's question: the time in {@code [since, until)} of the segments of {@code workspaces} ({@code null}:
 * all), added up by {@code by}. A segment still open counts until {@code now}. The window is whole hours (UTC), as
 * the roll-ups a database store keeps are.
 */
public record UsageQuery(Set<String> workspaces, UsageGrouping by, Instant since, Instant until, Instant now) {
    public UsageQuery {
        requireNonNull(by, "by is null");
        requireNonNull(since, "since is null");
        requireNonNull(until, "until is null");
        requireNonNull(now, "now is null");
        if (!since.isBefore(until)) {
            throw new IllegalArgumentException("since must be before until");
        }
        if (since.toEpochMilli() % UsageBuckets.HOUR != 0 || until.toEpochMilli() % UsageBuckets.HOUR != 0) {
            throw new IllegalArgumentException("a usage window is whole hours (UTC): " + since + " to " + until);
        }
        workspaces = workspaces == null ? null : Set.copyOf(workspaces);
    }
}
