package io.slipstream.scheduler;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.IdleMode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A run that holds resources: admitted, running, or being stopped. {@code quota} is its quota's id ({@code null}:
 * none). {@code lastCheckpointAt} (or its start when it has none) measures the work a preemption would lose.
 * {@code stopping}: its instances are being stopped; {@code reclaimFor} names the run its resources go to, if any.
 * {@code movedAt}: when the scheduler last moved it to defragment the cluster ({@code null}: never), so that a run is
 * not moved again before {@link Defragmentation#moveCooldown()} has passed.
 *
 * <p>{@code elastic}: what an elastic run may grow to and how each of its instances stands ({@code null}: a rigid run,
 * every instance as {@code realTimeResources} says). For an elastic run, {@code realTimeResources} is how its minimum
 * stands, and {@code allocations} are its live instances only; those a shrink is removing are in
 * {@link ElasticRun#releasing}.
 */
public record ActiveRun(
        RunId id,
        QuotaId quota,
        IdleMode idleMode,
        int priority,
        Instant startedAt,
        Instant lastCheckpointAt,
        RealTimeResources realTimeResources,
        List<Allocation> allocations,
        boolean stopping,
        RunId reclaimFor,
        Instant movedAt,
        ElasticRun elastic) {
    public ActiveRun {
        requireNonNull(id, "id is null");
        requireNonNull(idleMode, "idleMode is null");
        requireNonNull(startedAt, "startedAt is null");
        requireNonNull(realTimeResources, "realTimeResources is null");
        allocations = List.copyOf(allocations);
        if (elastic != null) {
            check(id, realTimeResources, allocations, elastic);
        }
    }

    /** A rigid run. */
    public ActiveRun(RunId id, QuotaId quota, IdleMode idleMode, int priority, Instant startedAt, Instant lastCheckpointAt,
            RealTimeResources realTimeResources, List<Allocation> allocations, boolean stopping, RunId reclaimFor, Instant movedAt) {
        this(id, quota, idleMode, priority, startedAt, lastCheckpointAt, realTimeResources, allocations, stopping, reclaimFor, movedAt, null);
    }

    /** A rigid run never moved. */
    public ActiveRun(RunId id, QuotaId quota, IdleMode idleMode, int priority, Instant startedAt, Instant lastCheckpointAt,
            RealTimeResources realTimeResources, List<Allocation> allocations, boolean stopping, RunId reclaimFor) {
        this(id, quota, idleMode, priority, startedAt, lastCheckpointAt, realTimeResources, allocations, stopping, reclaimFor, null);
    }

    private static void check(RunId id, RealTimeResources where, List<Allocation> live, ElasticRun elastic) {
        Set<Integer> ranks = new HashSet<>();
        for (Allocation allocation : live) {
            if (elastic.slot(allocation.rank()) == null || !ranks.add(allocation.rank())) {
                throw new IllegalArgumentException("run " + id + ": instance " + allocation.rank() + " is no slot of its own, or is there twice");
            }
        }
        for (ElasticRun.Release release : elastic.releasing()) {
            if (elastic.slot(release.allocation().rank()) == null || !ranks.add(release.allocation().rank())) {
                throw new IllegalArgumentException("run " + id + ": releasing instance " + release.allocation().rank() + " is no slot, or is live too");
            }
        }
        if (!elastic.borrowed().isEmpty() && where != RealTimeResources.InQuota) {
            throw new IllegalArgumentException("run " + id + " is on idle capacity: every instance is, none is named borrowed");
        }
        for (int rank : elastic.borrowed()) {
            if (live.stream().noneMatch(a -> a.rank() == rank)) {
                throw new IllegalArgumentException("run " + id + ": borrowed instance " + rank + " is not live");
            }
        }
    }

    /** When the work a preemption would lose began: the last checkpoint, or the start. */
    Instant workSince() {
        return lastCheckpointAt != null && lastCheckpointAt.isAfter(startedAt) ? lastCheckpointAt : startedAt;
    }

    /** Whether the live instance holding {@code allocation} is on idle capacity (NotInQuota). */
    public boolean onIdleCapacity(Allocation allocation) {
        return realTimeResources == RealTimeResources.NotInQuota || (elastic != null && elastic.borrowed().contains(allocation.rank()));
    }

    /** Whether some live instance is on idle capacity while the run is guaranteed (an elastic run's borrowed extras). */
    boolean mixed() {
        return elastic != null && !elastic.borrowed().isEmpty();
    }

    /**
     * The live instances a shrink may take from it: those on idle capacity, as long as each group keeps its minimum; in
     * the order they are taken (highest rank first). Empty for a rigid run, or a stopping one.
     */
    List<Allocation> shrinkable() {
        return extras(true);
    }

    /**
     * The live instances on its quota's guarantee a shrink may take from a guaranteed run ({@link #shrinkable} ones
     * counted first: each group keeps its minimum with them gone too), highest rank first. Empty for a rigid run, a
     * stopping one, or one on idle capacity.
     */
    List<Allocation> extrasInQuota() {
        if (realTimeResources != RealTimeResources.InQuota) {
            return List.of();
        }
        return extras(false);
    }

    private List<Allocation> extras(boolean onIdle) {
        if (elastic == null || stopping) {
            return List.of();
        }
        Map<String, Integer> spare = new HashMap<>();
        elastic.liveByGroup(allocations).forEach((group, live) -> spare.put(group, live - elastic.minimumOf(group)));
        List<Allocation> byRank = new ArrayList<>(allocations);
        byRank.sort(Comparator.comparingInt(Allocation::rank).reversed());
        List<Allocation> out = new ArrayList<>();
        for (Allocation allocation : byRank) {
            String group = elastic.slot(allocation.rank()).nodeGroup();
            if (onIdleCapacity(allocation) && spare.getOrDefault(group, 0) > 0) {
                spare.merge(group, -1, Integer::sum);
                if (onIdle) {
                    out.add(allocation);
                }
            }
        }
        if (onIdle) {
            return out;
        }
        for (Allocation allocation : byRank) {
            String group = elastic.slot(allocation.rank()).nodeGroup();
            if (!onIdleCapacity(allocation) && spare.getOrDefault(group, 0) > 0) {
                out.add(allocation);
                spare.merge(group, -1, Integer::sum);
            }
        }
        return out;
    }

    /** The same run with other allocations, as a view: what a search removes or a stop frees (not a state of the run). */
    ActiveRun withAllocations(List<Allocation> only) {
        return new ActiveRun(id, quota, idleMode, priority, startedAt, lastCheckpointAt, realTimeResources, only, stopping, reclaimFor, movedAt, null);
    }

    /** By id only (equal runs have equal ids): the core keeps active runs in hash sets, and hashing every field was a hot spot. */
    @Override
    public int hashCode() {
        return id.hashCode();
    }
}
