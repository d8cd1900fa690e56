package io.slipstream.api.wire;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A node as the API shows it: its {@code state} ({@code Ready}, or {@code Down} with the {@code reason} and since
 * when), what it has, what is allocated on it, how many instances run there, and what its instances are held to
 * ({@code enforced}: memory, cpu, cpuset, pids, devices, kill; {@code enforcement}: how, and what is not, and why), where the
 * executor says.
 */
public record NodeView(String name, String state, String reason, Instant downSince, ResourcesView capacity, ResourcesView allocated, int instances,
                       Map<String, String> labels, List<String> enforced, String enforcement) {
}
