package io.slipstream.simulator.input;

import static java.util.Objects.requireNonNull;

/**
 * One level of the simulated cluster's topology ({@code cluster.topology[i]}): its name and how many consecutive nodes
 * each of its domains takes. Levels are listed broadest first, and a level's size divides the broader level's, so
 * each domain lies inside one domain of every broader level.
 */
public record TopologyLevel(String name, int nodes) {
    public TopologyLevel {
        requireNonNull(name, "name is null");
        if (nodes < 1) {
            throw new IllegalArgumentException("a domain has at least one node");
        }
    }
}
