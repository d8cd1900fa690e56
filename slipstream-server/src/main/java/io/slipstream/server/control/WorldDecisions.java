package io.slipstream.server.control;

import io.slipstream.api.run.Endpoint;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorException;
import io.slipstream.model.ElasticWorld;
import io.slipstream.model.EventType;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.model.usage.UsageChanges;
import io.slipstream.scheduler.Decision;
import io.slipstream.scheduler.Placement;
import io.slipstream.store.Store;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records a grow or a shrink the scheduler decided for an elastic run (docs/elastic.md): its new world, changing, in one
 * transaction with the instances a grow places and the event; the run's lifecycle then stops the world before
 * ({@code WorldChanges}) and starts the new one. Only what is decided is written here: nothing is stopped or launched.
 */
final class WorldDecisions {
    private static final Logger LOG = LoggerFactory.getLogger(WorldDecisions.class);

    private final Store store;
    private final Executor executor;
    private final Clock clock;
    private final PortsInUse ports;

    /** @param ports ports of live instances; those given to grown instances are added */
    WorldDecisions(Store store, Executor executor, Clock clock, PortsInUse ports) {
        this.store = store;
        this.executor = executor;
        this.clock = clock;
        this.ports = ports;
    }

    /** The run as recorded and its instances. */
    record Applied(RunRecord run, List<InstanceRecord> instances) {
    }

    /**
     * Places the new instances (a slot removed before is placed again under its id) and records the grown world; empty
     * when an instance could get no address (the next cycle decides again).
     */
    Optional<Applied> grow(RunRecord run, List<InstanceRecord> instances, Decision.Grow grow) {
        ElasticWorld world = requireWorld(run, "grow");
        Map<InstanceId, InstanceRecord> byId = instances.stream().collect(Collectors.toMap(InstanceRecord::id, Function.identity()));
        List<InstanceRecord> placed = new ArrayList<>();
        List<InstanceRecord> again = new ArrayList<>();
        List<Admissions.Slot> slots = Admissions.slots(run);
        for (Placement placement : grow.placements()) {
            InstanceId id = new InstanceId(run.id(), run.attempt(), placement.rank());
            Admissions.Slot slot = slots.get(placement.rank());
            NodeGroupSpec group = slot.group();
            int groupRank = slot.groupRank();
            Endpoint endpoint;
            try {
                endpoint = executor.endpoint(id, run.workspace(), group.name() + "-" + groupRank, placement.node(), group.ports(),
                        ports.takenOn(placement.node()));
            } catch (ExecutorException e) {
                LOG.warn("run {}: no address for slot {} on {}; not grown this cycle: {}", run.id(), placement.rank(), placement.node(), e.getMessage());
                return Optional.empty();
            }
            ports.take(placement.node(), endpoint.ports());
            InstanceRecord before = byId.get(id);
            if (before == null) {
                placed.add(InstanceRecord.pending(id, group.name(), groupRank, placement.node(), placement.gpus(), endpoint));
            } else {
                again.add(before.regrown(placement.node(), placement.gpus(), endpoint));
            }
        }
        ElasticWorld grown = world.grown(grow.placements().stream().map(Placement::rank).toList(), grow.borrowed());
        String message = "grows from " + world.members().size() + " to " + grown.members().size() + " instance(s) (world " + grown.version() + ")";
        Instant now = clock.instant();
        Applied applied = store.write(tx -> {
            RunRecord updated = tx.updateRun(run.withWorld(grown));
            tx.recordUsage(UsageChanges.between(run, updated, now));
            tx.appendEvent(RunEvent.of(run.id(), now, EventType.WorldChanged, updated.state().name(), "Grown", message, null));
            List<InstanceRecord> all = new ArrayList<>(instances);
            for (InstanceRecord regrown : again) {
                InstanceRecord stored = tx.updateInstance(regrown);
                all.replaceAll(i -> i.id().equals(stored.id()) ? stored : i);
            }
            all.addAll(tx.createInstances(placed));
            return new Applied(updated, all);
        });
        LOG.info("run {}: {}", run.id(), message);
        return Optional.of(applied);
    }

    /** Records the shrunk world: the slots removed leave, for the run named, once told to stop. */
    Applied shrink(RunRecord run, List<InstanceRecord> instances, Decision.Shrink shrink) {
        ElasticWorld world = requireWorld(run, "shrink");
        List<ElasticWorld.Leaving> leaving = new ArrayList<>();
        String notice = ElasticWorld.SHRUNK + ": " + shrink.reason();
        for (int slot : shrink.ranks()) {
            if (!world.isMember(slot)) {
                throw new IllegalStateException("run " + run.id() + ": slot " + slot + " is not in its world " + world.members());
            }
            RealTimeResources standing = run.realTimeResources() == RealTimeResources.InQuota && !world.borrowed().contains(slot)
                    ? RealTimeResources.InQuota : RealTimeResources.NotInQuota;
            leaving.add(new ElasticWorld.Leaving(slot, shrink.forRun(), standing, notice));
        }
        ElasticWorld shrunk = world.shrunk(leaving);
        String message = "shrinks from " + world.members().size() + " to " + shrunk.members().size() + " instance(s) (world " + shrunk.version()
                + "): " + shrink.reason();
        Instant now = clock.instant();
        RunRecord updated = store.write(tx -> {
            RunRecord stored = tx.updateRun(run.withWorld(shrunk));
            tx.recordUsage(UsageChanges.between(run, stored, now));
            tx.appendEvent(RunEvent.of(run.id(), now, EventType.WorldChanged, stored.state().name(), "Shrunk", message, null));
            return stored;
        });
        // The run it makes room for is another team's: named in the operator's log, not in the run's history.
        LOG.info("run {}: {}, for run {} ({})", run.id(), message, shrink.forRun(), shrink.kind());
        return new Applied(updated, instances);
    }

    private static ElasticWorld requireWorld(RunRecord run, String what) {
        if (run.world() == null) {
            throw new IllegalStateException("run " + run.id() + " is not elastic: the scheduler cannot " + what + " it");
        }
        return run.world();
    }
}
