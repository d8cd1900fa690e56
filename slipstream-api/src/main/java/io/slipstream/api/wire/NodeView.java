package io.slipstream.api.wire;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A node as the API shows it: its {@code state} ({@code Ready}; {@code Down}, {@code Draining} or {@code Cordoned} with
 * the {@code reason} and {@code since} when, {@code downSince} too when down), what it has, what is allocated on it, how
 * many instances run there, and what its instances are held to ({@code enforced}: memory, cpu, cpuset, pids, devices,
 * kill; {@code enforcement}: how, and what is not, and why), where the executor says. A drained node reads
 * {@code Draining} while instances are still being moved off it, then {@code Cordoned} until it is uncordoned.
 * {@code topology}: where it is, level to domain broadest first ({@code block: b1, rack: r2}), where the cluster has a
 * Topology and the node the labels that carry it.
 */
public record NodeView(String name, String state, String reason, Instant downSince, Instant since, ResourcesView capacity, ResourcesView allocated,
                       int instances, Map<String, String> labels, List<String> enforced, String enforcement,
                       @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_EMPTY) Map<String, String> topology) {
}
