package io.slipstream.scheduler;

import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Why a gang placed by topology waits ({@link #miss}), or could never be placed ({@link #neverFits}): the reasons a
 * user reads, naming the domain that came closest. Not thread-safe.
 */
final class LocalityReasons {
    private final WorkingCluster cluster;
    private final LocalityPlacement placement;
    /** {@link #neverFits} by shape of gang, for as long as the state lives (its nodes' capacities never change in it). */
    private final Map<String, Optional<String>> never = new HashMap<>();

    LocalityReasons(WorkingCluster cluster, LocalityPlacement placement) {
        this.cluster = cluster;
        this.placement = placement;
    }

    /**
     * Why the gang does not fit as its topology asks, when that is why (it would fit now without it): the first group
     * that must be in one domain and fits in none now, with how many of its instances the roomiest domain holds, or
     * whose slices find no room; {@code null} otherwise.
     */
    String miss(List<InstanceRequest> instances, Set<String> models) {
        List<InstanceRequest> anywhere = instances.stream().map(r -> new InstanceRequest(r.rank(), r.nodeGroup(), r.resources())).toList();
        try (Tentative trial = cluster.tentative()) {
            if (cluster.placeGang(anywhere, models) == null) {
                return null; // it does not fit at all now: not the topology's doing
            }
        }
        for (List<InstanceRequest> group : constrained(instances).values()) {
            Locality locality = group.get(0).locality();
            String why = locality.required() ? roomiest(group, models) : null;
            if (why == null && locality.sliced() && !placesAlone(group, models)) {
                why = (locality.required() ? "no " + locality.levelName() + " has room for " : "there is no room for ") + "the " + group.size()
                        + " instances of node group " + group.get(0).nodeGroup() + " in slices of " + locality.sliceSize() + " that each share a "
                        + locality.sliceLevelName() + " (placement" + (locality.required() ? " Required" : "") + " with slices)";
            }
            if (why != null) {
                return why;
            }
        }
        return null;
    }

    /** Whether the group alone can be placed as it asks, now (and given back). */
    private boolean placesAlone(List<InstanceRequest> group, Set<String> models) {
        try (Tentative trial = cluster.tentative()) {
            return placement.placeGroup(group, models, null, null) != null;
        }
    }

    /**
     * Why a group that must be in one domain fits in none now, by its instances one by one: with how many of them
     * the roomiest domain holds; {@code null} if a domain holds them all so.
     */
    private String roomiest(List<InstanceRequest> group, Set<String> models) {
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
                return null;
            }
            if (held > most) {
                most = held;
                where = bound.domain().path;
            }
        }
        return "no " + locality.levelName() + " has room for the " + group.size() + " instances of node group " + group.get(0).nodeGroup()
                + " together (placement Required)" + (where == null ? ", nor for one of them" : "; the roomiest, " + where + ", for " + most);
    }

    /** The groups that must be in one domain, or in slices, by name. */
    private static Map<String, List<InstanceRequest>> constrained(List<InstanceRequest> instances) {
        Map<String, List<InstanceRequest>> groups = new TreeMap<>();
        for (InstanceRequest instance : instances) {
            Locality locality = instance.locality();
            if (locality != null && (locality.required() || locality.sliced())) {
                groups.computeIfAbsent(instance.nodeGroup(), g -> new ArrayList<>()).add(instance);
            }
        }
        return groups;
    }

    /** How many of {@code each} fit in {@code free} (as many as asked for when each needs none). */
    private static int fitting(long free, long each) {
        return each <= 0 ? Integer.MAX_VALUE : (int) Math.min(Integer.MAX_VALUE, Math.max(0, free) / each);
    }

    /**
     * Why the gang could never be placed as its topology asks, whatever ends: a group that must be in one domain of a
     * level no domain of which could hold it even empty (or no node is in any: the level is gone), or whose slices the
     * cluster could never hold so; {@code null} if it could ({@link GroupCapacity}). The GPU models its quota allows
     * are not looked at (they change with what runs): at worst the run waits.
     */
    String neverFits(List<InstanceRequest> instances) {
        // What nodes have does not change in a state: one answer per shape of gang. The instances in their order make
        // the key: equal keys are equal gangs (the same gang listed otherwise only costs a second computation).
        StringBuilder shape = new StringBuilder();
        for (int i = 0; i < instances.size(); i++) {
            InstanceRequest r = instances.get(i);
            Resources need = r.resources();
            shape.append(r.nodeGroup()).append('\0').append(need.milliCpu()).append(',').append(need.memoryBytes()).append(',').append(need.gpu())
                    .append(',').append(need.gpuModel()).append(',').append(r.locality()).append('\0');
        }
        return never.computeIfAbsent(shape.toString(), s -> Optional.ofNullable(neverFitsNow(instances))).orElse(null);
    }

    private String neverFitsNow(List<InstanceRequest> instances) {
        for (List<InstanceRequest> group : constrained(instances).values()) {
            Locality locality = group.get(0).locality();
            String name = group.get(0).nodeGroup();
            if (locality.sliced() && GroupCapacity.slices(cluster.nodeList(), GroupCapacity.least(group), null, locality) == 0) {
                return "no " + locality.sliceLevelName() + " could ever hold a slice of " + locality.sliceSize() + " instances of node group " + name
                        + " (placement with slices): each is smaller, even empty";
            }
            String slices = locality.sliced() ? " in slices of " + locality.sliceSize() + " that each share a " + locality.sliceLevelName() : "";
            if (!locality.required()) {
                if (!GroupCapacity.couldEverHold(group, cluster.nodeList(), null)) {
                    return "the cluster could never hold the " + group.size() + " instances of node group " + name + slices
                            + " (placement with slices), even empty";
                }
                continue;
            }
            List<Domains.Domain> domains = cluster.domainsAt(locality.level());
            if (domains.isEmpty()) {
                return "no schedulable node is in a " + locality.levelName() + ", so node group " + name + " (placement Required) cannot be placed";
            }
            if (domains.stream().noneMatch(domain -> GroupCapacity.couldEverHold(group, domain.nodes, null))) {
                return "no " + locality.levelName() + " could ever hold the " + group.size() + " instances of node group " + name
                        + (slices.isEmpty() ? " together (placement Required)" : slices + " (placement Required with slices)") + ": each is smaller, even empty";
            }
        }
        return null;
    }

    /** How many of the group's instances the nodes hold now, placed one by one (and given back). */
    private int held(List<InstanceRequest> group, List<WorkingNode> nodes, Set<String> models) {
        try (Tentative trial = cluster.tentative()) {
            int held = 0;
            for (InstanceRequest instance : WorkingCluster.largestFirst(group)) {
                if (placement.onNodes(List.of(instance), nodes, models, null) != null) {
                    held++;
                }
            }
            return held;
        }
    }

}
