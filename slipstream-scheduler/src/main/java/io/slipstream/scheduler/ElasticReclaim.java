package io.slipstream.scheduler;

import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Step 3a of a cycle, when elastic runs hold extras on idle capacity: a reclaim takes those extras before it stops any
 * run whole (docs/elastic.md). The extras ("units", one live instance each, of runs not decided this cycle) are taken
 * in the order of their runs ({@link VictimSearch#VICTIM_ORDER}), a run's highest rank first, and a run keeps its
 * minimum. With every unit gone, if the run fits, each unit it fits without is put back, the last in that order first:
 * only shrinks. If it does not fit, runs are stopped whole as well, the fewest the victim search finds with the units
 * gone (a run with units is a candidate without them), and then every unit the run fits without is put back (those of a
 * run stopped whole go with it). All of it is tried and undone: the cycle preempts, shrinks and holds.
 */
final class ElasticReclaim {
    /**
     * What a reclaim takes: runs stopped whole, in victim order, and runs shrunk with the instances each loses (in
     * victim order). {@link #NO_EXTRAS}: there were no extras on the nodes the run may use, decide as without elastic runs.
     */
    record Plan(List<ActiveRun> whole, Map<ActiveRun, List<Allocation>> shrinks) {
        static final Plan NO_EXTRAS = new Plan(List.of(), Map.of());
    }

    /** One extra instance a shrink may take. */
    private record Unit(ActiveRun run, Allocation allocation) {
    }

    private final ClusterState state;
    private final WorkingCluster cluster;
    private final CycleRuns reclaimable;
    private final VictimSearch victims;
    /** This cycle's extras on idle capacity, by the models asked for ({@code "\0any"}: any), made when first needed. */
    private final Map<Set<String>, List<Unit>> unitsByModel = new HashMap<>();
    /** This cycle's runs with extras on their guarantee, by quota ({@link #forGuarantee}), made when first needed. */
    private Map<io.slipstream.api.run.QuotaId, List<ActiveRun>> inQuotaByQuota;

    ElasticReclaim(ClusterState state, CycleRuns reclaimable, VictimSearch victims) {
        this.state = state;
        this.cluster = state.cluster;
        this.reclaimable = reclaimable;
        this.victims = victims;
    }

    /**
     * What to take so that {@code run} (a gang: the minimum of an elastic run) fits on nodes of {@code model}, with
     * {@code alreadyStopping} gone: {@link Plan#NO_EXTRAS} when no elastic extras are on those nodes, an empty plan when
     * what is already stopping suffices, {@code null} when nothing helps.
     */
    Plan choose(PendingRun run, Set<String> model, List<ActiveRun> alreadyStopping) {
        List<Unit> units = units(model);
        if (units.isEmpty()) {
            return Plan.NO_EXTRAS;
        }
        return state.tryAndUndo(() -> {
            alreadyStopping.forEach(r -> r.allocations().forEach(cluster::release));
            if (fits(run, model)) {
                return alreadyStopping.isEmpty() ? null : new Plan(List.of(), Map.of());
            }
            units.forEach(u -> cluster.release(u.allocation()));
            List<ActiveRun> whole = List.of();
            if (!fits(run, model)) {
                whole = wholeVictims(run, model, units);
                if (whole == null) {
                    return null;
                }
            }
            Set<ActiveRun> stopped = Collections.newSetFromMap(new IdentityHashMap<>());
            whole.forEach(w -> stopped.add(reclaimableRun(w)));
            List<Unit> taken = new ArrayList<>();
            for (int i = units.size() - 1; i >= 0; i--) {
                Unit unit = units.get(i);
                if (stopped.contains(unit.run())) {
                    continue; // it goes with its run
                }
                cluster.hold(unit.allocation());
                if (!fits(run, model)) {
                    cluster.release(unit.allocation());
                    taken.add(0, unit);
                }
            }
            Map<ActiveRun, List<Allocation>> shrinks = new LinkedHashMap<>();
            taken.forEach(u -> shrinks.computeIfAbsent(u.run(), r -> new ArrayList<>()).add(u.allocation()));
            List<ActiveRun> real = new ArrayList<>();
            whole.forEach(w -> real.add(reclaimableRun(w)));
            return new Plan(real, shrinks);
        });
    }

    /**
     * With every unit gone, the fewest runs to stop whole: the victim search among its candidates, each seen without its
     * units. They are left released; {@code null} when none suffice.
     */
    private List<ActiveRun> wholeVictims(PendingRun run, Set<String> model, List<Unit> units) {
        Map<ActiveRun, List<Allocation>> without = new IdentityHashMap<>();
        units.forEach(u -> without.computeIfAbsent(u.run(), r -> new ArrayList<>()).add(u.allocation()));
        List<ActiveRun> candidates = new ArrayList<>();
        for (ActiveRun candidate : victims.candidatesFor(run, model)) {
            List<Allocation> gone = without.get(reclaimableRun(candidate));
            if (gone == null) {
                candidates.add(candidate);
            } else {
                List<Allocation> left = new ArrayList<>(candidate.allocations());
                left.removeAll(gone);
                candidates.add(candidate.withAllocations(left));
            }
        }
        List<ActiveRun> chosen = victims.choose(run, model, List.of(), candidates);
        if (chosen == null || chosen.isEmpty()) {
            return null;
        }
        chosen.forEach(v -> v.allocations().forEach(cluster::release));
        return chosen;
    }

    /** What the cycle does when extras make room for a borrower (its place in the list): shrinks them and holds for it. */
    interface TakenForQueued {
        void take(int borrower, Map<ActiveRun, List<Allocation>> taken, Set<String> model);
    }

    /**
     * Step 5a: borrowers still waiting for idle capacity ({@code places} in {@code borrowers}, in queue order) take the
     * extras on idle capacity of elastic runs of their priority or lower when that makes room for their minimum
     * ({@link #forQueued(PendingRun, Resources, Set)}). Extras are never a reason to wait. A run whose victims are still
     * stopping ({@code stopping}) takes nothing more.
     */
    void forQueued(List<PendingRun> borrowers, List<Resources> requests, List<Integer> places, AllowedModels allowed,
            java.util.function.Predicate<PendingRun> stopping, TakenForQueued taken) {
        Set<String> hopeless = new java.util.HashSet<>();
        for (int borrower : places) {
            PendingRun run = borrowers.get(borrower);
            Resources request = requests.get(borrower);
            if (stopping.test(run) || !state.book.fitsMax(run.quota(), request)) {
                continue;
            }
            Set<String> model = allowed.of(run.quota(), RealTimeResources.NotInQuota, request);
            // What found no room finds none later in this step either (extras only go): the same shape, pool and priority.
            String shape = state.book.poolOf(run.quota()) + ":" + model + ":" + run.priority() + ":"
                    + run.instances().stream().map(r -> r.resources().toString()).sorted().toList();
            if (hopeless.contains(shape)) {
                continue;
            }
            Map<ActiveRun, List<Allocation>> shrinks = forQueued(run, request, model);
            if (shrinks == null) {
                hopeless.add(shape);
            } else {
                taken.take(borrower, shrinks, model);
            }
        }
    }

    /**
     * The extras on idle capacity that a queued borrower's minimum ({@code run}, a gang) takes so that it fits
     * on nodes of {@code model} and its pool lends it {@code request}: only extras of runs of its priority or lower, taken
     * and put back as for a reclaim, but never a run whole. {@code null}: extras do not make room for it.
     */
    Map<ActiveRun, List<Allocation>> forQueued(PendingRun run, Resources request, Set<String> model) {
        List<Unit> units = new ArrayList<>();
        long gpus = 0;
        for (Unit unit : units(model)) {
            if (unit.run().priority() <= run.priority()) {
                units.add(unit);
                gpus += unit.allocation().resources().gpu();
            }
        }
        if (units.isEmpty() || gpus + cluster.freeWhere(model).gpu() < request.gpu()) {
            return null;
        }
        QuotaBook book = state.book;
        String pool = book.poolOf(run.quota());
        return state.tryAndUndo(() -> {
            for (Unit unit : units) {
                cluster.release(unit.allocation());
                book.charge(unit.run().quota(), unit.allocation().resources(), RealTimeResources.NotInQuota, -1);
            }
            if (!book.idleAvailable(pool, request) || !fits(run, model)) {
                return null;
            }
            List<Unit> taken = new ArrayList<>();
            for (int i = units.size() - 1; i >= 0; i--) {
                Unit unit = units.get(i);
                cluster.hold(unit.allocation());
                book.charge(unit.run().quota(), unit.allocation().resources(), RealTimeResources.NotInQuota, 1);
                if (!book.idleAvailable(pool, request) || !fits(run, model)) {
                    cluster.release(unit.allocation());
                    book.charge(unit.run().quota(), unit.allocation().resources(), RealTimeResources.NotInQuota, -1);
                    taken.add(0, unit);
                }
            }
            Map<ActiveRun, List<Allocation>> shrinks = new LinkedHashMap<>();
            taken.forEach(u -> shrinks.computeIfAbsent(u.run(), r -> new ArrayList<>()).add(u.allocation()));
            return shrinks;
        });
    }

    /**
     * Step 3: the extras on its quota's guarantee that a queued guaranteed run's minimum ({@code run}, {@code request})
     * takes when its quota's guarantee does not hold it otherwise: those of its own quota's elastic runs of its priority or
     * lower, in victim order (a run's highest rank first), just enough for the guarantee to hold it, then each it does not
     * need put back. Taken by the ledger only (where the run then goes is the reclaim's). {@code null}: they are not enough.
     */
    Map<ActiveRun, List<Allocation>> forGuarantee(PendingRun run, Resources request) {
        if (inQuotaByQuota == null) {
            // Once per cycle: the runs with extras on their guarantee, by quota, in victim order.
            inQuotaByQuota = new HashMap<>();
            for (ActiveRun active : reclaimable.elastic()) {
                if (active.quota() != null && !active.extrasInQuota().isEmpty()) {
                    inQuotaByQuota.computeIfAbsent(active.quota(), q -> new ArrayList<>()).add(active);
                }
            }
            inQuotaByQuota.values().forEach(runs -> runs.sort(VictimSearch.VICTIM_ORDER));
        }
        List<ActiveRun> runs = new ArrayList<>();
        long gpus = 0;
        for (ActiveRun active : inQuotaByQuota.getOrDefault(run.quota(), List.of())) {
            if (active.priority() <= run.priority() && reclaimable.contains(active)) {
                runs.add(active);
                gpus += ClusterState.total(active.extrasInQuota()).gpu();
            }
        }
        QuotaBook book = state.book;
        if (runs.isEmpty() || book.freeGuaranteeGpus(run.quota()) + gpus < request.gpu()) {
            return null;
        }
        return state.tryAndUndo(() -> {
            List<Unit> taken = new ArrayList<>();
            for (ActiveRun active : runs) {
                for (Allocation allocation : active.extrasInQuota()) {
                    if (book.fitsGuarantee(run.quota(), request)) {
                        break;
                    }
                    book.charge(active.quota(), allocation.resources(), RealTimeResources.InQuota, -1);
                    taken.add(new Unit(active, allocation));
                }
            }
            if (!book.fitsGuarantee(run.quota(), request)) {
                return null;
            }
            for (int i = taken.size() - 1; i >= 0; i--) {
                Unit unit = taken.get(i);
                book.charge(unit.run().quota(), unit.allocation().resources(), RealTimeResources.InQuota, 1);
                if (book.fitsGuarantee(run.quota(), request)) {
                    taken.remove(i); // not needed: it stays
                } else {
                    book.charge(unit.run().quota(), unit.allocation().resources(), RealTimeResources.InQuota, -1);
                }
            }
            Map<ActiveRun, List<Allocation>> shrinks = new LinkedHashMap<>();
            taken.forEach(u -> shrinks.computeIfAbsent(u.run(), r -> new ArrayList<>()).add(u.allocation()));
            return shrinks;
        });
    }

    /**
     * Step 3, room under its quota's max ({@link OwnQuotaRoom#UNDER_MAX}) for a queued guaranteed run ({@code run},
     * {@code request}): its quota's borrowed extras (of its elastic runs, on idle capacity, guaranteed or not) go first,
     * in victim order (a run's highest rank first); only if with all of them gone the max still does not hold it are the
     * quota's borrowers stopped whole as well, in victim order, each seen without its extras, as many as it takes. Then each
     * extra it does not need is put back, the last first (those of a run stopped whole go with it). By the ledger alone,
     * tried and undone. {@link Plan#NO_EXTRAS}: the quota has no borrowed extras (decide as without elastic runs);
     * {@code null}: not even all of it makes room.
     */
    Plan forMax(PendingRun run, Resources request) {
        if (run.quota() == null) {
            return Plan.NO_EXTRAS; // no quota, no max (nor a guarantee that brings it here)
        }
        List<ActiveRun> runs = new ArrayList<>();
        for (ActiveRun active : reclaimable.elastic()) {
            if (run.quota().equals(active.quota()) && !active.shrinkable().isEmpty()) {
                runs.add(active);
            }
        }
        if (runs.isEmpty()) {
            return Plan.NO_EXTRAS;
        }
        runs.sort(VictimSearch.VICTIM_ORDER);
        List<Unit> units = new ArrayList<>();
        Map<io.slipstream.api.run.RunId, Resources> unitsOf = new HashMap<>(); // looked up only, never walked
        for (ActiveRun active : runs) {
            for (Allocation allocation : active.shrinkable()) {
                units.add(new Unit(active, allocation));
                unitsOf.merge(active.id(), allocation.resources(), Resources::plus);
            }
        }
        List<ActiveRun> candidates = new ArrayList<>(); // OwnQuotaRoom.UNDER_MAX's: the quota's runs on idle capacity
        for (ActiveRun active : reclaimable.borrowers()) {
            if (run.quota().equals(active.quota())) {
                candidates.add(active);
            }
        }
        candidates.sort(VictimSearch.VICTIM_ORDER);
        QuotaBook book = state.book;
        return state.tryAndUndo(() -> {
            units.forEach(u -> book.charge(run.quota(), u.allocation().resources(), RealTimeResources.NotInQuota, -1));
            List<ActiveRun> whole = new ArrayList<>();
            Set<io.slipstream.api.run.RunId> stopped = new java.util.HashSet<>();
            for (ActiveRun victim : candidates) {
                if (book.fitsMax(run.quota(), request)) {
                    break;
                }
                Resources left = ClusterState.total(victim).minus(unitsOf.getOrDefault(victim.id(), Resources.NONE));
                book.charge(run.quota(), left, RealTimeResources.NotInQuota, -1);
                whole.add(victim);
                stopped.add(victim.id());
            }
            if (!book.fitsMax(run.quota(), request)) {
                return null;
            }
            List<Unit> taken = new ArrayList<>();
            for (int i = units.size() - 1; i >= 0; i--) {
                Unit unit = units.get(i);
                if (stopped.contains(unit.run().id())) {
                    continue; // it goes with its run
                }
                book.charge(run.quota(), unit.allocation().resources(), RealTimeResources.NotInQuota, 1);
                if (!book.fitsMax(run.quota(), request)) {
                    book.charge(run.quota(), unit.allocation().resources(), RealTimeResources.NotInQuota, -1);
                    taken.add(0, unit);
                }
            }
            Map<ActiveRun, List<Allocation>> shrinks = new LinkedHashMap<>();
            taken.forEach(u -> shrinks.computeIfAbsent(u.run(), r -> new ArrayList<>()).add(u.allocation()));
            return new Plan(whole, shrinks);
        });
    }

    /** The state's run of a candidate or a view of it. */
    private ActiveRun reclaimableRun(ActiveRun run) {
        ActiveRun kept = state.reclaimable.get(run.id());
        return kept != null ? kept : run;
    }

    /** The cycle's extras on idle capacity on nodes of {@code model}, in the order they are taken, of runs not decided yet. */
    private List<Unit> units(Set<String> model) {
        List<Unit> all = unitsByModel.computeIfAbsent(model == null ? Set.of("\0any") : model, m -> allUnits(model));
        List<Unit> left = new ArrayList<>(all.size());
        for (Unit unit : all) {
            if (reclaimable.contains(unit.run())) {
                left.add(unit);
            }
        }
        return left;
    }

    /** Every extra on idle capacity on nodes of {@code model} as the cycle began, in the order they are taken. */
    private List<Unit> allUnits(Set<String> model) {
        List<ActiveRun> runs = new ArrayList<>();
        for (ActiveRun run : reclaimable.elastic()) {
            if (!run.shrinkable().isEmpty()) {
                runs.add(run);
            }
        }
        if (runs.isEmpty()) {
            return List.of();
        }
        runs.sort(VictimSearch.VICTIM_ORDER);
        List<Unit> units = new ArrayList<>();
        for (ActiveRun run : runs) {
            for (Allocation allocation : run.shrinkable()) {
                if (cluster.hasNode(allocation.node()) && (model == null || model.contains(cluster.modelOf(allocation.node())))) {
                    units.add(new Unit(run, allocation));
                }
            }
        }
        return units;
    }

    private boolean fits(PendingRun run, Set<String> model) {
        return state.tryAndUndo(() -> cluster.placeGang(run.instances(), model) != null);
    }
}
