package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.spec.Resources;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Step 1 of a cycle: the whole nodes the queue's gangs will need, kept from smaller runs this cycle (the working
 * cluster's {@link WorkingCluster#wholeReserve}). Gangs that fit their quota's guarantee now (as far as the guarantee
 * goes, in queue order), or whose victims are already stopping, count: a run that could not be admitted this cycle
 * must not change the cycle's decisions. Those whose whole nodes are free now (in queue order, as far as they go) keep
 * them from every smaller run, earlier ones too, until they are decided: they start this cycle. The others keep them
 * only from the runs after them, once they wait: a gang that cannot start must not hold back the runs before it for as
 * long as it waits (nor does a gang that must be in one domain: the free whole nodes may be in other domains). And only gangs
 * that may use every GPU model of the cluster count: a gang confined to some must not hold back the others.
 */
final class WholeNodeDemand {
    private final WorkingCluster cluster;
    /** Gangs whose whole nodes are kept from the start of the cycle until they are decided, with how many. */
    private final Map<PendingRun, Integer> upFront = new IdentityHashMap<>();
    /** Every gang that counts, with its whole-node instances. */
    private final Map<PendingRun, Integer> gangs = new IdentityHashMap<>();

    private WholeNodeDemand(WorkingCluster cluster) {
        this.cluster = cluster;
    }

    /** Counts the queue's (in queue order) and keeps the whole nodes of the gangs that will start this cycle. */
    static WholeNodeDemand count(List<PendingRun> queue, ClusterState state, AllowedModels allowed) {
        WholeNodeDemand demand = new WholeNodeDemand(state.cluster);
        int wholeGpus = state.cluster.maxNodeGpus();
        if (wholeGpus == 0) {
            return demand;
        }
        QuotaBook book = state.book;
        Map<QuotaId, Long> left = new HashMap<>();
        int total = 0;
        for (PendingRun run : queue) {
            if (!run.idleMode().mayUseGuarantee() || !book.exists(run.quota())) {
                continue;
            }
            int whole = 0;
            Resources request = Resources.NONE;
            for (InstanceRequest instance : run.instances()) {
                if (instance.resources().gpu() >= wholeGpus) {
                    whole++;
                }
                request = request.plus(instance.resources());
            }
            if (whole == 0 || !allowed.includeAll(allowed.of(run.quota(), RealTimeResources.InQuota, request))) {
                continue;
            }
            long free = left.computeIfAbsent(run.quota(), book::freeGuaranteeGpus);
            boolean theirs = run.reclaimed() || state.stoppingFor.containsKey(run.id());
            if (theirs || (book.fitsGuarantee(run.quota(), request) && request.gpu() <= free)) {
                left.put(run.quota(), Math.max(0, free - request.gpu()));
                demand.gangs.put(run, whole);
                // A gang placed by topology may not start though the whole nodes are free: they may be in other domains.
                if (total + whole <= state.cluster.wholeFreeNodes() && !LocalityPlacement.binds(run.instances())) {
                    demand.upFront.put(run, whole);
                    total += whole;
                }
            }
        }
        state.cluster.wholeReserve(total);
        return demand;
    }

    /** The run is decided now (placed, or holding what it needs): whole nodes kept for it up front are no longer kept from others. */
    void deciding(PendingRun run) {
        Integer whole = upFront.remove(run);
        if (whole != null) {
            cluster.wholeReserve(cluster.wholeReserve() - whole);
        }
    }

    /** The run waits for nodes: the runs after it in the queue (and every borrower) may not break the whole nodes it needs. */
    void waitsForNodes(PendingRun run) {
        Integer whole = gangs.get(run);
        if (whole != null) {
            cluster.wholeReserve(cluster.wholeReserve() + whole);
        }
    }
}
