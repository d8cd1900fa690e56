package io.slipstream.executor;

import io.slipstream.api.problem.Problems;
import io.slipstream.api.spec.FieldReader;
import io.slipstream.api.spec.Names;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.SpecReader;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import tools.jackson.databind.JsonNode;

/**
 * The {@code nodes:} list of the config file, as executors with declared nodes read it (local, simulated): each item
 * one node ({@code name}) or {@code count} nodes {@code <namePrefix>-1..count}, each with {@code cpu}, {@code memory},
 * {@code gpu}, {@code gpuModel} and {@code labels}. One reader, so that the same declaration means the same nodes
 * whichever executor reads it; an executor reads the fields of its own ({@link Extras}).
 */
public final class NodeDeclarations {
    /** At most this many nodes in all (a simulated cluster of thousands is declared with a few {@code count}s). */
    public static final int MAX_NODES = 100_000;

    /** Fields of one declaration that only some executors know (the local executor's {@code gpuDevices}). */
    public interface Extras {
        /**
         * Reads the executor's own fields of {@code node} (every problem to {@code node}'s problems, by field path).
         *
         * @param capacity what the declaration gives each node ({@code null} when it is invalid)
         * @param count    its {@code count} ({@code null}: one node)
         * @return what to make of each node it declares (the identity: nothing)
         */
        UnaryOperator<NodeInfo> read(FieldReader node, Resources capacity, Long count);

        /** No fields of its own. */
        Extras NONE = (node, capacity, count) -> UnaryOperator.identity();
    }

    private NodeDeclarations() {
    }

    /**
     * The nodes of {@code config}'s list field {@code field} (it must be a list), {@code null} when it is absent;
     * every problem is added to {@code config}'s problems, with its field path.
     */
    public static List<NodeInfo> read(FieldReader config, String field, Extras extras) {
        Problems problems = config.problems();
        String path = config.pathOf(field);
        JsonNode value = config.get(field);
        if (value == null) {
            return null;
        }
        if (!value.isArray()) {
            problems.add(path, "must be a list of node declarations");
            return null;
        }
        List<JsonNode> items = config.array(field, false, 10_000);
        if (items == null) {
            return null; // too many: said by array()
        }
        List<NodeInfo> nodes = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < items.size(); i++) {
            FieldReader node = FieldReader.of(items.get(i), path + "[" + i + "]", problems);
            String name = node.string("name", false, 63);
            String prefix = node.string("namePrefix", false, 50);
            Long count = node.integer("count", false, 1, MAX_NODES);
            Resources capacity = readCapacity(node, problems);
            UnaryOperator<NodeInfo> complete = extras.read(node, capacity, count);
            Map<String, String> labels = new LinkedHashMap<>();
            var entries = node.entries("labels", false, 64);
            if (entries != null) {
                entries.forEach(e -> labels.put(e.getKey(), e.getValue().asString()));
            }
            List<Spread> spreads = readSpreads(node, problems);
            node.finish();
            if (!spreads.isEmpty() && count == null) {
                problems.add(node.pathOf("spread"), "spreads the nodes of a namePrefix and count: a single node takes its place from its labels");
                continue;
            }
            if (name == null && prefix == null) {
                problems.add(node.pathOf("name"), "give a name, or a namePrefix and a count");
                continue;
            }
            if (name != null && (prefix != null || count != null)) {
                problems.add(node.pathOf("name"), "give either name, or namePrefix with count, not both");
                continue;
            }
            if (capacity == null) {
                continue;
            }
            List<String> nodeNames = new ArrayList<>();
            if (name != null) {
                nodeNames.add(name);
            } else {
                for (int k = 1; k <= (count == null ? 1 : count); k++) {
                    nodeNames.add(prefix + "-" + k);
                }
            }
            int first = nodes.size();
            if (nodes.size() + nodeNames.size() > MAX_NODES) {
                problems.add(node.pathOf("count"), "would make more than " + MAX_NODES + " nodes in all");
                break;
            }
            for (String nodeName : nodeNames) {
                String problem = Names.dnsLabelProblem(nodeName);
                if (problem != null) {
                    problems.add(node.pathOf(name != null ? "name" : "namePrefix"), problem);
                    break;
                }
                if (!names.add(nodeName)) {
                    problems.add(node.path(), "node " + nodeName + " is declared twice");
                    break;
                }
                nodes.add(complete.apply(new NodeInfo(nodeName, capacity, null, Spread.labels(labels, spreads, nodes.size() - first))));
            }
        }
        if (items.isEmpty()) {
            problems.add(path, "must declare at least one node");
        }
        return nodes;
    }

    /**
     * Nodes of a {@code count} spread over domains of a topology level ({@code spread: [{label:
     * topology.slipstream.io/rack, per: 4, prefix: rack}]}): nodes 1-4 get the label {@code rack-1}, 5-8 {@code rack-2},
     * and so on (docs/topology.md).
     */
    record Spread(String label, long per, String prefix) {
        static Map<String, String> labels(Map<String, String> declared, List<Spread> spreads, int index) {
            if (spreads.isEmpty()) {
                return declared;
            }
            Map<String, String> labels = new LinkedHashMap<>(declared);
            for (Spread spread : spreads) {
                labels.put(spread.label(), spread.prefix() + "-" + (index / spread.per() + 1));
            }
            return labels;
        }
    }

    private static List<Spread> readSpreads(FieldReader node, Problems problems) {
        List<JsonNode> items = node.array("spread", false, 8);
        List<Spread> spreads = new ArrayList<>();
        for (int i = 0; items != null && i < items.size(); i++) {
            FieldReader item = FieldReader.of(items.get(i), node.pathOf("spread") + "[" + i + "]", problems);
            String label = item.string("label", true, 317);
            Long per = item.integer("per", true, 1, MAX_NODES);
            String prefix = item.string("prefix", false, 40);
            item.finish();
            if (label != null && io.slipstream.api.label.Labels.keyProblem(label) != null) {
                problems.add(item.pathOf("label"), io.slipstream.api.label.Labels.keyProblem(label));
                continue;
            }
            String name = prefix != null ? prefix : label == null ? null : label.substring(label.indexOf('/') + 1);
            if (name != null && io.slipstream.api.label.Labels.valueProblem(name + "-" + MAX_NODES) != null) {
                problems.add(item.pathOf("prefix"), io.slipstream.api.label.Labels.valueProblem(name + "-" + MAX_NODES));
                continue;
            }
            if (label != null && per != null) {
                spreads.add(new Spread(label, per, name));
            }
        }
        return spreads;
    }

    private static Resources readCapacity(FieldReader node, Problems problems) {
        int before = problems.list().size();
        Long milliCpu = SpecReader.readCpu(node, true, 1, Long.MAX_VALUE / 2);
        Long memory = SpecReader.readMemory(node, true, 1, Long.MAX_VALUE / 2);
        Long gpu = node.integer("gpu", false, 0, 1024);
        String gpuModel = node.string("gpuModel", false, 128);
        if (gpu != null && gpu > 0 && gpuModel == null) {
            problems.add(node.pathOf("gpuModel"), "is required when the node has GPUs");
        }
        if (problems.list().size() > before || milliCpu == null || memory == null) {
            return null;
        }
        return new Resources(milliCpu, memory, gpu == null ? 0 : gpu.intValue(), gpuModel);
    }
}
