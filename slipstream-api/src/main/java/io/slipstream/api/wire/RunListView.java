package io.slipstream.api.wire;

import java.util.List;

/**
 * A page of runs: {@code items}, {@code unreadable} (runs of the page whose stored record this server cannot read;
 * {@code null} when none) and {@code next} (a cursor for the following page) when more exist.
 */
public record RunListView(List<RunView> items, List<UnreadableRunView> unreadable, String next) {
}
