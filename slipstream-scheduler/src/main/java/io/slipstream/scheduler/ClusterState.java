package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.QuotaType;
import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * What a scheduling cycle starts from: the nodes, the quotas and the active runs, indexed (free capacity by node,
 * quota use, borrowers, runs stopping for others). Built from a {@link ClusterSnapshot} for one cycle, or kept between
 * cycles by a caller that applies the decisions itself and says which runs changed ({@link #add}, {@link #remove},
 * {@link #update}): rebuilding it for every cycle was most of a long replay's time. A cycle works on it and leaves it
 * as it found it (it runs in a {@link Tentative} it never commits), so the same state gives the same decisions as a
 * snapshot of the same runs. Not thread-safe.
 */
public final class ClusterState {
    /** The undo log of the cluster and the book: a cycle runs in a tentative it never commits. */
    private final Journal journal = new Journal();
    final WorkingCluster cluster;
    final QuotaBook book;
    final Map<String, Long> gpusByModel;
    /** GPUs of each model guaranteed to Dedicated quotas. */
    final Map<String, Long> dedicatedGpus = new HashMap<>();
    /** Whether some quota lets its runs be moved: if none does, nothing of defragmentation is computed. */
    final boolean anyMovable;
    private final Map<RunId, ActiveRun> runs = new HashMap<>();
    /** Runs not stopping, by id: those a cycle may preempt or promote. */
    final TreeMap<RunId, ActiveRun> reclaimable = new TreeMap<>();
    /** Of those, the runs on idle capacity (NotInQuota). */
    final TreeMap<RunId, ActiveRun> borrowers = new TreeMap<>();
    /**
     * The same borrowers by quota (those with one), with what each holds: preemption for fairness searches a few
     * quotas' borrowers, in most cycles where borrowers wait. Kept up as runs are added, while each is being read
     * anyway: made in a walk of its own, each borrower read again from memory, it took a tenth of such a cycle.
     * {@code null} once one went or changed, until asked for.
     */
    private Map<QuotaId, QuotaBorrowers> borrowersByQuota = new HashMap<>();
    /** Elastic runs not stopping, by id: those a cycle may grow or shrink. */
    final TreeMap<RunId, ActiveRun> elastic = new TreeMap<>();
    /** Runs stopping for another run (or views of those of their instances that are), by the run their resources go to. */
    final Map<RunId, TreeMap<RunId, ActiveRun>> stoppingFor = new HashMap<>();
    /** GPUs of each model held by General quotas' guaranteed runs. */
    final Map<String, Long> generalGuaranteedGpus = new HashMap<>();
    /** {@link #lendableGpus} by pool, until a run changes. */
    private final Map<String, Long> lendable = new HashMap<>();

    public ClusterState(List<NodeState> nodes, List<QuotaState> quotas) {
        this.cluster = new WorkingCluster(nodes, journal);
        this.book = new QuotaBook(quotas, nodes, journal);
        this.gpusByModel = cluster.gpusByModel();
        this.anyMovable = quotas.stream().anyMatch(QuotaState::allowMoves);
        for (QuotaState quota : quotas) {
            if (quota.type() == QuotaType.Dedicated) {
                dedicatedGpus.merge(quota.gpuModel(), (long) quota.min().gpu(), Long::sum);
            }
        }
    }

    /** The state of a snapshot's nodes, quotas and active runs (its pending runs are the cycle's queue). */
    public static ClusterState of(ClusterSnapshot snapshot) {
        ClusterState state = new ClusterState(snapshot.nodes(), snapshot.quotas());
        List<Allocation> held = new ArrayList<>();
        List<QuotaId> pins = new ArrayList<>();
        for (ActiveRun run : snapshot.active()) {
            state.index(run, 1);
            for (Allocation allocation : run.allocations()) {
                held.add(allocation);
                pins.add(pinOf(run, allocation));
            }
            if (run.elastic() != null) {
                for (ElasticRun.Release release : run.elastic().releasing()) {
                    held.add(release.allocation());
                    pins.add(null);
                }
            }
        }
        // Each node leaves and rejoins its buckets once, not once per allocation.
        state.cluster.holdAll(held, pins);
        return state;
    }

    /** A run now holds resources. A run with the same id must not be here already. */
    public void add(ActiveRun run) {
        index(run, 1);
        if (run.elastic() == null) {
            QuotaId pin = pinOf(run);
            run.allocations().forEach(allocation -> cluster.hold(allocation, pin));
            return;
        }
        run.allocations().forEach(allocation -> cluster.hold(allocation, pinOf(run, allocation)));
        run.elastic().releasing().forEach(release -> cluster.hold(release.allocation(), null));
    }

    /** A run holds nothing any more (it ended or stopped); unknown ids are ignored. */
    public void remove(RunId id) {
        ActiveRun run = runs.get(id);
        if (run != null) {
            if (run.elastic() == null) {
                QuotaId pin = pinOf(run);
                run.allocations().forEach(allocation -> cluster.release(allocation, pin));
            } else {
                run.allocations().forEach(allocation -> cluster.release(allocation, pinOf(run, allocation)));
                run.elastic().releasing().forEach(release -> cluster.release(release.allocation(), null));
            }
            index(run, -1);
        }
    }

    /** A run changed (it was promoted, it is stopping, it saved a checkpoint, it was moved): the same id, the new view. */
    public void update(ActiveRun run) {
        ActiveRun before = runs.get(run.id());
        // An elastic run's views of what it releases are made again: it is taken out and put back (such runs are few).
        if (before != null && before.elastic() == null && run.elastic() == null && holdsTheSame(before, run)) {
            // Only what orders victims or tells movable runs changed (a checkpoint, a move): the same capacity and charges.
            runs.put(run.id(), run);
            if (run.stopping()) {
                if (run.reclaimFor() != null) {
                    stoppingFor.get(run.reclaimFor()).put(run.id(), run);
                }
            } else {
                reclaimable.put(run.id(), run);
                if (run.realTimeResources() == RealTimeResources.NotInQuota) {
                    borrowers.put(run.id(), run);
                    borrowersByQuota = null; // the new view of the run: made again when asked for
                }
            }
            return;
        }
        remove(run.id());
        add(run);
    }

    /** Whether two views of a run hold and are charged the same: the same allocations, quota, standing and stop. */
    private static boolean holdsTheSame(ActiveRun a, ActiveRun b) {
        return a.allocations().equals(b.allocations()) && Objects.equals(a.quota(), b.quota()) && a.realTimeResources() == b.realTimeResources()
                && Objects.equals(a.elastic(), b.elastic())
                && a.stopping() == b.stopping() && Objects.equals(a.reclaimFor(), b.reclaimFor());
    }

    /** Opens the tentative a cycle runs in: the outermost (cycles do not nest, nor run side by side). */
    Tentative cycle() {
        if (journal.recording()) {
            throw new IllegalStateException("a cycle is already under way on this cluster state");
        }
        return journal.open();
    }

    /**
     * Opens a tentative over the working cluster and the quota book together (inside the innermost one open): what
     * either is changed from now on is undone, newest first, unless it is committed.
     */
    Tentative tentative() {
        return journal.open();
    }

    /** What {@code trial} gives, with everything it changed of the cluster and the book undone: a tentative never kept. */
    <T> T tryAndUndo(Supplier<T> trial) {
        Tentative tentative = journal.open();
        try {
            return trial.get();
        } finally {
            tentative.discard();
        }
    }

    /**
     * Where {@code instances} would go once {@code freed} is given back (tried and undone: its owners still hold it): on
     * the freed nodes if they fit there, else anywhere; what they hold beyond the freed resources then comes from free
     * capacity elsewhere. {@code null}: nowhere.
     */
    List<Placement> placeOnFreed(List<InstanceRequest> instances, java.util.Set<String> models, List<Allocation> freed) {
        return tryAndUndo(() -> {
            freed.forEach(cluster::release);
            java.util.Set<String> nodes = new java.util.TreeSet<>();
            freed.forEach(a -> nodes.add(a.node()));
            List<Placement> placements = cluster.placeGangOn(instances, models, nodes);
            return placements != null ? placements : cluster.placeGang(instances, models);
        });
    }

    /** The working cluster and the quota book, as text (tests compare them before and after a tentative). */
    String contents() {
        return cluster.contents() + book.contents();
    }

    /** The run of that id as last added ({@code null}: none). */
    public ActiveRun get(RunId id) {
        return runs.get(id);
    }

    /**
     * The most GPUs (with no cpu or memory) that the sharing pool of {@code quota} could lend now, by the quotas' use as
     * it is: unused guarantees and capacity no quota guarantees, less what is borrowed. Within a cycle that amount only
     * shrinks, unless the cycle preempts runs of a quota with a max, or within a quota (they stop being charged).
     */
    public long lendableGpus(QuotaId quota) {
        return lendable.computeIfAbsent(book.poolOf(quota), this::lendableGpus);
    }

    private long lendableGpus(String pool) {
        long low = 0;
        long high = Math.max(0, book.lendLimit(pool).gpu);
        if (!book.idleAvailable(pool, gpus(low))) {
            return -1;
        }
        while (low < high) {
            long mid = low + (high - low + 1) / 2;
            if (book.idleAvailable(pool, gpus(mid))) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        return low;
    }

    private static Resources gpus(long count) {
        return new Resources(0, 0, (int) Math.min(Integer.MAX_VALUE, count), null);
    }

    public int size() {
        return runs.size();
    }

    /** Adds ({@code sign} 1) or takes out (-1) a run everywhere but in the cluster's free capacity. */
    private void index(ActiveRun run, int sign) {
        lendable.clear();
        if (sign > 0 && runs.putIfAbsent(run.id(), run) != null) {
            throw new IllegalArgumentException("run " + run.id() + " is active already");
        }
        if (sign < 0) {
            runs.remove(run.id());
        }
        if (run.elastic() != null) {
            indexElastic(run, sign);
        }
        if (run.stopping()) {
            // It holds its nodes until its processes are gone, but its quota no longer counts it.
            if (run.reclaimFor() != null && run.elastic() == null) {
                indexStopping(run.reclaimFor(), run, sign);
            }
            return;
        }
        Resources holds = total(run);
        if (run.mixed()) {
            charge(book, run, sign);
        } else {
            book.charge(run.quota(), holds, run.realTimeResources(), sign);
        }
        book.holdOnClosed(run.allocations(), sign);
        boolean borrower = run.realTimeResources() == RealTimeResources.NotInQuota;
        if (sign > 0) {
            reclaimable.put(run.id(), run);
            if (borrower) {
                borrowers.put(run.id(), run);
                if (borrowersByQuota != null) {
                    indexBorrower(borrowersByQuota, run, holds);
                }
            }
        } else {
            reclaimable.remove(run.id());
            if (borrowers.remove(run.id()) != null) {
                borrowersByQuota = null;
            }
        }
        QuotaState quota = book.quota(run.quota());
        if (!borrower && quota != null && quota.type() == QuotaType.General) {
            for (Allocation allocation : run.allocations()) {
                if (cluster.hasNode(allocation.node()) && !run.onIdleCapacity(allocation)) {
                    generalGuaranteedGpus.merge(cluster.modelOf(allocation.node()), (long) sign * allocation.resources().gpu(), Long::sum);
                }
            }
        }
    }

    /** The borrowers by quota (those with one). */
    Map<QuotaId, QuotaBorrowers> borrowersByQuota() {
        if (borrowersByQuota == null) {
            Map<QuotaId, QuotaBorrowers> byQuota = new HashMap<>();
            for (ActiveRun run : borrowers.values()) {
                indexBorrower(byQuota, run, total(run));
            }
            borrowersByQuota = byQuota;
        }
        return borrowersByQuota;
    }

    private static void indexBorrower(Map<QuotaId, QuotaBorrowers> byQuota, ActiveRun run, Resources holds) {
        if (run.quota() != null) {
            byQuota.computeIfAbsent(run.quota(), q -> new QuotaBorrowers()).add(new QuotaBorrowers.Borrowed(run, holds));
        }
    }

    /** The quota a run's allocations are pinned to: guaranteed and not stopping (no reclaim clears them). */
    static QuotaId pinOf(ActiveRun run) {
        return run.realTimeResources() == RealTimeResources.InQuota && !run.stopping() ? run.quota() : null;
    }

    /** The quota one live instance of a run is pinned to: an elastic run's extras on idle capacity are not. */
    static QuotaId pinOf(ActiveRun run, Allocation allocation) {
        return run.onIdleCapacity(allocation) ? null : pinOf(run);
    }

    /** A run whose resources go to {@code forRun} is stopping (or some of its instances are): {@code sign} 1 adds it, -1 takes it out. */
    private void indexStopping(RunId forRun, ActiveRun stopping, int sign) {
        if (sign > 0) {
            stoppingFor.computeIfAbsent(forRun, id -> new TreeMap<>()).put(stopping.id(), stopping);
        } else {
            TreeMap<RunId, ActiveRun> of = stoppingFor.get(forRun);
            of.remove(stopping.id());
            if (of.isEmpty()) {
                stoppingFor.remove(forRun);
            }
        }
    }

    /**
     * An elastic run in the index of elastic runs (those not stopping), and what it releases (and, stopping, holds) for
     * other runs, as views of it stopping for each: a view holds only the allocations that go to that run.
     */
    private void indexElastic(ActiveRun run, int sign) {
        if (!run.stopping()) {
            if (sign > 0) {
                elastic.put(run.id(), run);
            } else {
                elastic.remove(run.id());
            }
        }
        Map<RunId, List<Allocation>> goingTo = new TreeMap<>();
        if (run.stopping() && run.reclaimFor() != null) {
            goingTo.put(run.reclaimFor(), new ArrayList<>(run.allocations()));
        }
        for (ElasticRun.Release release : run.elastic().releasing()) {
            if (release.forRun() != null) {
                goingTo.computeIfAbsent(release.forRun(), id -> new ArrayList<>()).add(release.allocation());
            }
        }
        goingTo.forEach((forRun, allocations) -> indexStopping(forRun, stoppingView(run, forRun, allocations), sign));
    }

    /** A run seen as stopping for {@code forRun} with only {@code allocations}: what it gives back to that run. */
    static ActiveRun stoppingView(ActiveRun run, RunId forRun, List<Allocation> allocations) {
        return new ActiveRun(run.id(), run.quota(), run.idleMode(), run.priority(), run.startedAt(), run.lastCheckpointAt(), run.realTimeResources(),
                allocations, true, forRun, run.movedAt(), null);
    }

    /** Charges ({@code sign} 1) or uncharges (-1) what a run's live instances hold, each as it stands: on its guarantee or borrowed. */
    static void charge(QuotaBook book, ActiveRun run, int sign) {
        if (!run.mixed()) {
            book.charge(run.quota(), total(run), run.realTimeResources(), sign);
            return;
        }
        book.charge(run.quota(), inQuota(run), RealTimeResources.InQuota, sign);
        book.charge(run.quota(), borrowed(run), RealTimeResources.NotInQuota, sign);
    }

    /** What a run's live instances on its guarantee hold. */
    static Resources inQuota(ActiveRun run) {
        if (run.realTimeResources() != RealTimeResources.InQuota) {
            return Resources.NONE;
        }
        Resources sum = Resources.NONE;
        for (Allocation allocation : run.allocations()) {
            if (!run.onIdleCapacity(allocation)) {
                sum = sum.plus(allocation.resources());
            }
        }
        return sum;
    }

    /** What a run's live instances on idle capacity hold. */
    static Resources borrowed(ActiveRun run) {
        Resources sum = Resources.NONE;
        for (Allocation allocation : run.allocations()) {
            if (run.onIdleCapacity(allocation)) {
                sum = sum.plus(allocation.resources());
            }
        }
        return sum;
    }

    /** What a set of allocations holds. */
    static Resources total(List<Allocation> allocations) {
        Resources sum = Resources.NONE;
        for (Allocation allocation : allocations) {
            sum = sum.plus(allocation.resources());
        }
        return sum;
    }

    /** What a queued run asks for, all its instances together. */
    static Resources total(PendingRun run) {
        Resources sum = Resources.NONE;
        for (InstanceRequest instance : run.instances()) {
            sum = sum.plus(instance.resources());
        }
        return sum;
    }

    static Resources total(ActiveRun run) {
        Resources sum = Resources.NONE;
        for (Allocation allocation : run.allocations()) {
            sum = sum.plus(allocation.resources());
        }
        return sum;
    }

    @Override
    public String toString() {
        return "ClusterState[" + runs.size() + " active runs, " + cluster.wholeFreeNodes() + " whole free nodes]";
    }
}
