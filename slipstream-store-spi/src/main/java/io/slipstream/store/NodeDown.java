package io.slipstream.store;

import static java.util.Objects.requireNonNull;

import java.time.Instant;

/** A node declared down: since when, and why. */
public record NodeDown(String node, String reason, Instant since) {
    public NodeDown {
        requireNonNull(node, "node is null");
        requireNonNull(reason, "reason is null");
        requireNonNull(since, "since is null");
    }
}
