package io.slipstream.scheduler;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The topology's domains of the schedulable nodes, level by level, each with its nodes and what is free on them
 * in total: a gang that must be in one rack looks at racks, not at every node. Kept as {@link NodeBuckets} is: a node
 * {@link #leave}s its domains' totals before it changes and {@link #join}s them after, so the totals are always the
 * sums of their nodes' free capacity (negative free cpu or memory counts as none). Not thread-safe.
 */
final class Domains {
    /** One domain: its path ({@code b1/r2}), its schedulable nodes in name order, and their free capacity in total. */
    static final class Domain {
        final String path;
        final List<WorkingNode> nodes = new ArrayList<>();
        /** Of its nodes' capacities, for what could ever fit. */
        final Amount capacity = new Amount();
        long freeMilliCpu;
        long freeMemory;
        long freeGpus;

        Domain(String path) {
            this.path = path;
        }

        /** Whether what is free here adds up to {@code need} (a necessary condition only: nodes are separate). */
        boolean freeCovers(Amount need) {
            return freeMilliCpu >= need.milliCpu && freeMemory >= need.memory && freeGpus >= need.gpu;
        }
    }

    /** By level, broadest first: the domains in path order. */
    private final List<List<Domain>> levels = new ArrayList<>();

    /** Indexes the schedulable nodes that have a place (their {@link WorkingNode#domains} are set here). */
    Domains(List<WorkingNode> nodes) {
        List<Map<String, Domain>> byPath = new ArrayList<>();
        for (WorkingNode node : nodes) {
            if (!node.schedulable) {
                continue;
            }
            for (int level = 0; level < node.domainPaths.length && node.domainPaths[level] != null; level++) {
                while (byPath.size() <= level) {
                    byPath.add(new TreeMap<>());
                }
                Domain domain = byPath.get(level).computeIfAbsent(node.domainPaths[level], Domain::new);
                domain.nodes.add(node);
                domain.capacity.add(node.capacity, 1);
                node.domains[level] = domain;
            }
        }
        for (Map<String, Domain> level : byPath) {
            levels.add(List.copyOf(level.values()));
        }
        nodes.forEach(this::join);
    }

    /**
     * The domains of {@code level} among some nodes only (a domain of a broader level, where a run's victims are): each
     * with those of its nodes and their free totals, in path order. Not kept: read once, where it is built.
     */
    static List<Domain> among(List<WorkingNode> nodes, int level) {
        Map<String, Domain> byPath = new TreeMap<>();
        for (WorkingNode node : nodes) {
            Domain domain = level < node.domains.length ? node.domains[level] : null;
            if (domain != null) {
                Domain mine = byPath.computeIfAbsent(domain.path, Domain::new);
                mine.nodes.add(node);
                mine.freeMilliCpu += Math.max(0, node.freeMilliCpu);
                mine.freeMemory += Math.max(0, node.freeMemory);
                mine.freeGpus += node.freeGpuCount();
            }
        }
        return List.copyOf(byPath.values());
    }

    /** The domains of {@code level}, in path order (none: no schedulable node is in one). */
    List<Domain> at(int level) {
        return level < levels.size() ? levels.get(level) : Collections.emptyList();
    }

    /** Takes the node's free capacity out of its domains' totals, before it changes. */
    void leave(WorkingNode node) {
        add(node, -1);
    }

    /** Adds the node's free capacity to its domains' totals, after it changed. */
    void join(WorkingNode node) {
        add(node, 1);
    }

    private static void add(WorkingNode node, int sign) {
        Domain[] domains = node.domains;
        if (domains.length == 0 || domains[0] == null) {
            return;
        }
        long cpu = sign * Math.max(0, node.freeMilliCpu);
        long memory = sign * Math.max(0, node.freeMemory);
        long gpus = sign * (long) node.freeGpuCount();
        for (Domain domain : domains) {
            if (domain == null) {
                return;
            }
            domain.freeMilliCpu += cpu;
            domain.freeMemory += memory;
            domain.freeGpus += gpus;
        }
    }

    /** Each domain's free totals, for tests that check a rollback puts them back. */
    String contents() {
        StringBuilder out = new StringBuilder();
        for (List<Domain> level : levels) {
            for (Domain domain : level) {
                out.append("domain ").append(domain.path).append(": cpu ").append(domain.freeMilliCpu).append(", memory ").append(domain.freeMemory)
                        .append(", gpus ").append(domain.freeGpus).append('\n');
            }
        }
        return out.toString();
    }
}
