package io.slipstream.api.spec;

import static java.util.Objects.requireNonNull;

import java.util.List;

/**
 * The cluster's topology (one per cluster): its levels, broadest first (block, rack, host), each carried by a node
 * label whose value names the node's domain at that level. Node groups ask to be placed within one domain of a level
 * ({@link PlacementSpec}); docs/topology.md.
 */
public record TopologySpec(List<Level> levels) implements Spec {
    public static final int MAX_LEVELS = 8;

    /** A level: its name (what jobs ask for) and the node label that carries it. */
    public record Level(String name, String nodeLabel) {
        public Level {
            requireNonNull(name, "name is null");
            requireNonNull(nodeLabel, "nodeLabel is null");
        }
    }

    public TopologySpec {
        levels = levels == null ? List.of() : List.copyOf(levels);
    }

    /** The index of the level named {@code name} (0: the broadest), or -1. */
    public int levelOf(String name) {
        for (int i = 0; i < levels.size(); i++) {
            if (levels.get(i).name().equals(name)) {
                return i;
            }
        }
        return -1;
    }

    /** The levels' names, broadest first, for messages. */
    public List<String> levelNames() {
        return levels.stream().map(Level::name).toList();
    }

    @Override
    public Kind kind() {
        return Kind.Topology;
    }
}
