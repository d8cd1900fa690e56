package io.slipstream.api.wire;

import java.time.Instant;
import java.util.Map;

/**
 * A node as the API shows it: its {@code state} ({@code Ready}, or {@code Down} with the {@code reason} and since
 * when), what it has, what is allocated on it, and how many instances run there.
 */
public record NodeView(String name, String state, String reason, Instant downSince, ResourcesView capacity, ResourcesView allocated, int instances,
                       Map<String, String> labels) {
}
