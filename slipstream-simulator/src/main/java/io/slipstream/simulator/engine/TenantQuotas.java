package io.slipstream.simulator.engine;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.spec.WithinQuota;
import io.slipstream.scheduler.QuotaState;
import io.slipstream.simulator.input.Policy;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * Per tenant (by index), its quota as the policy gives it: what the cycle-start figures, the shown queue and the
 * recorder are computed from.
 *
 * @param quotaId                     its quota's id, the policy's own object where the policy has it (the core looks a
 *                                    run's quota up many times a cycle, and the same object is found without comparing strings)
 * @param quotaIndex                  its quota's index
 * @param quotaGpus                   its quota's guaranteed GPUs (0: no quota)
 * @param ownGuaranteeGpus            its quota's own guarantee, as the core's ledger has it: its min less its children's (-1: no quota)
 * @param preemptsWithinQuota         whether its quota preempts lower-priority runs within it
 * @param hasMax                      whether its quota has a max
 * @param weights                     its quota's fair-sharing weight (1: no quota)
 * @param checkpointsOfGuaranteedRead whether its guaranteed runs may be stopped (moves, or preemption within the quota),
 *                                    so that their checkpoints count
 * @param lendingOnlyShrinks          whether no quota has a max or preempts within: then preempting never uncharges runs
 *                                    mid-cycle, and what the pool lends only shrinks within a cycle
 */
record TenantQuotas(QuotaId[] quotaId, int[] quotaIndex, long[] quotaGpus, long[] ownGuaranteeGpus, boolean[] preemptsWithinQuota,
                    boolean[] hasMax, double[] weights, boolean[] checkpointsOfGuaranteedRead, boolean lendingOnlyShrinks) {

    static TenantQuotas of(Policy policy, List<String> tenants) {
        int n = tenants.size();
        Map<QuotaId, QuotaState> quotas = new HashMap<>();
        policy.quotas().forEach(q -> quotas.put(q.id(), q));
        Map<QuotaId, Long> childGpus = new HashMap<>();
        policy.quotas().stream().filter(q -> q.parent() != null && quotas.containsKey(q.parent()))
                .forEach(q -> childGpus.merge(q.parent(), (long) q.min().gpu(), Long::sum));
        boolean movesAllowed = policy.quotas().stream().anyMatch(QuotaState::allowMoves);
        QuotaId[] quotaId = new QuotaId[n];
        int[] quotaIndex = new int[n];
        long[] quotaGpus = new long[n];
        long[] ownGuaranteeGpus = new long[n];
        boolean[] preemptsWithinQuota = new boolean[n];
        boolean[] hasMax = new boolean[n];
        double[] weights = new double[n];
        boolean[] checkpointsOfGuaranteedRead = new boolean[n];
        Map<QuotaId, Integer> indexes = new HashMap<>();
        for (int t = 0; t < n; t++) {
            QuotaId id = Policy.quotaOf(tenants.get(t));
            QuotaState quota = quotas.get(id);
            quotaId[t] = quota == null ? id : quota.id();
            quotaIndex[t] = indexes.computeIfAbsent(id, q -> indexes.size());
            quotaGpus[t] = quota == null ? 0 : quota.min().gpu();
            ownGuaranteeGpus[t] = quota == null ? -1 : Math.max(0, quota.min().gpu() - childGpus.getOrDefault(id, 0L));
            preemptsWithinQuota[t] = quota != null && quota.withinQuota() == WithinQuota.LowerPriority;
            hasMax[t] = quota != null && quota.max() != null;
            weights[t] = quota == null ? 1 : quota.weight();
            checkpointsOfGuaranteedRead[t] = movesAllowed || preemptsWithinQuota[t];
        }
        boolean lendingOnlyShrinks = IntStream.range(0, n).noneMatch(t -> hasMax[t] || preemptsWithinQuota[t]);
        return new TenantQuotas(quotaId, quotaIndex, quotaGpus, ownGuaranteeGpus, preemptsWithinQuota, hasMax, weights,
                checkpointsOfGuaranteedRead, lendingOnlyShrinks);
    }
}
