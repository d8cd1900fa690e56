package io.slipstream.scheduler;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.Resources;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A run waiting for resources: all its instances are placed together or not at all. {@code quota} is its quota's
 * id ({@code null}: none); {@code createdAt} orders runs of equal priority. {@code reclaimed}: borrowers were
 * preempted for it and are gone, so the capacity they gave back is its own: it is placed before the rest of the
 * queue (else an earlier run could take that capacity and it would have to preempt others again).
 *
 * <p>{@code minReplicas}: per node group, the fewest instances the run may run with (an elastic run, docs/elastic.md);
 * a group not named is rigid (its minimum is all its instances), and an empty map makes the whole run rigid, as every run
 * was before. An elastic run is admitted when its {@link #minimum} fits (that is its gang); its other instances
 * ({@link #extras}) are added as capacity allows, in the same cycle and later ones. A group with a topology locality is
 * rigid: its extras could not be kept in its domain.
 */
public record PendingRun(RunId id, QuotaId quota, IdleMode idleMode, int priority, Instant createdAt, List<InstanceRequest> instances, boolean reclaimed,
                         Map<String, Integer> minReplicas) {
    public PendingRun {
        requireNonNull(id, "id is null");
        requireNonNull(idleMode, "idleMode is null");
        requireNonNull(createdAt, "createdAt is null");
        instances = List.copyOf(instances);
        if (instances.isEmpty()) {
            throw new IllegalArgumentException("run " + id + " has no instances");
        }
        minReplicas = checkedMinimum(id, instances, minReplicas);
    }

    public PendingRun(RunId id, QuotaId quota, IdleMode idleMode, int priority, Instant createdAt, List<InstanceRequest> instances, boolean reclaimed) {
        this(id, quota, idleMode, priority, createdAt, instances, reclaimed, Map.of());
    }

    public PendingRun(RunId id, QuotaId quota, IdleMode idleMode, int priority, Instant createdAt, List<InstanceRequest> instances) {
        this(id, quota, idleMode, priority, createdAt, instances, false);
    }

    /**
     * The minimum per group, without the groups whose minimum is all of them (rigid), in name order; refused when a
     * minimum is below 1 or above the group's instances, names no group of the run, or is on a group with a locality.
     */
    static Map<String, Integer> checkedMinimum(RunId id, List<InstanceRequest> instances, Map<String, Integer> minReplicas) {
        requireNonNull(minReplicas, "minReplicas is null");
        if (minReplicas.isEmpty()) {
            return Map.of();
        }
        Map<String, Integer> replicas = new HashMap<>();
        Map<String, Boolean> located = new HashMap<>();
        for (InstanceRequest instance : instances) {
            replicas.merge(instance.nodeGroup(), 1, Integer::sum);
            located.merge(instance.nodeGroup(), instance.locality() != null, Boolean::logicalOr);
        }
        Map<String, Integer> elastic = new TreeMap<>();
        minReplicas.forEach((group, min) -> {
            Integer count = replicas.get(group);
            if (count == null || min == null || min < 1 || min > count) {
                throw new IllegalArgumentException("run " + id + ": minReplicas of group " + group + " must be 1 to its " + (count == null ? 0 : count)
                        + " instances, is " + min);
            }
            if (min < count) {
                if (located.get(group)) {
                    throw new IllegalArgumentException("run " + id + ": group " + group + " asks for a topology placement and cannot be elastic");
                }
                elastic.put(group, min);
            }
        });
        return elastic.isEmpty() ? Map.of() : java.util.Collections.unmodifiableMap(elastic);
    }

    /** The same run, elastic: each named group may run with as few as its minimum. */
    public PendingRun withMinReplicas(Map<String, Integer> minimum) {
        return new PendingRun(id, quota, idleMode, priority, createdAt, instances, reclaimed, minimum);
    }

    /** Whether some group may run with fewer instances than it asks for. */
    public boolean elastic() {
        return !minReplicas.isEmpty();
    }

    /** The instances it cannot run without: of each group, its first {@code minReplicas} by rank (all of a rigid group). */
    public List<InstanceRequest> minimum() {
        return split(true);
    }

    /** The instances it may run without: those not in {@link #minimum}, by rank. */
    public List<InstanceRequest> extras() {
        return split(false);
    }

    private List<InstanceRequest> split(boolean minimum) {
        if (minReplicas.isEmpty()) {
            return minimum ? instances : List.of();
        }
        List<InstanceRequest> byRank = new ArrayList<>(instances);
        byRank.sort(java.util.Comparator.comparingInt(InstanceRequest::rank));
        Map<String, Integer> taken = new HashMap<>();
        List<InstanceRequest> out = new ArrayList<>();
        for (InstanceRequest instance : byRank) {
            int min = minReplicas.getOrDefault(instance.nodeGroup(), Integer.MAX_VALUE);
            boolean inMinimum = taken.merge(instance.nodeGroup(), 1, Integer::sum) <= min;
            if (inMinimum == minimum) {
                out.add(instance);
            }
        }
        return out;
    }

    /** The run as the passes that admit gangs see it: its minimum, rigid (itself when it is rigid). */
    PendingRun gang() {
        return minReplicas.isEmpty() ? this : new PendingRun(id, quota, idleMode, priority, createdAt, minimum(), reclaimed);
    }

    /** The instance asking for the most GPUs, then cpu, then memory (the first of equals). */
    public Resources largestInstance() {
        Resources largest = instances.get(0).resources();
        for (InstanceRequest instance : instances) {
            Resources r = instance.resources();
            if (r.gpu() > largest.gpu() || (r.gpu() == largest.gpu() && (r.milliCpu() > largest.milliCpu()
                    || (r.milliCpu() == largest.milliCpu() && r.memoryBytes() > largest.memoryBytes())))) {
                largest = r;
            }
        }
        return largest;
    }

    /** {@link Scheduler#QUEUE_ORDER}: higher priority first, then older, then by id. */
    static int inQueueOrder(PendingRun a, PendingRun b) {
        if (a.priority != b.priority) {
            return a.priority > b.priority ? -1 : 1;
        }
        int byAge = a.createdAt.compareTo(b.createdAt);
        return byAge != 0 ? byAge : a.id.compareTo(b.id);
    }

    public PendingRun withReclaimed(boolean value) {
        return value == reclaimed ? this : new PendingRun(id, quota, idleMode, priority, createdAt, instances, value, minReplicas);
    }
}
