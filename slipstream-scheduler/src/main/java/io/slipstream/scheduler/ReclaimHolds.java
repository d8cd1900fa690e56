package io.slipstream.scheduler;

import static io.slipstream.scheduler.ClusterState.total;

import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A cycle's step 1b ({@link Scheduler}): what is held for queued runs whose reclaim (or preemption for fairness) is
 * under way, so that neither promotions nor runs earlier in the queue take the capacity their victims free. A run whose
 * victims are still stopping keeps what it needs beyond their resources, and the guarantee it reclaims; one whose victims
 * are gone keeps its guarantee only. A guaranteed run's hold is given back when the guaranteed pass decides it (which
 * then finds the capacity free); a borrower's is kept all cycle. Works on the cycle's cluster and book, in the
 * tentative the cycle never keeps.
 */
final class ReclaimHolds {
    private final ClusterState state;
    private final WorkingCluster cluster;
    private final QuotaBook book;
    private final AllowedModels allowed;
    /** The cycle's victims already stopping, by the run their resources go to. */
    private final Map<RunId, List<ActiveRun>> stoppingFor;
    /** What is held for runs whose victims are still stopping, to be given back when the run itself is decided. */
    private final Map<RunId, List<Allocation>> heldFor = new HashMap<>();
    /** Reclaimed runs whose victims are gone: only their guarantee is held for them until they are decided. */
    private final Set<RunId> guaranteeHeldFor = new HashSet<>();
    /** Borrowers whose victims (of a preemption for fairness) are still stopping: what they free stays held all cycle. */
    private final Set<RunId> heldAsBorrower = new HashSet<>();

    ReclaimHolds(ClusterState state, AllowedModels allowed, Map<RunId, List<ActiveRun>> stoppingFor) {
        this.state = state;
        this.cluster = state.cluster;
        this.book = state.book;
        this.allowed = allowed;
        this.stoppingFor = stoppingFor;
    }

    /** Holds, before promotions, for each run of the queue whose victims are stopping or just gone. */
    void holdAll(List<PendingRun> queue) {
        for (PendingRun run : queue) {
            // Most cycles hold for none of a long queue's runs: not a lookup for each.
            List<ActiveRun> stopping = stoppingFor.isEmpty() ? List.of() : stoppingFor.getOrDefault(run.id(), List.of());
            if ((stopping.isEmpty() && !run.reclaimed()) || !book.exists(run.quota())) {
                continue;
            }
            if (stopping.isEmpty()) {
                // Its victims are gone and it goes first in the guaranteed pass, which finds their capacity free;
                // but promotions come before: its guarantee is held, or its quota's own borrower could take it.
                Resources request = total(run);
                if (run.reclaimed() && book.fitsGuarantee(run.quota(), request)) {
                    book.charge(run.quota(), request, RealTimeResources.InQuota, 1);
                    guaranteeHeldFor.add(run.id());
                }
                continue;
            }
            Resources request = total(run);
            // A run that preempted for fairness borrows what it waits for: it is held as borrowed, all cycle.
            RealTimeResources where = run.idleMode().mayUseGuarantee() && book.fitsGuarantee(run.quota(), request)
                    ? RealTimeResources.InQuota : RealTimeResources.NotInQuota;
            Set<String> models = allowed.of(run.quota(), where, request);
            List<Allocation> freed = new ArrayList<>();
            stopping.forEach(v -> freed.addAll(v.allocations()));
            List<Placement> placements = state.placeOnFreed(run.instances(), models, freed);
            if (placements != null) {
                heldFor.put(run.id(), cluster.holdBeyond(placements, run.instances(), freed));
                book.charge(run.quota(), request, where, 1);
                if (where == RealTimeResources.NotInQuota) {
                    heldAsBorrower.add(run.id());
                }
            }
        }
    }

    /** Whether the run is a borrower whose victims are still stopping: it waits, and what is held for it stays held. */
    boolean heldAsBorrower(PendingRun run) {
        return !heldAsBorrower.isEmpty() && heldAsBorrower.contains(run.id());
    }

    /** Gives back what is held for a run the guaranteed pass is about to decide. */
    void giveBack(PendingRun run) {
        if (!guaranteeHeldFor.isEmpty() && guaranteeHeldFor.remove(run.id())) {
            book.charge(run.quota(), total(run), RealTimeResources.InQuota, -1);
        }
        List<Allocation> held = heldFor.isEmpty() ? null : heldFor.remove(run.id());
        if (held != null) {
            held.forEach(cluster::release);
            book.charge(run.quota(), total(run), RealTimeResources.InQuota, -1);
        }
    }
}
