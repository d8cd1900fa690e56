package io.slipstream.server.control;

import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.PlacementSpec;
import io.slipstream.api.spec.TopologySpec;
import io.slipstream.executor.NodeInfo;
import io.slipstream.scheduler.Locality;
import io.slipstream.store.StoreReads;
import io.slipstream.store.StoredDocument;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The cluster's topology as the control plane reads it: where each node is (its domain at each level, from the level's
 * node label) and what a node group's placement asks of the scheduler. Without a Topology document every node is
 * nowhere and no placement can be met.
 */
public final class ClusterTopology {
    public static final ClusterTopology NONE = new ClusterTopology(null);

    private final TopologySpec spec;

    private ClusterTopology(TopologySpec spec) {
        this.spec = spec;
    }

    /** Whether any node group of {@code job} names a placement (only then does the topology matter to it). */
    public static boolean placed(io.slipstream.api.spec.JobSpec job) {
        return job.nodeGroups().stream().anyMatch(group -> group.placement() != null);
    }

    /** The topology the store holds (the cluster has at most one), or {@link #NONE}. */
    public static ClusterTopology read(StoreReads reads) {
        return of(reads.documents().list(Kind.Topology, null));
    }

    static ClusterTopology of(List<StoredDocument> documents) {
        for (StoredDocument document : documents) {
            if (document.document().spec() instanceof TopologySpec topology) {
                return new ClusterTopology(topology);
            }
        }
        return NONE;
    }

    /** The levels' node labels, broadest first (empty without a topology). */
    List<String> labels() {
        return spec == null ? List.of() : spec.levels().stream().map(TopologySpec.Level::nodeLabel).toList();
    }

    /** The levels, broadest first (empty without a topology). */
    public List<String> levels() {
        return spec == null ? List.of() : spec.levelNames();
    }

    /**
     * The node's domain at each level, broadest first, from its labels: {@code ""} from the first level whose label it
     * lacks on (a node with no rack is in no host of a rack either).
     */
    List<String> domainsOf(NodeInfo node) {
        if (spec == null) {
            return List.of();
        }
        List<String> domains = new ArrayList<>(spec.levels().size());
        boolean missing = false;
        for (TopologySpec.Level level : spec.levels()) {
            String value = node.labels().get(level.nodeLabel());
            missing |= value == null || value.isEmpty();
            domains.add(missing ? "" : value);
        }
        return domains;
    }

    /** Where the node is: level to domain, broadest first, for as many levels as it has labels for. */
    public Map<String, String> placeOf(NodeInfo node) {
        Map<String, String> place = new LinkedHashMap<>();
        List<String> domains = domainsOf(node);
        for (int i = 0; i < domains.size() && !domains.get(i).isEmpty(); i++) {
            place.put(spec.levels().get(i).name(), domains.get(i));
        }
        return place;
    }

    /**
     * What a placement asks of the scheduler ({@code null}: nothing). A level the topology does not have (it changed
     * since the job was applied) is one no node is in: such a group waits, saying so, until the topology has it again.
     */
    Locality localityOf(PlacementSpec placement) {
        if (placement == null) {
            return null;
        }
        boolean required = placement.mode() == PlacementSpec.Mode.Required;
        int level = spec == null ? -1 : spec.levelOf(placement.level());
        int sliceLevel = placement.sliceLevel() == null || spec == null ? -1 : spec.levelOf(placement.sliceLevel());
        boolean sliced = placement.sliceSize() != null;
        if (level < 0 || (sliced && sliceLevel < level)) {
            // Preferred asks for nothing that could not be: anywhere. Required, or slices, wait, saying the level is gone.
            String gone = level < 0 ? placement.level() + " (not a level of the cluster's topology)"
                    : placement.sliceLevel() + " (not a level of the cluster's topology at or below " + placement.level() + ")";
            return required || sliced ? new Locality(levels().size(), gone, true) : null;
        }
        return sliced ? new Locality(level, placement.level(), required, placement.sliceSize(), sliceLevel, placement.sliceLevel())
                : new Locality(level, placement.level(), required);
    }

    /**
     * Every level a node group's placement names that the topology does not have, by field below {@code spec}
     * ({@code nodeGroups[1].placement.level}) and why.
     */
    public java.util.Map<String, String> placementProblems(io.slipstream.api.spec.JobSpec job) {
        java.util.Map<String, String> problems = new LinkedHashMap<>();
        for (int i = 0; i < job.nodeGroups().size(); i++) {
            PlacementSpec placement = job.nodeGroups().get(i).placement();
            if (placement == null) {
                continue;
            }
            String field = "nodeGroups[" + i + "].placement.";
            if (!levels().contains(placement.level())) {
                problems.put(field + "level", levels().isEmpty()
                        ? "the cluster has no topology: an admin applies a Topology naming its levels first (docs/topology.md)"
                        : "'" + placement.level() + "' is not a level of the cluster's topology (" + String.join(", ", levels()) + ")");
            } else if (placement.sliceLevel() != null && !levels().contains(placement.sliceLevel())) {
                problems.put(field + "sliceLevel", "'" + placement.sliceLevel() + "' is not a level of the cluster's topology (" + String.join(", ", levels()) + ")");
            } else if (placement.sliceLevel() != null && levels().indexOf(placement.sliceLevel()) < levels().indexOf(placement.level())) {
                problems.put(field + "sliceLevel", "'" + placement.sliceLevel() + "' is broader than the group's level (" + placement.level()
                        + "): a slice is a part of the group's domain, at its level or a narrower one (" + String.join(", ",
                        levels().subList(levels().indexOf(placement.level()), levels().size())) + ")");
            }
        }
        return problems;
    }
}
