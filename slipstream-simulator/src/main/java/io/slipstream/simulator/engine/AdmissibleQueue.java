package io.slipstream.simulator.engine;

import io.slipstream.api.spec.IdleMode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The queued jobs, indexed so that a cycle hands the scheduler only those it could admit. A queued job that fits
 * neither its quota's free guarantee nor the cluster's free GPUs (as they are when the cycle starts) can only wait:
 * within a cycle the free guarantee and the free GPUs only shrink, and such a job's wait changes nothing else the
 * core decides. Leaving it out gives the same admissions and preemptions and saves the core from looking at
 * thousands of hopeless jobs every cycle (under fixed quotas most of the queue). {@code AdmissibleQueueTest} replays
 * traces both ways and compares every figure.
 *
 * <p>Jobs are kept by tenant, idle mode and total GPUs, so a cycle visits only the sizes under the thresholds.
 */
final class AdmissibleQueue {
    private static final IdleMode[] MODES = IdleMode.values();

    /** [tenant][idle mode] -> total GPUs -> jobs, in arrival order. */
    private final List<List<TreeMap<Integer, Set<SimJob>>>> bySize = new ArrayList<>();
    /** [tenant] -> jobs in the core's queue order (by their rank in it, see {@code SimJob.queueRank}). */
    private final List<TreeSet<SimJob>> inQueueOrder = new ArrayList<>();
    private int size;

    AdmissibleQueue(int tenants) {
        for (int t = 0; t < tenants; t++) {
            inQueueOrder.add(new TreeSet<>(Comparator.comparingInt((SimJob job) -> job.queueRank)));
            List<TreeMap<Integer, Set<SimJob>>> modes = new ArrayList<>(MODES.length);
            for (int m = 0; m < MODES.length; m++) {
                modes.add(new TreeMap<>());
            }
            bySize.add(modes);
        }
    }

    void add(SimJob job) {
        if (bucketsOf(job).computeIfAbsent(job.queueGpus(), g -> new LinkedHashSet<>()).add(job)) {
            inQueueOrder.get(job.tenant).add(job);
            size++;
        }
    }

    void remove(SimJob job) {
        TreeMap<Integer, Set<SimJob>> buckets = bucketsOf(job);
        Set<SimJob> bucket = buckets.get(job.queueGpus());
        if (bucket != null && bucket.remove(job)) {
            inQueueOrder.get(job.tenant).remove(job);
            size--;
            if (bucket.isEmpty()) {
                buckets.remove(job.queueGpus());
            }
        }
    }

    int size() {
        return size;
    }

    /** Every queued job. */
    void forEach(Consumer<SimJob> action) {
        for (List<TreeMap<Integer, Set<SimJob>>> modes : bySize) {
            for (TreeMap<Integer, Set<SimJob>> buckets : modes) {
                buckets.values().forEach(bucket -> bucket.forEach(action));
            }
        }
    }

    /**
     * The jobs the scheduler could admit this cycle: of each tenant, those asking for at most what its quota's
     * guarantee has free (if their idle mode may use it) or it could borrow (if it may), and every job of
     * a tenant in {@code allOf} (its quota may preempt its own lower-priority runs: its jobs have options of their own).
     *
     * @param freeGuarantee GPUs left on each tenant's quota's own guarantee
     * @param borrowable    GPUs each tenant could borrow: free on the cluster's nodes, and lendable by its pool (-1: none)
     */
    void forEachAdmissible(long[] freeGuarantee, long[] borrowable, boolean[] allOf, Consumer<SimJob> action) {
        for (int t = 0; t < bySize.size(); t++) {
            List<TreeMap<Integer, Set<SimJob>>> modes = bySize.get(t);
            for (int m = 0; m < MODES.length; m++) {
                TreeMap<Integer, Set<SimJob>> buckets = modes.get(m);
                if (buckets.isEmpty()) {
                    continue;
                }
                IdleMode mode = MODES[m];
                long limit = Math.max(mode.mayUseGuarantee() ? freeGuarantee[t] : -1, mode.mayBorrow() ? borrowable[t] : -1);
                Map<Integer, Set<SimJob>> admissible = allOf[t] ? buckets : limit < 0 ? Map.of() : buckets.headMap((int) Math.min(limit, Integer.MAX_VALUE), true);
                admissible.values().forEach(bucket -> bucket.forEach(action));
            }
        }
    }

    /** A tenant's queued jobs in the core's queue order, until {@code action} says stop (returns false). */
    void inQueueOrder(int tenant, Predicate<SimJob> action) {
        for (SimJob job : inQueueOrder.get(tenant)) {
            if (!action.test(job)) {
                return;
            }
        }
    }

    private TreeMap<Integer, Set<SimJob>> bucketsOf(SimJob job) {
        return bySize.get(job.tenant).get(job.idleMode.ordinal());
    }
}
