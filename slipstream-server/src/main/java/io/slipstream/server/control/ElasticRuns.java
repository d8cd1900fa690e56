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
 * (while the world changes, also those already stopped: they start again there), the slots a shrink removes are
 * released as they go, and each instance stands InQuota or NotInQuota as its world says.
 */
final class ElasticRuns {
    private ElasticRuns() {
    }

    /** The run as the scheduler sees it; empty when it holds nothing. */
    static Optional<ActiveRun> active(RunRecord run, List<InstanceRecord> instances, ClusterTopology topology) {
        ElasticWorld world = run.world();
        List<Allocation> live = new ArrayList<>();
        List<ElasticRun.Release> releasing = new ArrayList<>();
        boolean finishing = false;
        for (InstanceRecord instance : instances) {
            int slot = instance.id().rank();
            Allocation allocation = new Allocation(slot, instance.node(), ElasticWorld.groupOf(run.spec(), slot).resources(), instance.gpus());
            boolean holds = !instance.state().isFinal() || world.changing() && instance.state() != InstanceState.SUCCEEDED;
            if (world.isMember(slot)) {
                if (holds) {
                    live.add(allocation);
                }
                finishing |= instance.state() == InstanceState.SUCCEEDED;
            } else if (world.leavingOf(slot) != null && !instance.state().isFinal()) {
                ElasticWorld.Leaving leaving = world.leavingOf(slot);
                releasing.add(new ElasticRun.Release(allocation, leaving.forRun(), leaving.standing()));
            }
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
        ElasticRun elastic = new ElasticRun(SnapshotBuilder.requests(run, topology), SnapshotBuilder.minimums(run), borrowed, releasing);
        Instant attemptStart = instances.stream().map(InstanceRecord::startedAt).filter(Objects::nonNull).min(Comparator.naturalOrder())
                .orElse(run.createdAt());
        Instant checkpoint = run.faults().checkpointAt();
        // A run some of whose members succeeded is finishing: like one stopping, it is neither grown nor shrunk.
        boolean stopping = run.state() == RunState.TERMINATING || finishing && !world.changing();
        return Optional.of(new ActiveRun(run.id(), run.quotaId(), run.spec().idleResources(), run.priority(), attemptStart,
                checkpoint != null && checkpoint.isAfter(attemptStart) ? checkpoint : null, where, live, stopping, run.reclaimFor(), null, elastic));
    }
}
