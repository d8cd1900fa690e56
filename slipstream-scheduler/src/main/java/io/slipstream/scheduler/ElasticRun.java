package io.slipstream.scheduler;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What an elastic {@link ActiveRun} may grow to and how its instances stand (docs/elastic.md). {@code instances}: every
 * instance it may run (its maximum), by slot: a slot's rank is its identity in the core, which a change of size does
 * not renumber (the applier gives the survivors dense ranks when it restarts them). {@code minReplicas}: per group, the
 * fewest live instances it runs with (groups not named are rigid). {@code borrowed}: the ranks of its live instances on
 * idle capacity ({@code NotInQuota}) while the run itself is {@code InQuota}: its extras beyond its guarantee (empty when
 * the whole run is on idle capacity, every instance then is). {@code releasing}: instances a shrink is removing, each
 * with the run its capacity goes to: they hold their nodes until they are gone, charged to no quota, and while any is
 * left the run is not grown.
 */
public record ElasticRun(List<InstanceRequest> instances, Map<String, Integer> minReplicas, Set<Integer> borrowed, List<Release> releasing) {
    /**
     * An instance being removed: it holds {@code allocation} until it is gone; {@code forRun} gets its capacity ({@code null}:
     * none); {@code standing}: how it stood (the ledger counts it so until it is gone).
     */
    public record Release(Allocation allocation, RunId forRun, RealTimeResources standing) {
        public Release {
            requireNonNull(allocation, "allocation is null");
            requireNonNull(standing, "standing is null");
        }

        /** An extra on idle capacity being removed. */
        public Release(Allocation allocation, RunId forRun) {
            this(allocation, forRun, RealTimeResources.NotInQuota);
        }
    }

    public ElasticRun {
        instances = List.copyOf(instances);
        minReplicas = Map.copyOf(minReplicas);
        borrowed = Collections.unmodifiableSet(new TreeSet<>(borrowed));
        releasing = List.copyOf(releasing);
    }

    /** A run as admitted: nothing being released. */
    public ElasticRun(List<InstanceRequest> instances, Map<String, Integer> minReplicas, Set<Integer> borrowed) {
        this(instances, minReplicas, borrowed, List.of());
    }

    /** Its minimum in {@code group}: all the group's slots where it is rigid. */
    public int minimumOf(String group) {
        Integer min = minReplicas.get(group);
        if (min != null) {
            return min;
        }
        int slots = 0;
        for (InstanceRequest instance : instances) {
            slots += instance.nodeGroup().equals(group) ? 1 : 0;
        }
        return slots;
    }

    /** The slot of a rank ({@code null}: none). */
    InstanceRequest slot(int rank) {
        for (InstanceRequest instance : instances) {
            if (instance.rank() == rank) {
                return instance;
            }
        }
        return null;
    }

    /** The slots that neither a live instance nor a releasing one holds, by rank: what the run may grow into. */
    List<InstanceRequest> vacant(List<Allocation> live) {
        Set<Integer> taken = new java.util.HashSet<>();
        live.forEach(a -> taken.add(a.rank()));
        releasing.forEach(r -> taken.add(r.allocation().rank()));
        List<InstanceRequest> vacant = new ArrayList<>();
        for (InstanceRequest instance : instances) {
            if (!taken.contains(instance.rank())) {
                vacant.add(instance);
            }
        }
        vacant.sort(java.util.Comparator.comparingInt(InstanceRequest::rank));
        return vacant;
    }

    /** Live instances per group. */
    Map<String, Integer> liveByGroup(List<Allocation> live) {
        Map<String, Integer> count = new HashMap<>();
        for (Allocation allocation : live) {
            InstanceRequest slot = slot(allocation.rank());
            if (slot != null) {
                count.merge(slot.nodeGroup(), 1, Integer::sum);
            }
        }
        return count;
    }

    /** Whether {@code live} keeps every group at its minimum or above. */
    public boolean atLeastMinimum(List<Allocation> live) {
        Map<String, Integer> count = liveByGroup(live);
        for (InstanceRequest instance : instances) {
            if (count.getOrDefault(instance.nodeGroup(), 0) < minimumOf(instance.nodeGroup())) {
                return false;
            }
        }
        return true;
    }
}
