package io.slipstream.server.control;

import io.slipstream.model.usage.UsageChanges;
import io.slipstream.api.run.Endpoint;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorException;
import io.slipstream.model.EventType;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.scheduler.Placement;
import io.slipstream.store.Store;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records an admission the scheduler decided: the run STARTING and its instances PENDING, each with the node, GPUs,
 * address and ports it will have, in one transaction, before any instance is launched (so every instance's
 * metadata lists all of them, and a crash leaves nothing launched that is not recorded).
 */
final class Admissions {
    private static final Logger LOG = LoggerFactory.getLogger(Admissions.class);

    private final Store store;
    private final Executor executor;
    private final Clock clock;

    Admissions(Store store, Executor executor, Clock clock) {
        this.store = store;
        this.executor = executor;
        this.clock = clock;
    }

    /** The run as admitted, with its placed instances. */
    record Admitted(RunRecord run, List<InstanceRecord> instances) {
    }

    /**
     * @param takenPorts ports of live instances; those given here are added
     * @return the admitted run, or empty when an instance could not get an address (the run stays queued: the next
     *         cycle decides again)
     */
    Optional<Admitted> admit(RunRecord run, List<Placement> placements, RealTimeResources where, Set<Integer> takenPorts) {
        Instant now = clock.instant();
        List<InstanceRecord> instances = new ArrayList<>();
        List<Slot> slots = slots(run);
        for (Placement placement : placements) {
            Slot slot = slots.get(placement.rank());
            InstanceId id = new InstanceId(run.id(), run.attempt(), placement.rank());
            Endpoint endpoint;
            try {
                endpoint = executor.endpoint(id, run.workspace(), slot.group().name() + "-" + slot.groupRank(), placement.node(),
                        slot.group().ports(), takenPorts);
            } catch (ExecutorException e) {
                LOG.warn("run {}: no address for rank {} on {}; trying again next cycle: {}", run.id(), placement.rank(), placement.node(),
                        e.getMessage());
                return Optional.empty();
            }
            takenPorts.addAll(endpoint.ports());
            instances.add(InstanceRecord.pending(id, slot.group().name(), slot.groupRank(), placement.node(), placement.gpus(), endpoint));
        }
        // Node names stay out of the run's history: a run on idle capacity may not learn whose nodes it borrows.
        long nodeCount = placements.stream().map(Placement::node).distinct().count();
        RunRecord starting = run.admitted(where, "Admitted " + where + " on " + nodeCount + " node(s)", now);
        Admitted admitted = store.inTransaction(tx -> {
            RunRecord updated = tx.updateRun(starting);
            tx.recordUsage(UsageChanges.between(run, updated, now));
            tx.appendEvent(RunEvent.of(run.id(), now, EventType.StateChanged, updated.state().name(), updated.reason(), null, null));
            return new Admitted(updated, tx.createInstances(instances));
        });
        // Logged once it is so: an admission the store refused (a conflict) is not one.
        LOG.info("run {}: QUEUED -> STARTING (admitted to {}, {})", run.id(),
                placements.stream().map(Placement::node).distinct().sorted().collect(Collectors.joining(", ")), where);
        return Optional.of(admitted);
    }

    /** Rank {@code r} of a run is slot {@code r}: its node group's replicas, group after group. */
    private record Slot(NodeGroupSpec group, int groupRank) {
    }

    private static List<Slot> slots(RunRecord run) {
        List<Slot> slots = new ArrayList<>();
        for (NodeGroupSpec group : run.spec().nodeGroups()) {
            for (int i = 0; i < group.replicas(); i++) {
                slots.add(new Slot(group, i));
            }
        }
        return slots;
    }
}
