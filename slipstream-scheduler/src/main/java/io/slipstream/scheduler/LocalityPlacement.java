package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.Comparator;
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
     * Whether some group must be in one domain or in slices: a gang that may go anywhere otherwise (its groups
     * Preferred, if any) is held nodes, kept whole nodes and moved for as any gang is.
     */
    static boolean binds(List<InstanceRequest> instances) {
        for (int i = 0; i < instances.size(); i++) {
            Locality locality = instances.get(i).locality();
            if (locality != null && (locality.required() || locality.sliced())) {
                return true;
            }
        }
        return false;
    }

    /** The run with each Preferred group made Required (the same run if it has none): compact, if that can be had. */
    static PendingRun asRequired(PendingRun run) {
        boolean any = false;
        for (InstanceRequest instance : run.instances()) {
            any |= instance.locality() != null && !instance.locality().required();
        }
        if (!any) {
            return run;
        }
        List<InstanceRequest> compact = new ArrayList<>(run.instances().size());
        for (InstanceRequest r : run.instances()) {
            Locality l = r.locality();
            compact.add(l == null || l.required() ? r
                    : new InstanceRequest(r.rank(), r.nodeGroup(), r.resources(), new Locality(l.level(), l.levelName(), true, l.sliceSize(), l.sliceLevel(),
                            l.sliceLevelName())));
        }
        return new PendingRun(run.id(), run.quota(), run.idleMode(), run.priority(), run.createdAt(), compact, run.reclaimed());
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

    List<Placement> placeGroup(List<InstanceRequest> group, Set<String> models, QuotaId pin, Set<String> only) {
        Locality locality = group.get(0).locality();
        int last = locality.required() ? locality.level() : -1; // -1: anywhere
        for (int level = locality.level(); level >= last; level--) {
            List<Placement> placed = level < 0 ? fill(group, only == null ? null : candidates(only), models, pin)
                    : inOneDomain(group, level, models, pin, only);
            if (placed != null) {
                return inTopologyOrder(placed, group);
            }
        }
        return null;
    }

    /** The group in the first domain of {@code level} (fewest free GPUs first) that holds it, or {@code null}. */
    private List<Placement> inOneDomain(List<InstanceRequest> group, int level, Set<String> models, QuotaId pin, Set<String> only) {
        for (List<WorkingNode> nodes : roomyDomains(need(group), level, only == null ? null : candidates(only))) {
            try (Tentative trial = cluster.tentative()) {
                List<Placement> placed = fill(group, nodes, models, pin);
                if (placed != null) {
                    trial.commit();
                    return placed;
                }
            }
        }
        return null;
    }

    /**
     * Places the group on {@code nodes} ({@code null}: anywhere), in its slices if it has some: each slice, in rank
     * order, in the first domain of the slice level among the nodes that holds it (fewest free GPUs first, as for
     * groups); {@code null} if one fits nowhere (the caller's tentative undoes the rest).
     */
    private List<Placement> fill(List<InstanceRequest> group, List<WorkingNode> nodes, Set<String> models, QuotaId pin) {
        Locality locality = group.get(0).locality();
        if (!locality.sliced()) {
            return onNodes(group, nodes, models, pin);
        }
        List<InstanceRequest> byRank = new ArrayList<>(group);
        byRank.sort(Comparator.comparingInt(InstanceRequest::rank));
        List<Placement> placements = new ArrayList<>(group.size());
        for (int from = 0; from < byRank.size(); from += locality.sliceSize()) {
            List<InstanceRequest> slice = byRank.subList(from, Math.min(byRank.size(), from + locality.sliceSize()));
            List<Placement> placed = null;
            for (List<WorkingNode> domain : roomyDomains(need(slice), locality.sliceLevel(), nodes)) {
                try (Tentative trial = cluster.tentative()) {
                    placed = onNodes(slice, domain, models, pin);
                    if (placed != null) {
                        trial.commit();
                        break;
                    }
                }
            }
            if (placed == null) {
                return null;
            }
            placements.addAll(placed);
        }
        return placements;
    }

    /** What the instances ask, in all. */
    static Amount need(List<InstanceRequest> instances) {
        Amount need = new Amount();
        instances.forEach(r -> need.add(r.resources(), 1));
        return need;
    }

    /**
     * The domains of {@code level} whose free capacity adds up to {@code need}, fewest free GPUs first; of the whole
     * cluster, or only of {@code subset}'s nodes (a domain of a broader level, or where a run's victims are).
     */
    private List<List<WorkingNode>> roomyDomains(Amount need, int level, List<WorkingNode> subset) {
        List<Domains.Domain> candidates = new ArrayList<>();
        for (Domains.Domain domain : subset == null ? cluster.domainsAt(level) : Domains.among(subset, level)) {
            if (domain.freeCovers(need)) {
                candidates.add(domain);
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
    List<Placement> onNodes(List<InstanceRequest> instances, List<WorkingNode> nodes, Set<String> models, QuotaId pin) {
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
        sorted.sort(Comparator.comparing((Placement p) -> cluster.node(p.node()), LocalityPlacement::topologyOrder)
                .thenComparingInt(Placement::rank));
        List<Placement> ordered = new ArrayList<>(sorted.size());
        for (int i = 0; i < sorted.size(); i++) {
            ordered.add(new Placement(ranks.get(i), sorted.get(i).node(), sorted.get(i).gpus()));
        }
        return ordered;
    }

    /**
     * Nodes in topology order: by domain, level by level from the broadest (a node in no domain of a level after
     * those that are), then by name. Each domain's nodes are then together, at every level, and so are a slice's.
     */
    static int topologyOrder(WorkingNode a, WorkingNode b) {
        int levels = Math.max(a.domainPaths.length, b.domainPaths.length);
        for (int level = 0; level < levels; level++) {
            String x = a.domainAt(level);
            String y = b.domainAt(level);
            if (x == null || y == null) {
                if (x != y) {
                    return x == null ? 1 : -1;
                }
                break; // neither is in one here, nor below
            }
            int order = x.compareTo(y);
            if (order != 0) {
                return order;
            }
        }
        return a.name.compareTo(b.name);
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
