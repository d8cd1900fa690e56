package io.slipstream.scheduler;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.spec.QuotaType;
import io.slipstream.api.spec.Resources;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The GPU models a run may use during one cycle. A Dedicated quota's runs stay on its model. A General quota's
 * guaranteed runs stay off capacity that Dedicated quotas are guaranteed: on a model with Dedicated quotas they may
 * use only what those do not need, so the GPUs General guaranteed runs hold are counted as the cycle admits and
 * promotes (on a copy: the state's counts are the cycle's start). Runs on idle capacity may go anywhere: they are
 * reclaimed.
 */
final class AllowedModels {
    private final WorkingCluster cluster;
    private final QuotaBook book;
    /** GPUs of schedulable nodes, by model. */
    private final Map<String, Long> gpusByModel;
    /** GPUs of each model guaranteed to Dedicated quotas. */
    private final Map<String, Long> dedicatedGpus;
    /** GPUs of each model held by General quotas' guaranteed runs. */
    private final Map<String, Long> generalGuaranteedGpus;

    AllowedModels(ClusterState state) {
        this.cluster = state.cluster;
        this.book = state.book;
        this.gpusByModel = state.gpusByModel;
        this.dedicatedGpus = state.dedicatedGpus;
        this.generalGuaranteedGpus = new HashMap<>(state.generalGuaranteedGpus);
    }

    /** The models a run of {@code quota} may use for {@code request}, guaranteed or on idle capacity ({@code null}: any). */
    Set<String> of(QuotaId quota, RealTimeResources where, Resources request) {
        String dedicated = book.modelOf(quota);
        if (dedicated != null) {
            return Set.of(dedicated);
        }
        if (where != RealTimeResources.InQuota || !isGeneral(quota)) {
            return null;
        }
        Set<String> models = new HashSet<>();
        for (var entry : gpusByModel.entrySet()) {
            long reserved = dedicatedGpus.getOrDefault(entry.getKey(), 0L);
            long headroom = entry.getValue() - reserved - generalGuaranteedGpus.getOrDefault(entry.getKey(), 0L);
            if (reserved == 0 || headroom >= request.gpu()) {
                models.add(entry.getKey());
            }
        }
        return models;
    }

    /** Whether {@code models} (as {@link #of} gives them) are every GPU model of the cluster. */
    boolean includeAll(Set<String> models) {
        return models == null || models.containsAll(gpusByModel.keySet());
    }

    /** A guaranteed run of {@code quota} now holds {@code gpus} on {@code node} (admitted or promoted this cycle). */
    void holds(QuotaId quota, String node, int gpus) {
        if (isGeneral(quota) && cluster.hasNode(node)) {
            generalGuaranteedGpus.merge(cluster.modelOf(node), (long) gpus, Long::sum);
        }
    }

    private boolean isGeneral(QuotaId quota) {
        QuotaState state = book.quota(quota);
        return state != null && state.type() == QuotaType.General;
    }
}
