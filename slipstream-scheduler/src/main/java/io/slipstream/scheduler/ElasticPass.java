package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.api.spec.Resources;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeSet;

/**
 * Step 6 of a cycle: elastic runs get instances beyond their minimum as capacity allows (docs/elastic.md), after every
 * queued run's minimum was decided (a queued run's gang comes before another run's extras). The runs admitted this cycle
 * and the running ones with vacant slots (none of whose instances a shrink is still removing) are served one instance at
 * a time, water-filling: higher priority first, then the run holding the smallest fraction of its maximum, then the one
 * that started first, then by id. Each instance goes on the run's quota's guarantee when the run is guaranteed and its
 * guarantee and max hold it (less what is promised to the quota's runs that wait for nodes), else on idle capacity when
 * the run may borrow and its pool lends it; a run one of whose instances fits neither is done for the pass (capacity
 * only shrinks within it). Extras never preempt anything.
 */
final class ElasticPass {
    /** A run that may get instances this cycle: admitted this cycle ({@code admitted}) or running ({@code active}). */
    static final class Growing {
        final RunId id;
        final QuotaId quota;
        final IdleMode idleMode;
        final int priority;
        final Instant since;
        final boolean inQuota;
        final PendingRun admitted;
        final ActiveRun active;
        private final ArrayDeque<InstanceRequest> vacant;
        private int live;
        private final int most;
        private final List<Placement> placed = new ArrayList<>();
        private final Set<Integer> borrowed = new TreeSet<>();

        private Growing(RunId id, QuotaId quota, IdleMode idleMode, int priority, Instant since, boolean inQuota, PendingRun admitted, ActiveRun active,
                List<InstanceRequest> vacant, int live, int most) {
            this.id = id;
            this.quota = quota;
            this.idleMode = idleMode;
            this.priority = priority;
            this.since = since;
            this.inQuota = inQuota;
            this.admitted = admitted;
            this.active = active;
            this.vacant = new ArrayDeque<>(vacant);
            this.live = live;
            this.most = most;
        }

        /** An elastic run admitted this cycle, {@code where} its minimum stands, with its extras to place. */
        static Growing admitted(PendingRun run, RealTimeResources where, Instant now) {
            return new Growing(run.id(), run.quota(), run.idleMode(), run.priority(), now, where == RealTimeResources.InQuota, run, null, run.extras(),
                    run.instances().size() - run.extras().size(), run.instances().size());
        }

        /** A running elastic run with vacant slots ({@code null}: none, or a shrink of it is in flight). */
        static Growing active(ActiveRun run) {
            ElasticRun elastic = run.elastic();
            if (elastic == null || run.stopping() || !elastic.releasing().isEmpty()) {
                return null;
            }
            List<InstanceRequest> vacant = elastic.vacant(run.allocations());
            return vacant.isEmpty() ? null : new Growing(run.id(), run.quota(), run.idleMode(), run.priority(), run.startedAt(),
                    run.realTimeResources() == RealTimeResources.InQuota, null, run, vacant, run.allocations().size(), elastic.instances().size());
        }

        /** The water-filling order. */
        static int inGrowOrder(Growing a, Growing b) {
            if (a.priority != b.priority) {
                return a.priority > b.priority ? -1 : 1;
            }
            int byShare = Long.compare((long) a.live * b.most, (long) b.live * a.most);
            if (byShare != 0) {
                return byShare;
            }
            int byAge = a.since.compareTo(b.since);
            return byAge != 0 ? byAge : a.id.compareTo(b.id);
        }
    }

    private final QuotaBook book;
    private final WorkingCluster cluster;
    private final AllowedModels allowed;
    /** What of each quota's guarantee its runs that wait for nodes were promised this cycle: extras there would only give way to them. */
    private final Map<QuotaId, Resources> promised;

    ElasticPass(QuotaBook book, WorkingCluster cluster, AllowedModels allowed, Map<QuotaId, Resources> promised) {
        this.book = book;
        this.cluster = cluster;
        this.allowed = allowed;
        this.promised = promised;
    }

    /**
     * Decides the step: the runs of {@code pending} admitted this cycle ({@code admitted}: where each one's admission is in
     * {@code decisions}) get their admission's extras, and the elastic runs of {@code reclaimable} with vacant slots a
     * {@link Decision.Grow}.
     */
    void decide(List<Decision> decisions, Map<RunId, Integer> admitted, Map<RunId, PendingRun> pending, CycleRuns reclaimable, Instant now) {
        List<Growing> growing = new ArrayList<>();
        admitted.forEach((id, at) -> growing.add(Growing.admitted(pending.get(id), ((Decision.Admit) decisions.get(at)).realTimeResources(), now)));
        for (ActiveRun run : reclaimable.elastic()) {
            Growing candidate = Growing.active(run);
            if (candidate != null) {
                growing.add(candidate);
            }
        }
        for (Growing run : place(growing)) {
            if (run.admitted != null) {
                int at = admitted.get(run.id);
                Decision.Admit admit = (Decision.Admit) decisions.get(at);
                List<Placement> all = new ArrayList<>(admit.placements());
                all.addAll(run.placed);
                all.sort(java.util.Comparator.comparingInt(Placement::rank));
                decisions.set(at, new Decision.Admit(admit.runId(), all, admit.realTimeResources(), run.borrowed));
            } else {
                decisions.add(new Decision.Grow(run.id, run.placed, run.borrowed));
            }
        }
    }

    /** Places instances of the runs, water-filling; returns those that got some, in the order given. */
    private List<Growing> place(List<Growing> runs) {
        PriorityQueue<Growing> order = new PriorityQueue<>(Growing::inGrowOrder);
        for (Growing run : runs) {
            if (!run.vacant.isEmpty()) {
                order.add(run);
            }
        }
        while (!order.isEmpty()) {
            Growing run = order.poll();
            if (place(run, run.vacant.peekFirst())) {
                run.vacant.pollFirst();
                run.live++;
                if (!run.vacant.isEmpty()) {
                    order.add(run);
                }
            }
        }
        List<Growing> grew = new ArrayList<>();
        for (Growing run : runs) {
            if (!run.placed.isEmpty()) {
                run.placed.sort(java.util.Comparator.comparingInt(Placement::rank));
                grew.add(run);
            }
        }
        return grew;
    }

    /** Places one instance of the run, on its guarantee or on idle capacity, and books it; whether it was. */
    private boolean place(Growing run, InstanceRequest instance) {
        Resources request = instance.resources();
        if (!book.fitsMax(run.quota, request)) {
            return false;
        }
        if (run.inQuota && book.fitsGuarantee(run.quota, promised.getOrDefault(run.quota, Resources.NONE).plus(request))) {
            List<Placement> placements = cluster.placeExtra(instance, allowed.of(run.quota, RealTimeResources.InQuota, request), run.quota);
            if (placements != null) {
                book.charge(run.quota, request, RealTimeResources.InQuota, 1);
                placements.forEach(p -> allowed.holds(run.quota, p.node(), p.gpus().size()));
                run.placed.addAll(placements);
                return true;
            }
        }
        if (!run.idleMode.mayBorrow() || !book.idleAvailable(book.poolOf(run.quota), request)) {
            return false;
        }
        List<Placement> placements = cluster.placeExtra(instance, allowed.of(run.quota, RealTimeResources.NotInQuota, request), null);
        if (placements == null) {
            return false;
        }
        book.charge(run.quota, request, RealTimeResources.NotInQuota, 1);
        run.placed.addAll(placements);
        if (run.inQuota) {
            run.borrowed.add(instance.rank());
        }
        return true;
    }
}
