package io.slipstream.simulator.input;

import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.FieldReader;
import io.slipstream.api.spec.SpecReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;

/**
 * Reads the topology fields of an experiment: the cluster's levels ({@code cluster.topology}) and a policy's placement
 * rule ({@code policies[i].placement}). Every problem is added with its field path.
 */
final class TopologyFields {
    static final int MAX_LEVELS = 8;
    private static final Pattern LEVEL = Pattern.compile("[a-z]([-a-z0-9]{0,30}[a-z0-9])?");

    private TopologyFields() {
    }

    /** {@code topology: [{level: block, nodes: 32}, {level: rack, nodes: 4}]}, broadest first; empty when absent or bad. */
    static List<TopologyLevel> readLevels(FieldReader cluster) {
        Problems problems = cluster.problems();
        List<JsonNode> items = cluster.array("topology", false, MAX_LEVELS);
        if (items == null) {
            return List.of();
        }
        String path = cluster.pathOf("topology");
        if (items.isEmpty()) {
            problems.add(path, "must list at least one level, broadest first ([{level: block, nodes: 32}, {level: rack, nodes: 4}])");
        }
        int before = problems.list().size();
        List<TopologyLevel> levels = new ArrayList<>();
        Set<String> names = new HashSet<>();
        TopologyLevel broader = null;
        for (int i = 0; i < items.size(); i++) {
            FieldReader reader = FieldReader.of(items.get(i), path + "[" + i + "]", problems);
            String name = reader.string("level", true, 32);
            Long nodes = reader.integer("nodes", true, 1, ExperimentReader.MAX_NODES);
            reader.finish();
            if (name != null && (!LEVEL.matcher(name).matches() || name.equals("none"))) {
                // "none" is what the report calls a gang spread over the broadest domains.
                problems.add(reader.pathOf("level"), "must be lowercase letters, digits and '-', not 'none' (is '" + name + "')");
            } else if (name != null && !names.add(name)) {
                problems.add(reader.pathOf("level"), "'" + name + "' names two levels");
            }
            if (nodes != null && broader != null && broader.nodes() % nodes != 0) {
                // Otherwise a domain would straddle two of the broader level's, and a path would not name one place.
                problems.add(reader.pathOf("nodes"), "must divide the broader level's size (" + broader.name() + ": " + broader.nodes()
                        + " nodes), is " + nodes);
            }
            if (name != null && nodes != null) {
                broader = new TopologyLevel(name, nodes.intValue());
                levels.add(broader);
            }
        }
        return problems.list().size() > before ? List.of() : levels;
    }

    /**
     * {@code placement: {level: rack, mode: Preferred, minInstances: 2, fromTrace: false, waitAtMost: 1h}}, or {@code none}
     * (to turn off a rule of the defaults); {@code current} when absent.
     */
    static PlacementRule readRule(FieldReader policy, PlacementRule current, ClusterSpec cluster, Trace trace) {
        JsonNode node = policy.get("placement");
        if (node == null) {
            return current;
        }
        Problems problems = policy.problems();
        if (node.isString() && node.asString().equals("none")) {
            return null;
        }
        FieldReader reader = policy.object("placement", false);
        if (reader == null) {
            return current;
        }
        int before = problems.list().size();
        String level = reader.string("level", false, 32);
        String mode = reader.string("mode", false, 16);
        Long minInstances = reader.integer("minInstances", false, 1, CsvTrace.MAX_INSTANCES);
        Boolean fromTrace = reader.bool("fromTrace", false);
        Duration waitAtMost = SpecReader.readDuration(reader, "waitAtMost", Duration.ofMillis(1), ExperimentReader.MAX_DURATION);
        reader.finish();
        boolean takesTrace = Boolean.TRUE.equals(fromTrace);
        if (mode != null && !mode.equals("Required") && !mode.equals("Preferred")) {
            problems.add(reader.pathOf("mode"), "must be Required or Preferred, is '" + mode + "'");
        }
        if (waitAtMost != null && "Preferred".equals(mode)) {
            problems.add(reader.pathOf("waitAtMost"), "relaxes a Required placement to Preferred after a wait: give mode Required");
        }
        if (level == null && !takesTrace) {
            problems.add(reader.pathOf("level"), "is required (a level of cluster.topology), unless fromTrace: true");
        }
        if (cluster != null) {
            List<String> have = cluster.topology().stream().map(TopologyLevel::name).toList();
            if (have.isEmpty() && (level != null || takesTrace)) {
                problems.add(reader.pathOf(level != null ? "level" : "fromTrace"),
                        "the cluster has no topology: give cluster.topology ([{level: block, nodes: 32}, {level: rack, nodes: 4}])");
            } else if (level != null && !have.contains(level)) {
                problems.add(reader.pathOf("level"), "'" + level + "' is not a level of cluster.topology (have: " + String.join(", ", have) + ")");
            } else if (takesTrace && trace != null) {
                checkTraceLevels(trace, have, reader.pathOf("fromTrace"), problems);
            }
        }
        if (problems.list().size() > before) {
            return current;
        }
        return new PlacementRule(level, !"Preferred".equals(mode), minInstances == null ? 2 : minInstances.intValue(), takesTrace, waitAtMost);
    }

    /** The trace's placements name levels of the cluster's topology, and there is at least one. */
    private static void checkTraceLevels(Trace trace, List<String> have, String path, Problems problems) {
        Map<String, Integer> firstJobOf = new LinkedHashMap<>();
        for (TraceJob job : trace.jobs()) {
            if (job.placement() != null) {
                firstJobOf.putIfAbsent(job.placement().level(), job.index());
            }
        }
        if (firstJobOf.isEmpty()) {
            problems.add(path, "no job of the trace names a placement (a placement column, or trace.columns.placement)");
        }
        firstJobOf.forEach((level, job) -> {
            if (!have.contains(level)) {
                problems.add(path, "job " + job + " of the trace asks for level '" + level + "', not a level of cluster.topology (have: "
                        + String.join(", ", have) + ")");
            }
        });
    }
}
