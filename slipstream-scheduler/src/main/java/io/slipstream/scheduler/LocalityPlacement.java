package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Places a gang some of whose node groups have a {@link Locality}: each such group in one domain of its level
 * (Required), or in the tightest domain that holds it, climbing to broader levels, else anywhere (Preferred). Among the
 * domains that could hold a group, the one with the fewest free GPUs is tried first (best fit, as for nodes: roomy
 * domains stay whole for the gangs that need them); inside a domain, nodes best fit too. A group's ranks then follow the
 * topology (by domain path, then node), so that neighbours in rank are neighbours in the network. Groups without a
 * locality are placed as {@link WorkingCluster#placeGang} places any instance. Not thread-safe.
 */
final class LocalityPlacement {
    private final WorkingCluster cluster;
    /** {@link #neverFits} by shape of gang, this cycle. */
    private final Map<String, java.util.Optional<String>> never = new HashMap<>();

    LocalityPlacement(WorkingCluster cluster) {
        this.cluster = cluster;
    }

    /** Whether any instance has a locality (else the gang is placed as usual). */
    static boolean applies(List<InstanceRequest> instances) {
        for (int i = 0; i < instances.size(); i++) { // indexed: asked of every queued run, several times a cycle
            if (instances.get(i).locality() != null) {
                return true;
            }
        }
        return false;
    }

    /**
     * Places every instance or none. {@code only}: the nodes it may use ({@code null}: any schedulable node), as when a
     * run is placed where its victims are.
     */
    List<Placement> place(List<InstanceRequest> instances, Set<String> models, QuotaId pin, Set<String> only) {
        Map<String, List<InstanceRequest>> groups = new LinkedHashMap<>();
        List<InstanceRequest> anywhere = new ArrayList<>();
        for (InstanceRequest instance : instances) {
            if (instance.locality() == null) {
                anywhere.add(instance);
            } else {
                groups.computeIfAbsent(instance.nodeGroup(), g -> new ArrayList<>()).add(instance);
            }
        }
        // The groups with the fewest places to go first: Required before Preferred (which can go anywhere), then the
        // narrowest level, then the largest group. Groups are placed one after the other, without going back.
        List<List<InstanceRequest>> order = new ArrayList<>(groups.values());
        order.sort(Comparator.comparing((List<InstanceRequest> g) -> !g.get(0).locality().required())
                .thenComparing(Comparator.comparingInt((List<InstanceRequest> g) -> g.get(0).locality().level()).reversed())
                .thenComparing(Comparator.comparingInt((List<InstanceRequest> g) -> g.size()).reversed())
                .thenComparing(g -> g.get(0).nodeGroup()));
        List<Placement> placements = new ArrayList<>(instances.size());
        try (Tentative gang = cluster.tentative()) {
            for (List<InstanceRequest> group : order) {
                List<Placement> placed = placeGroup(group, models, pin, only);
                if (placed == null) {
                    return null;
                }
                placements.addAll(placed);
            }
            List<Placement> rest = onNodes(anywhere, only == null ? null : candidates(only), models, pin);
            if (rest == null) {
                return null;
            }
            placements.addAll(rest);
            gang.commit();
        }
        placements.sort(Comparator.comparingInt(Placement::rank));
        return placements;
    }

    private List<Placement> placeGroup(List<InstanceRequest> group, Set<String> models, QuotaId pin, Set<String> only) {
        Locality locality = group.get(0).locality();
        int last = locality.required() ? locality.level() : -1; // -1: anywhere
        for (int level = locality.level(); level >= last; level--) {
            List<Placement> placed = level < 0 ? onNodes(group, only == null ? null : candidates(only), models, pin)
                    : inOneDomain(group, level, models, pin, only);
            if (placed != null) {
                return inTopologyOrder(placed, group);
            }
        }
        return null;
    }

    /** The group in the first domain of {@code level} (fewest free GPUs first) that holds it, or {@code null}. */
    private List<Placement> inOneDomain(List<InstanceRequest> group, int level, Set<String> models, QuotaId pin, Set<String> only) {
        for (List<WorkingNode> nodes : roomyDomains(group, level, only)) {
            try (Tentative trial = cluster.tentative()) {
                List<Placement> placed = onNodes(group, nodes, models, pin);
                if (placed != null) {
                    trial.commit();
                    return placed;
                }
            }
        }
        return null;
    }

    /** The domains of {@code level} whose free capacity adds up to what the group asks, fewest free GPUs first. */
    private List<List<WorkingNode>> roomyDomains(List<InstanceRequest> group, int level, Set<String> only) {
        Amount need = new Amount();
        group.forEach(r -> need.add(r.resources(), 1));
        List<Domains.Domain> candidates = new ArrayList<>();
        if (only == null) {
            for (Domains.Domain domain : cluster.domainsAt(level)) {
                if (domain.freeCovers(need)) {
                    candidates.add(domain);
                }
            }
        } else {
            // Only some nodes (where a run's victims are): their own totals, on the few domains they are in.
            Map<String, Domains.Domain> partial = new TreeMap<>();
            for (WorkingNode node : candidates(only)) {
                Domains.Domain domain = level < node.domains.length ? node.domains[level] : null;
                if (domain != null) {
                    Domains.Domain mine = partial.computeIfAbsent(domain.path, Domains.Domain::new);
                    mine.nodes.add(node);
                    mine.freeMilliCpu += Math.max(0, node.freeMilliCpu);
                    mine.freeMemory += Math.max(0, node.freeMemory);
                    mine.freeGpus += node.freeGpuCount();
                }
            }
            for (Domains.Domain domain : partial.values()) {
                if (domain.freeCovers(need)) {
                    candidates.add(domain);
                }
            }
        }
        candidates.sort(Comparator.comparingLong((Domains.Domain d) -> d.freeGpus).thenComparingLong(d -> d.freeMilliCpu)
                .thenComparing(d -> d.path));
        List<List<WorkingNode>> nodes = new ArrayList<>(candidates.size());
        candidates.forEach(d -> nodes.add(d.nodes));
        return nodes;
    }

    /**
     * Places each instance, largest first, on the best-fit node among {@code nodes} ({@code null}: the cluster's own
     * best fit, which keeps its preferences); {@code null} if one fits nowhere (the caller's tentative undoes the rest).
     */
    private List<Placement> onNodes(List<InstanceRequest> instances, List<WorkingNode> nodes, Set<String> models, QuotaId pin) {
        List<Placement> placements = new ArrayList<>(instances.size());
        for (InstanceRequest instance : WorkingCluster.largestFirst(instances)) {
            WorkingNode best = null;
            if (nodes == null) {
                best = cluster.bestFit(instance.resources(), models, pin);
            } else {
                for (WorkingNode node : nodes) {
                    if (cluster.mayTake(node, instance.resources(), models)
                            && (best == null || node.freeGpuCount() < best.freeGpuCount() || (node.freeGpuCount() == best.freeGpuCount() && node.index < best.index))) {
                        best = node;
                    }
                }
            }
            if (best == null) {
                return null;
            }
            placements.add(new Placement(instance.rank(), best.name, cluster.take(best, instance.resources(), pin)));
        }
        return placements;
    }

    /**
     * The group's ranks in topology order: its placements sorted by their node's narrowest domain path, then node name,
     * take the group's ranks in ascending order. Only where every instance of the group asks the same (they are then
     * interchangeable), which a node group's instances do.
     */
    private List<Placement> inTopologyOrder(List<Placement> placed, List<InstanceRequest> group) {
        Resources first = group.get(0).resources();
        if (group.stream().anyMatch(r -> !r.resources().equals(first))) {
            return placed;
        }
        List<Integer> ranks = group.stream().map(InstanceRequest::rank).sorted().toList();
        List<Placement> sorted = new ArrayList<>(placed);
        sorted.sort(Comparator.comparing((Placement p) -> narrowestPath(cluster.node(p.node())), Comparator.nullsLast(Comparator.naturalOrder()))
                .thenComparing(Placement::node).thenComparingInt(Placement::rank));
        List<Placement> ordered = new ArrayList<>(sorted.size());
        for (int i = 0; i < sorted.size(); i++) {
            ordered.add(new Placement(ranks.get(i), sorted.get(i).node(), sorted.get(i).gpus()));
        }
        return ordered;
    }

    private static String narrowestPath(WorkingNode node) {
        for (int level = node.domainPaths.length - 1; level >= 0; level--) {
            if (node.domainPaths[level] != null) {
                return node.domainPaths[level];
            }
        }
        return null;
    }

    /**
     * Why the gang does not fit as its topology asks, when that is why (it would fit now without it): the first group
     * that must be in one domain and fits in none now, with how many of its instances the roomiest domain holds;
     * {@code null} otherwise.
     */
    String miss(List<InstanceRequest> instances, Set<String> models) {
        List<InstanceRequest> anywhere = instances.stream().map(r -> new InstanceRequest(r.rank(), r.nodeGroup(), r.resources())).toList();
        try (Tentative trial = cluster.tentative()) {
            if (cluster.placeGang(anywhere, models) == null) {
                return null; // it does not fit at all now: not the topology's doing
            }
        }
        Map<String, List<InstanceRequest>> groups = new TreeMap<>();
        for (InstanceRequest instance : instances) {
            if (instance.locality() != null && instance.locality().required()) {
                groups.computeIfAbsent(instance.nodeGroup(), g -> new ArrayList<>()).add(instance);
            }
        }
        for (List<InstanceRequest> group : groups.values()) {
            Locality locality = group.get(0).locality();
            // The domains that could hold the most by their free totals first; one that could not hold more than the
            // best so far is not tried (a cluster has hundreds of racks, and this runs for each gang that waits).
            long leastGpus = Long.MAX_VALUE;
            long leastCpu = Long.MAX_VALUE;
            long leastMemory = Long.MAX_VALUE;
            for (InstanceRequest r : group) { // the least of each, that the bound is one
                leastGpus = Math.min(leastGpus, r.resources().gpu());
                leastCpu = Math.min(leastCpu, r.resources().milliCpu());
                leastMemory = Math.min(leastMemory, r.resources().memoryBytes());
            }
            record Bound(Domains.Domain domain, int most) {
            }
            List<Bound> bounds = new ArrayList<>();
            for (Domains.Domain domain : cluster.domainsAt(locality.level())) {
                int most = Math.min(group.size(), Math.min(fitting(domain.freeGpus, leastGpus),
                        Math.min(fitting(domain.freeMilliCpu, leastCpu), fitting(domain.freeMemory, leastMemory))));
                if (most > 0) {
                    bounds.add(new Bound(domain, most));
                }
            }
            bounds.sort(Comparator.comparingInt(Bound::most).reversed().thenComparing(b -> b.domain().path));
            int most = 0;
            String where = null;
            for (Bound bound : bounds) {
                if (bound.most() <= most) {
                    break;
                }
                int held = held(group, bound.domain().nodes, models);
                if (held == group.size()) {
                    most = -1;
                    break;
                }
                if (held > most) {
                    most = held;
                    where = bound.domain().path;
                }
            }
            if (most >= 0) {
                return "no " + locality.levelName() + " has room for the " + group.size() + " instances of node group " + group.get(0).nodeGroup()
                        + " together (placement Required)" + (where == null ? ", nor for one of them" : "; the roomiest, " + where + ", for " + most);
            }
        }
        return null;
    }

    /** How many of {@code each} fit in {@code free} (as many as asked for when each needs none). */
    private static int fitting(long free, long each) {
        return each <= 0 ? Integer.MAX_VALUE : (int) Math.min(Integer.MAX_VALUE, Math.max(0, free) / each);
    }

    /**
     * Why the gang could never be placed as its topology asks, whatever ends: a group that must be in one domain of a
     * level no domain of which could hold it even empty (or no node is in any: the level is gone); {@code null} if
     * some domain could. What the group's instances would need of GPU models is not looked at: at worst the run waits.
     */
    String neverFits(List<InstanceRequest> instances) {
        // What nodes have does not change in a cycle: one answer per shape of gang. The instances in their order make
        // the key: equal keys are equal gangs (the same gang listed otherwise only costs a second computation).
        StringBuilder shape = new StringBuilder();
        for (int i = 0; i < instances.size(); i++) {
            InstanceRequest r = instances.get(i);
            Resources need = r.resources();
            shape.append(r.nodeGroup()).append('\0').append(need.milliCpu()).append(',').append(need.memoryBytes()).append(',').append(need.gpu())
                    .append(',').append(need.gpuModel()).append(',').append(r.locality()).append('\0');
        }
        return never.computeIfAbsent(shape.toString(), s -> java.util.Optional.ofNullable(neverFitsNow(instances))).orElse(null);
    }

    private String neverFitsNow(List<InstanceRequest> instances) {
        Map<String, List<InstanceRequest>> groups = new TreeMap<>();
        for (InstanceRequest instance : instances) {
            if (instance.locality() != null && instance.locality().required()) {
                groups.computeIfAbsent(instance.nodeGroup(), g -> new ArrayList<>()).add(instance);
            }
        }
        for (List<InstanceRequest> group : groups.values()) {
            Locality locality = group.get(0).locality();
            List<Domains.Domain> domains = cluster.domainsAt(locality.level());
            if (domains.isEmpty()) {
                return "no schedulable node is in a " + locality.levelName() + ", so node group " + group.get(0).nodeGroup()
                        + " (placement Required) cannot be placed";
            }
            Amount need = new Amount();
            group.forEach(r -> need.add(r.resources(), 1));
            boolean some = false;
            for (Domains.Domain domain : domains) {
                Amount capacity = domain.capacity;
                if (capacity.milliCpu >= need.milliCpu && capacity.memory >= need.memory && capacity.gpu >= need.gpu
                        && group.stream().allMatch(r -> domain.nodes.stream().anyMatch(n -> n.couldEverFit(r.resources())))) {
                    some = true;
                    break;
                }
            }
            if (!some) {
                return "no " + locality.levelName() + " could ever hold the " + group.size() + " instances of node group " + group.get(0).nodeGroup()
                        + " together (placement Required): each is smaller, even empty";
            }
        }
        return null;
    }

    /** What of a gang's placement a per-cycle cache of its shape must tell apart: its groups' localities ("" for none). */
    static String key(List<InstanceRequest> instances) {
        if (!applies(instances)) {
            return "";
        }
        Map<String, Locality> byGroup = new TreeMap<>();
        instances.forEach(r -> byGroup.putIfAbsent(r.nodeGroup(), r.locality()));
        return ":" + byGroup;
    }

    /** How many of the group's instances the nodes hold now, placed one by one (and given back). */
    private int held(List<InstanceRequest> group, List<WorkingNode> nodes, Set<String> models) {
        try (Tentative trial = cluster.tentative()) {
            int held = 0;
            for (InstanceRequest instance : WorkingCluster.largestFirst(group)) {
                if (onNodes(List.of(instance), nodes, models, null) != null) {
                    held++;
                }
            }
            return held;
        }
    }

    private List<WorkingNode> candidates(Set<String> names) {
        List<WorkingNode> found = new ArrayList<>();
        for (String name : new java.util.TreeSet<>(names)) {
            WorkingNode node = cluster.node(name);
            if (node != null && node.schedulable) {
                found.add(node);
            }
        }
        return found;
    }
}
