package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The cluster's free capacity during one cycle, indexed so that a best-fit node is found without scanning every
 * node ({@link NodeBuckets}: for each GPU model, nodes by their number of free GPUs). Best fit = the node left with the
 * fewest free GPUs (GPU work packs densely, whole nodes stay free for large instances), ties by name. While a
 * {@link Tentative} is open every change is written to the {@link Journal}, to be undone.
 *
 * <p>Fragmentation-aware: a request smaller than a node goes first where guaranteed work of its own quota already is,
 * then where any guaranteed work is, then best fit; so that guaranteed small runs (which no reclaim can clear) share
 * few nodes and the rest stay clearable. And the last {@link #wholeReserve} whole free nodes are kept for the queue's
 * whole-node gangs: a smaller request may not break them. Not thread-safe.
 */
final class WorkingCluster {
    private final List<WorkingNode> nodes = new ArrayList<>();
    private final Map<String, WorkingNode> byName = new HashMap<>();
    /** The schedulable nodes by model and free GPUs. */
    private final NodeBuckets buckets = new NodeBuckets(nodes);
    /** model -> distinct node capacities, to answer "could this ever fit" without a scan. */
    private final Map<String, Set<Resources>> shapes = new TreeMap<>();
    private final Map<String, Amount> freeByModel = new TreeMap<>();
    private final Amount freeTotal = new Amount();
    /** Whole free nodes that requests smaller than a node may not break (the queue's whole-node gangs need them). */
    private int wholeReserve;
    private int maxNodeGpus;
    /** Where changes made during a cycle are written, to be undone (shared with the cycle's quota book). */
    private final Journal journal;
    /** The topology's domains, with their free totals. */
    private final Domains domains;
    /** Places the gangs whose groups have a topology {@link Locality}. */
    private final LocalityPlacement locality = new LocalityPlacement(this);
    /** Says why such a gang waits. */
    private final LocalityReasons localityReasons = new LocalityReasons(this, locality);

    WorkingCluster(List<NodeState> states, Journal journal) {
        this.journal = journal;
        List<NodeState> sorted = new ArrayList<>(states);
        sorted.sort(Comparator.comparing(NodeState::name));
        for (NodeState state : sorted) {
            WorkingNode node = new WorkingNode(nodes.size(), state);
            nodes.add(node);
            byName.put(node.name, node);
            if (node.schedulable) {
                buckets.add(node);
                shapes.computeIfAbsent(node.model, m -> new LinkedHashSet<>())
                        .add(new Resources(node.capacity.milliCpu(), node.capacity.memoryBytes(), node.capacity.gpu(), null));
                freeByModel.computeIfAbsent(node.model, m -> new Amount()).add(node.capacity, 1);
                freeTotal.add(node.capacity, 1);
                maxNodeGpus = Math.max(maxNodeGpus, node.capacity.gpu());
            }
        }
        this.domains = new Domains(nodes);
    }

    /** The domains of a topology level, in path order. */
    List<Domains.Domain> domainsAt(int level) {
        return domains.at(level);
    }

    /** A node leaves its buckets and its domains' free totals before it changes... */
    private void leave(WorkingNode node) {
        buckets.leave(node);
        domains.leave(node);
    }

    /** ...and joins them again after. */
    private void join(WorkingNode node) {
        buckets.join(node);
        domains.join(node);
    }

    /**
     * Writes what a change of {@code node} will overwrite (the node, its buckets, the free totals) to the journal, if a
     * tentative is open: undone, the node leaves the buckets its state put it in and joins those of its state before.
     */
    private void journal(WorkingNode node) {
        if (!journal.recording()) {
            return;
        }
        WorkingNode.Saved saved = node.save();
        Amount model = node.schedulable ? freeByModel.get(node.model) : null;
        Amount modelBefore = model == null ? null : model.copy();
        Amount totalBefore = freeTotal.copy();
        journal.record(() -> {
            leave(node);
            node.restore(saved);
            join(node);
            freeTotal.setTo(totalBefore);
            if (model != null) {
                model.setTo(modelBefore);
            }
        });
    }

    /** Schedulable nodes with every GPU free. */
    int wholeFreeNodes() {
        return buckets.wholeFree();
    }

    /** The most GPUs a schedulable node has: an instance asking for as many needs a whole node. */
    int maxNodeGpus() {
        return maxNodeGpus;
    }

    int wholeReserve() {
        return wholeReserve;
    }

    /** Sets how many whole free nodes are kept for gangs (journaled: a cycle's reserve is undone with the cycle). */
    void wholeReserve(int nodes) {
        int before = wholeReserve;
        journal.record(() -> wholeReserve = before);
        wholeReserve = nodes;
    }

    /** Whether taking {@code request} on the node keeps the whole nodes held for gangs. */
    private boolean mayBreak(WorkingNode node, Resources request) {
        return buckets.mayBreak(node, request, wholeReserve);
    }

    /** Whether the node may take the request now: of an allowed model, room enough, and not a whole node kept for gangs. */
    boolean mayTake(WorkingNode node, Resources request, Set<String> models) {
        return allowed(node.model, request, models) && node.fitsNow(request) && mayBreak(node, request);
    }

    /** Opens a tentative on the cycle's journal (see {@link Tentative}). */
    Tentative tentative() {
        return journal.open();
    }

    List<WorkingNode> nodeList() {
        return nodes;
    }

    /** Why the gang does not fit as its topology asks, when that is why ({@link LocalityReasons#miss}), or {@code null}. */
    String localityMiss(List<InstanceRequest> instances, Set<String> models) {
        return LocalityPlacement.applies(instances) ? localityReasons.miss(instances, models) : null;
    }

    /** Why the gang could never be placed as its topology asks ({@link LocalityReasons#neverFits}), or {@code null}. */
    String localityNeverFits(List<InstanceRequest> instances) {
        return LocalityPlacement.applies(instances) ? localityReasons.neverFits(instances) : null;
    }

    /** The working copy of a node ({@code null}: unknown). */
    WorkingNode node(String name) {
        return byName.get(name);
    }

    boolean hasNode(String name) {
        return byName.containsKey(name);
    }

    /** The GPU model of a node ({@code ""} for none). */
    String modelOf(String name) {
        return byName.get(name).model;
    }

    /** Records an existing allocation (of an active run). Allocations on unknown nodes are ignored. */
    void hold(Allocation allocation) {
        hold(allocation, null);
    }

    /** Records an existing allocation; {@code pin}: the quota of the guaranteed run that holds it ({@code null}: not guaranteed). */
    void hold(Allocation allocation, QuotaId pin) {
        WorkingNode node = byName.get(allocation.node());
        if (node != null) {
            move(node, () -> node.takeExactly(allocation.resources(), allocation.gpus()), allocation.resources(), -1, pin);
        }
    }

    /**
     * Records the allocations of every active run at once ({@code pins}: the quota of each one's guaranteed run, or
     * {@code null}): the same state as holding them one by one, but each node leaves and rejoins its buckets once, not
     * once per allocation (a cycle's intake on a cluster of many small runs).
     */
    void holdAll(List<Allocation> allocations, List<QuotaId> pins) {
        Map<WorkingNode, Boolean> seen = new IdentityHashMap<>();
        List<WorkingNode> order = new ArrayList<>();
        for (Allocation allocation : allocations) {
            WorkingNode node = byName.get(allocation.node());
            if (node != null && seen.put(node, Boolean.TRUE) == null) {
                journal(node);
                order.add(node);
                leave(node);
            }
        }
        for (int i = 0; i < allocations.size(); i++) {
            Allocation allocation = allocations.get(i);
            WorkingNode node = byName.get(allocation.node());
            if (node == null) {
                continue;
            }
            node.takeExactly(allocation.resources(), allocation.gpus());
            QuotaId pin = pins.get(i);
            if (pin != null && allocation.resources().gpu() > 0) {
                node.pinnedByQuota.merge(pin, allocation.resources().gpu(), (a, b) -> a + b == 0 ? null : a + b);
            }
            if (node.schedulable) {
                freeByModel.get(node.model).add(allocation.resources(), -1);
                freeTotal.add(allocation.resources(), -1);
            }
        }
        order.forEach(this::join);
    }

    /** Gives an allocation back; a pinned one must be released with the quota it was held with. */
    void release(Allocation allocation) {
        release(allocation, null);
    }

    void release(Allocation allocation, QuotaId pin) {
        WorkingNode node = byName.get(allocation.node());
        if (node != null) {
            move(node, () -> node.giveBack(allocation.resources(), allocation.gpus()), allocation.resources(), 1, pin);
        }
    }

    /**
     * Places every instance or none (a gang): the takes are tentative, discarded if one instance fits nowhere. Larger
     * instances are placed first, so that small ones do not split the space large ones need. {@code models}, if not
     * null, confines the run to nodes of those GPU models ({@code ""}: nodes without GPUs).
     */
    List<Placement> placeGang(List<InstanceRequest> instances, Set<String> models) {
        return placeGang(instances, models, null);
    }

    /** {@code pin}: the quota of a guaranteed run, whose small instances go next to its quota's guaranteed work. */
    List<Placement> placeGang(List<InstanceRequest> instances, Set<String> models, QuotaId pin) {
        if (!roughlyFits(instances, models)) {
            return null;
        }
        if (LocalityPlacement.applies(instances)) {
            return locality.place(instances, models, pin, null);
        }
        List<Placement> placements = new ArrayList<>(instances.size());
        try (Tentative gang = journal.open()) {
            for (InstanceRequest instance : largestFirst(instances)) {
                WorkingNode node = bestFit(instance.resources(), models, pin);
                if (node == null) {
                    return null;
                }
                List<Integer> gpus = take(node, instance.resources(), pin);
                placements.add(new Placement(instance.rank(), node.name, gpus));
            }
            gang.commit();
        }
        placements.sort(Comparator.comparingInt(Placement::rank));
        return placements;
    }

    /**
     * Like {@link #placeGang}, but only on the named nodes (best fit among them): a run that reclaims capacity is
     * placed where its victims are, instead of on free capacity elsewhere that earlier runs of the queue may need.
     */
    List<Placement> placeGangOn(List<InstanceRequest> instances, Set<String> models, Set<String> nodeNames) {
        if (LocalityPlacement.applies(instances)) {
            return locality.place(instances, models, null, nodeNames);
        }
        List<WorkingNode> candidates = new ArrayList<>();
        for (String name : nodeNames) {
            WorkingNode node = byName.get(name);
            if (node != null && node.schedulable) {
                candidates.add(node);
            }
        }
        List<Placement> placements = new ArrayList<>(instances.size());
        try (Tentative gang = journal.open()) {
            for (InstanceRequest instance : largestFirst(instances)) {
                WorkingNode best = null;
                for (WorkingNode node : candidates) {
                    if (allowed(node.model, instance.resources(), models) && node.fitsNow(instance.resources()) && mayBreak(node, instance.resources())
                            && (best == null || node.freeGpuCount() < best.freeGpuCount() || (node.freeGpuCount() == best.freeGpuCount() && node.index < best.index))) {
                        best = node;
                    }
                }
                if (best == null) {
                    return null;
                }
                placements.add(new Placement(instance.rank(), best.name, take(best, instance.resources())));
            }
            gang.commit();
        }
        placements.sort(Comparator.comparingInt(Placement::rank));
        return placements;
    }

    /**
     * Places one extra instance of an elastic run ({@link ElasticPass}), best fit as any instance, but never on a whole
     * free node kept for the queue's whole-node gangs, whatever its size: an extra must not take what a gang that waits
     * for nodes is kept. {@code null}: nowhere.
     */
    List<Placement> placeExtra(InstanceRequest instance, Set<String> models, QuotaId pin) {
        WorkingNode node = bestFit(instance.resources(), models, pin);
        if (node == null || (instance.resources().gpu() > 0 && node.wholeFree() && buckets.wholeFree() <= wholeReserve)) {
            return null;
        }
        return List.of(new Placement(instance.rank(), node.name, take(node, instance.resources(), pin)));
    }

    /** Instances in placing order: more GPUs first, then more cpu, then by rank. */
    static List<InstanceRequest> largestFirst(List<InstanceRequest> instances) {
        List<InstanceRequest> order = new ArrayList<>(instances);
        order.sort(Comparator.comparingInt((InstanceRequest r) -> r.resources().gpu()).reversed()
                .thenComparing(Comparator.comparingLong((InstanceRequest r) -> r.resources().milliCpu()).reversed())
                .thenComparingInt(InstanceRequest::rank));
        return order;
    }

    /** Holds what a placement found with {@code freed} released needs beyond {@code freed} ({@link HoldBeyond}). */
    List<Allocation> holdBeyond(List<Placement> placements, List<InstanceRequest> instances, List<Allocation> freed) {
        return HoldBeyond.hold(this, placements, instances, freed);
    }

    /** Takes exactly these GPUs and the rest of {@code amount} on the node (a hold that is no placement's). */
    void takeExactly(WorkingNode node, Resources amount, List<Integer> gpus) {
        move(node, () -> node.takeExactly(amount, gpus), amount, -1, null);
    }

    /**
     * A necessary condition for {@link #placeGang}, without taking anything: the gang's total is free where it may go,
     * and some node has room for its {@code largest} instance. Once false it stays false while nothing is given back.
     */
    boolean mayFitNow(List<InstanceRequest> instances, Resources largest, Set<String> models) {
        return roughlyFits(instances, models) && bestFit(largest, models) != null;
    }

    /** What is free now on nodes of {@code models} ({@code null}: any), for a message. */
    Resources freeWhere(Set<String> models) {
        if (models == null) {
            return freeTotal.toResources();
        }
        Amount free = new Amount();
        for (String model : models) {
            Amount some = freeByModel.get(model);
            if (some != null) {
                free.add(some, 1);
            }
        }
        return free.toResources();
    }

    /** A quick necessary condition: the gang's total is free somewhere it may go. */
    private boolean roughlyFits(List<InstanceRequest> instances, Set<String> models) {
        Amount need = new Amount();
        instances.forEach(r -> need.add(r.resources(), 1));
        Amount free = new Amount();
        if (models == null) {
            free = freeTotal;
        } else {
            for (String model : models) {
                Amount some = freeByModel.get(model);
                if (some != null) {
                    free.add(some, 1);
                }
            }
        }
        return need.milliCpu <= free.milliCpu && need.memory <= free.memory && need.gpu <= free.gpu;
    }

    /** Whether nodes of {@code nodeModel} may take this request, given the run's allowed models. */
    static boolean allowed(String nodeModel, Resources request, Set<String> models) {
        if (models != null && !models.contains(nodeModel)) {
            return false;
        }
        return request.gpu() == 0 || request.gpuModel() == null || request.gpuModel().equals(nodeModel);
    }

    WorkingNode bestFit(Resources request, Set<String> models) {
        return bestFit(request, models, null);
    }

    /**
     * The node for a request: where its quota's guaranteed work is ({@code pin} not null), then where any guaranteed
     * work is, then anywhere; best fit in each.
     */
    WorkingNode bestFit(Resources request, Set<String> models, QuotaId pin) {
        if (request.gpu() > 0 && request.gpu() < maxNodeGpus) {
            if (pin != null) {
                WorkingNode found = buckets.best(request, models, pin, wholeReserve);
                if (found != null) {
                    return found;
                }
            }
            WorkingNode found = buckets.best(request, models, NodeBuckets.ANY, wholeReserve);
            if (found != null) {
                return found;
            }
        }
        return buckets.best(request, models, null, wholeReserve);
    }

    List<Integer> take(WorkingNode node, Resources request) {
        return take(node, request, null);
    }

    List<Integer> take(WorkingNode node, Resources request, QuotaId pin) {
        List<List<Integer>> taken = new ArrayList<>(1);
        move(node, () -> taken.add(node.take(request)), request, -1, pin);
        return taken.get(0);
    }

    /**
     * Applies a change to a node, keeping its buckets and the free totals right. {@code pin}: the quota of the
     * guaranteed run whose allocation this is (its GPUs are counted as pinned on the node), or {@code null}.
     */
    private void move(WorkingNode node, Runnable change, Resources amount, int sign, QuotaId pin) {
        journal(node);
        leave(node);
        change.run();
        if (pin != null && amount.gpu() > 0) {
            // sign -1 takes (the run holds more here), +1 gives back.
            node.pinnedByQuota.merge(pin, -sign * amount.gpu(), (a, b) -> a + b == 0 ? null : a + b);
        }
        if (node.schedulable) {
            freeByModel.get(node.model).add(amount, sign);
            freeTotal.add(amount, sign);
        }
        join(node);
    }

    /** Whether some schedulable node (of the allowed models) could hold the request if it were empty. */
    boolean couldEverFit(Resources request, Set<String> models) {
        for (var entry : shapes.entrySet()) {
            if (!allowed(entry.getKey(), request, models)) {
                continue;
            }
            for (Resources shape : entry.getValue()) {
                if (shape.covers(request)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Holds nodes for a run that is next in line but does not fit yet ({@link GangHold}); whether any were. */
    boolean reserveFor(List<InstanceRequest> instances, Set<String> models) {
        return GangHold.holdFor(this, instances, models);
    }

    /** Whether taking {@code need} would break a whole free node kept for the queue's whole-node gangs. */
    boolean breaksAKeptWholeNode(WorkingNode node, Resources need) {
        return need.gpu() > 0 && need.gpu() < node.capacity.gpu() && node.wholeFree() && buckets.wholeFree() <= wholeReserve;
    }

    /** GPUs of schedulable nodes, by model. */
    Map<String, Long> gpusByModel() {
        Map<String, Long> gpus = new TreeMap<>();
        for (WorkingNode node : nodes) {
            if (node.schedulable) {
                gpus.merge(node.model, (long) node.capacity.gpu(), Long::sum);
            }
        }
        return gpus;
    }

    /** Free capacity of every node, for tests: name to {cpu, memory, gpu}. */
    Map<String, Resources> free() {
        Map<String, Resources> free = new TreeMap<>();
        for (WorkingNode node : nodes) {
            free.put(node.name, new Resources(Math.max(0, node.freeMilliCpu), Math.max(0, node.freeMemory), node.freeGpuCount(), null));
        }
        return free;
    }

    /**
     * Everything a change can touch, as text, for tests that check a rollback puts it all back: each node's free
     * capacity, GPUs and pins, the free totals, the whole-node counts and which buckets hold which nodes.
     */
    String contents() {
        StringBuilder out = new StringBuilder();
        for (WorkingNode node : nodes) {
            out.append(node.name).append(": cpu ").append(node.freeMilliCpu).append(", memory ").append(node.freeMemory).append(", gpus ")
                    .append(node.freeGpus).append(", pinned ").append(new TreeMap<>(node.pinnedByQuota)).append('\n');
        }
        out.append("free ").append(freeTotal.exact()).append(", by model ");
        freeByModel.forEach((model, free) -> out.append(model).append('=').append(free.exact()).append(' '));
        out.append("\nreserved ").append(wholeReserve).append('\n').append(buckets.contents()).append(domains.contents());
        return out.toString();
    }
}
