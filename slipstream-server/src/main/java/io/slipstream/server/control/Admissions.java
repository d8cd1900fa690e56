package io.slipstream.server.control;

import io.slipstream.model.usage.UsageChanges;
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
import io.slipstream.scheduler.Placement;
import io.slipstream.server.auth.RunTokens;
import io.slipstream.store.Store;
import io.slipstream.store.StoreTx;
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
 * address and ports it will have, and the attempt's run token, in one transaction, before any instance is launched
 * (so every instance's metadata lists all of them, and a crash leaves nothing launched that is not recorded).
 */
final class Admissions {
    private static final Logger LOG = LoggerFactory.getLogger(Admissions.class);

    private final Store store;
    private final Executor executor;
    private final Clock clock;
    private final RunTokens runTokens;

    /** @param runTokens gives each admitted attempt its run's token, stored with the admission; or {@code null} for none */
    Admissions(Store store, Executor executor, Clock clock, RunTokens runTokens) {
        this.store = store;
        this.executor = executor;
        this.clock = clock;
        this.runTokens = runTokens;
    }

    /** The run as admitted, with its placed instances. */
    record Admitted(RunRecord run, List<InstanceRecord> instances) {
    }

    /** An admission the scheduler decided; {@code borrowed}: an elastic run's extras on idle capacity while it stands InQuota. */
    record Request(RunRecord run, List<Placement> placements, RealTimeResources where, Set<Integer> borrowed) {
        Request(RunRecord run, List<Placement> placements, RealTimeResources where) {
            this(run, placements, where, Set.of());
        }
    }

    /** An admission with the instances it places (and its attempt's token, if one is to be stored), ready to be recorded. */
    private record Prepared(RunRecord run, RunRecord starting, List<InstanceRecord> instances, List<Placement> placements,
                            RealTimeResources where, Instant at, Optional<RunTokens.Admitted> token) {
    }

    /** What a cycle's admissions came to: those recorded, and the runs that changed meanwhile (a conflict). */
    record Outcome(List<Admitted> admitted, Set<io.slipstream.api.run.RunId> conflicted) {
    }

    /**
     * Records a cycle's admissions in one transaction (each in its own when one of them conflicts: the others are
     * still recorded). A run whose instance could not get an address stays queued: the next cycle decides again.
     *
     * @param ports ports of live instances; those given here are added
     */
    Outcome admit(List<Request> requests, PortsInUse ports) {
        List<Prepared> prepared = new ArrayList<>();
        for (Request request : requests) {
            prepare(request, ports).ifPresent(prepared::add);
        }
        Batched.Outcome<Prepared, Admitted> outcome = Batched.write(store, prepared, Admissions::record);
        Set<io.slipstream.api.run.RunId> conflicted = new java.util.HashSet<>();
        outcome.conflicted().forEach(p -> conflicted.add(p.run().id()));
        for (Prepared p : prepared) {
            // Logged once it is so: an admission the store refused (a conflict) is not one.
            if (!conflicted.contains(p.run().id())) {
                p.token().ifPresent(token -> runTokens.stored(token));
                LOG.info("run {}: QUEUED -> STARTING (admitted to {}, {})", p.run().id(),
                        p.placements().stream().map(Placement::node).distinct().sorted().collect(Collectors.joining(", ")), p.where());
            }
        }
        return new Outcome(outcome.written(), conflicted);
    }

    private Optional<Prepared> prepare(Request request, PortsInUse ports) {
        RunRecord run = request.run();
        Instant now = clock.instant();
        List<InstanceRecord> instances = new ArrayList<>();
        List<Slot> slots = slots(run);
        for (Placement placement : request.placements()) {
            Slot slot = slots.get(placement.rank());
            InstanceId id = new InstanceId(run.id(), run.attempt(), placement.rank());
            Endpoint endpoint;
            try {
                endpoint = executor.endpoint(id, run.workspace(), slot.group().name() + "-" + slot.groupRank(), placement.node(),
                        slot.group().ports(), ports.takenOn(placement.node()));
            } catch (ExecutorException e) {
                LOG.warn("run {}: no address for rank {} on {}; trying again next cycle: {}", run.id(), placement.rank(), placement.node(),
                        e.getMessage());
                return Optional.empty();
            }
            ports.take(placement.node(), endpoint.ports());
            instances.add(InstanceRecord.pending(id, slot.group().name(), slot.groupRank(), placement.node(), placement.gpus(), endpoint));
        }
        // Node names stay out of the run's history: a run on idle capacity may not learn whose nodes it borrows.
        long nodeCount = request.placements().stream().map(Placement::node).distinct().count();
        RunRecord starting = run.admitted(request.where(), "Admitted " + request.where() + " on " + nodeCount + " node(s)", now);
        if (run.elastic()) { // its first world: the instances placed, of the slots up to its replicas
            starting = starting.withWorld(ElasticWorld.admitted(request.placements().stream().map(Placement::rank).toList(), request.borrowed()));
        }
        Optional<RunTokens.Admitted> token = runTokens == null ? Optional.empty() : runTokens.forAdmission(run.id(), starting.attempt());
        return Optional.of(new Prepared(run, starting, instances, request.placements(), request.where(), now, token));
    }

    private static Admitted record(StoreTx tx, Prepared p) {
        RunRecord updated = tx.updateRun(p.starting());
        tx.recordUsage(UsageChanges.between(p.run(), updated, p.at()));
        tx.appendEvent(RunEvent.of(p.run().id(), p.at(), EventType.StateChanged, updated.state().name(), updated.reason(), null, null));
        p.token().ifPresent(token -> tx.createToken(token.token().record()));
        return new Admitted(updated, tx.createInstances(p.instances()));
    }

    /** Rank {@code r} of a run is slot {@code r}: its node group's replicas, group after group. */
    record Slot(NodeGroupSpec group, int groupRank) {
    }

    static List<Slot> slots(RunRecord run) {
        List<Slot> slots = new ArrayList<>();
        for (NodeGroupSpec group : run.spec().nodeGroups()) {
            for (int i = 0; i < group.replicas(); i++) {
                slots.add(new Slot(group, i));
            }
        }
        return slots;
    }
}
