package io.slipstream.api.wire;

import java.util.Map;

/** A node as the API shows it: what it has, what is allocated on it, and how many instances run there. */
public record NodeView(String name, String state, ResourcesView capacity, ResourcesView allocated, int instances, Map<String, String> labels) {
}
