package io.slipstream.executor.slurm;

import io.slipstream.api.label.Labels;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where each node is in Slurm's network tree ({@code topology.conf}, {@code TopologyPlugin=topology/tree}), as node
 * labels that a Topology document's levels name: a node under switch {@code leaf1} at level 0 (the switches nodes hang
 * off) and {@code spine} at level 1 carries {@code topology.slurm.slipstream.io/switch-level-0: leaf1} and
 * {@code topology.slurm.slipstream.io/switch-level-1: spine} (docs/slurm.md, Topology). Read from
 * {@code scontrol show topology}, whose every switch lists all the nodes below it. Pure.
 */
final class SlurmTopology {
    /** The label of a node's switch at level {@code n}: {@code topology.slurm.slipstream.io/switch-level-<n>}. */
    static final String LABEL = "topology.slurm.slipstream.io/switch-level-";
    private static final Pattern FIELD = Pattern.compile("(\\w+)=(\\S*)");
    /** One bracket group of a hostlist: {@code [01-03,07]}. */
    private static final Pattern BRACKETS = Pattern.compile("\\[([^\\[\\]]*)]");
    /** More names than this from one hostlist expression is not a node list: it is refused. */
    private static final int MAX_NAMES = 100_000;

    private SlurmTopology() {
    }

    /**
     * Each node's labels from {@code scontrol show topology}'s output (empty without a topology); a switch whose name is
     * no label value, or a line not understood, is left out and said through {@code why}.
     */
    static Map<String, Map<String, String>> labels(String output, Consumer<String> why) {
        Map<String, Map<String, String>> byNode = new TreeMap<>();
        for (String line : output.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            Map<String, String> fields = new LinkedHashMap<>();
            Matcher field = FIELD.matcher(line);
            while (field.find()) {
                fields.put(field.group(1), field.group(2));
            }
            String name = fields.get("SwitchName");
            String level = fields.get("Level");
            if (name == null || level == null || !level.matches("\\d{1,2}")) {
                why.accept("a line of scontrol show topology is not understood and is left out: " + SlurmHandles.printable(line));
                continue;
            }
            if (Labels.valueProblem(name) != null) {
                why.accept("switch " + SlurmHandles.printable(name) + " of Slurm's topology is left out: its name is not a label value ("
                        + Labels.valueProblem(name) + ")");
                continue;
            }
            List<String> nodes;
            try {
                nodes = fields.containsKey("Nodes") ? expand(fields.get("Nodes")) : List.of();
            } catch (IllegalArgumentException e) {
                why.accept("the nodes of switch " + name + " are not understood and the switch is left out: " + e.getMessage());
                continue;
            }
            String key = LABEL + Integer.parseInt(level);
            for (String node : nodes) {
                String other = byNode.computeIfAbsent(node, n -> new TreeMap<>()).putIfAbsent(key, name);
                if (other != null && !other.equals(name)) {
                    why.accept("node " + node + " is under two switches at level " + level + " (" + other + ", " + name + "): " + other + " is taken");
                }
            }
        }
        return byNode;
    }

    /**
     * The names of a Slurm hostlist expression: {@code node[01-03,07],gpu1,rack[1-2]-n[1-2]} (ranges keep the width of
     * their first bound; several bracket groups multiply).
     *
     * @throws IllegalArgumentException if it is not one, or names more than {@value #MAX_NAMES}
     */
    static List<String> expand(String hostlist) {
        List<String> names = new ArrayList<>();
        for (String item : splitOutsideBrackets(hostlist)) {
            if (!item.isEmpty()) {
                expandItem(item, names);
            }
        }
        return names;
    }

    private static List<String> splitOutsideBrackets(String hostlist) {
        List<String> items = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < hostlist.length(); i++) {
            char c = hostlist.charAt(i);
            if (c == '[') {
                depth++;
            } else if (c == ']') {
                depth--;
            }
            if (depth < 0 || depth > 1) {
                throw new IllegalArgumentException("unbalanced brackets in " + SlurmHandles.printable(hostlist));
            }
            if (c == ',' && depth == 0) {
                items.add(hostlist.substring(start, i));
                start = i + 1;
            }
        }
        if (depth != 0) {
            throw new IllegalArgumentException("unbalanced brackets in " + SlurmHandles.printable(hostlist));
        }
        items.add(hostlist.substring(start));
        return items;
    }

    private static void expandItem(String item, List<String> names) {
        Matcher group = BRACKETS.matcher(item);
        if (!group.find()) {
            if (item.indexOf('[') >= 0 || item.indexOf(']') >= 0) {
                throw new IllegalArgumentException("unbalanced brackets in " + SlurmHandles.printable(item));
            }
            add(names, item);
            return;
        }
        String before = item.substring(0, group.start());
        String after = item.substring(group.end());
        for (String range : group.group(1).split(",", -1)) {
            String[] bounds = range.split("-", -1);
            if (bounds.length > 2 || !bounds[0].matches("\\d{1,9}") || (bounds.length == 2 && !bounds[1].matches("\\d{1,9}"))) {
                throw new IllegalArgumentException("not a range of numbers: [" + SlurmHandles.printable(group.group(1)) + "]");
            }
            long low = Long.parseLong(bounds[0]);
            long high = bounds.length == 2 ? Long.parseLong(bounds[1]) : low;
            if (high < low || high - low >= MAX_NAMES) {
                throw new IllegalArgumentException("not a range: " + range);
            }
            for (long n = low; n <= high; n++) {
                expandItem(before + String.format("%0" + bounds[0].length() + "d", n) + after, names);
            }
        }
    }

    private static void add(List<String> names, String name) {
        if (names.size() >= MAX_NAMES) {
            throw new IllegalArgumentException("more than " + MAX_NAMES + " names");
        }
        names.add(name);
    }
}
