package io.slipstream.server.control;

import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunState;
import io.slipstream.model.ElasticWorld;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import io.slipstream.scheduler.ActiveRun;
import io.slipstream.scheduler.Allocation;
import io.slipstream.scheduler.ElasticRun;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * An elastic run holding resources as the scheduler sees it (docs/elastic.md): its world's members hold their places
 * (while the world changes, also those already ended, succeeded too: they start again there), the slots a shrink removes
 * are released as they go, and each instance stands InQuota or NotInQuota as its world says.
 *
 * <p>It may grow only into slots that are no member's and no longer leaving, and not at all while a shrink's change is in
 * flight; a run some of whose members succeeded (finishing) is seen as a rigid run of its live instances: neither grown
 * nor shrunk, but charged to its quota and stopped whole for a reclaim like any other.
 */
final class ElasticRuns {
    private ElasticRuns() {
    }

    /** The run as the scheduler sees it; empty when it holds nothing. */
    static Optional<ActiveRun> active(RunRecord run, List<InstanceRecord> instances, ClusterTopology topology) {
        ElasticWorld world = run.world();
        List<Allocation> live = new ArrayList<>();
        List<ElasticRun.Release> releasing = new ArrayList<>();
        Set<Integer> closed = new TreeSet<>(); // slots it may not grow into now
        boolean finishing = false;
        for (InstanceRecord instance : instances) {
            int slot = instance.id().rank();
            Allocation allocation = new Allocation(slot, instance.node(), ElasticWorld.groupOf(run.spec(), slot).resources(), instance.gpus());
            // While the world changes every member that ended starts again in place (WorldChanges), succeeded or not.
            boolean holds = !instance.state().isFinal() || world.changing();
            if (world.isMember(slot)) {
                if (holds) {
                    live.add(allocation);
                } else {
                    closed.add(slot); // a member that failed is judged by its run's rules, never grown over
                }
                finishing |= instance.state() == InstanceState.SUCCEEDED;
            } else if (world.leavingOf(slot) != null) {
                if (!instance.state().isFinal()) {
                    ElasticWorld.Leaving leaving = world.leavingOf(slot);
                    releasing.add(new ElasticRun.Release(allocation, leaving.forRun(), leaving.standing()));
                } else {
                    closed.add(slot);
                }
            }
        }
        finishing &= !world.changing();
        if (finishing || world.changing() && !world.leaving().isEmpty()) {
            // Finishing, or a shrink's change in flight (its survivors still saving): no grow; only its live and leaving slots.
            for (var request : SnapshotBuilder.requests(run, topology)) {
                closed.add(request.rank());
            }
            live.forEach(a -> closed.remove(a.rank()));
            releasing.forEach(r -> closed.remove(r.allocation().rank()));
        }
        if (live.isEmpty() && releasing.isEmpty()) {
            return Optional.empty();
        }
        Set<Integer> liveSlots = new TreeSet<>();
        live.forEach(a -> liveSlots.add(a.rank()));
        Set<Integer> borrowed = new TreeSet<>(world.borrowed());
        borrowed.retainAll(liveSlots);
        RealTimeResources where = run.realTimeResources() != null ? run.realTimeResources() : RealTimeResources.NotInQuota;
        if (where != RealTimeResources.InQuota) {
            borrowed.clear();
        }
        List<io.slipstream.scheduler.InstanceRequest> slots = SnapshotBuilder.requests(run, topology).stream().filter(r -> !closed.contains(r.rank())).toList();
        // A finishing run is rigid at its live size: every group's minimum is what it has (its slots are those live).
        ElasticRun elastic = new ElasticRun(slots, finishing ? java.util.Map.of() : SnapshotBuilder.minimums(run), borrowed, releasing);
        Instant attemptStart = instances.stream().map(InstanceRecord::startedAt).filter(Objects::nonNull).min(Comparator.naturalOrder())
                .orElse(run.createdAt());
        Instant checkpoint = run.faults().checkpointAt();
        boolean stopping = run.state() == RunState.TERMINATING;
        return Optional.of(new ActiveRun(run.id(), run.quotaId(), run.spec().idleResources(), run.priority(), attemptStart,
                checkpoint != null && checkpoint.isAfter(attemptStart) ? checkpoint : null, where, live, stopping, run.reclaimFor(), null, elastic));
    }
}
