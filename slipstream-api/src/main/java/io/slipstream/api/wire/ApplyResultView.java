package io.slipstream.api.wire;

/** What {@code apply} did with one document: {@code created}, {@code updated} or {@code unchanged}. */
public record ApplyResultView(String kind, String workspace, String name, String action, long version) {
}
