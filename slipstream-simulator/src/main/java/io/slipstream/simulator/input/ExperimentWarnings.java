package io.slipstream.simulator.input;

import io.slipstream.api.spec.IdleMode;
import io.slipstream.scheduler.QuotaState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What will skew an experiment's figures, decided from the files alone (no replay): jobs that can never start under
 * a policy, tenants guaranteed nothing, trace rows skipped. A job is checked against the first rule it breaks, in
 * the order of {@link Warning.Kind}'s job kinds from the widest (the cluster) to the narrowest (the guarantee).
 */
public final class ExperimentWarnings {
    private ExperimentWarnings() {
    }

    /** The warnings that concern the policies named (the trace's concern them all). */
    public static List<Warning> of(Experiment experiment, java.util.Collection<String> policies) {
        return of(experiment).stream().filter(w -> w.policy() == null || policies.contains(w.policy())).toList();
    }

    public static List<Warning> of(Experiment experiment) {
        List<Warning> warnings = new ArrayList<>();
        for (Trace.Skipped skipped : experiment.trace().skipped()) {
            warnings.add(new Warning(Warning.Kind.ROWS_SKIPPED, null, null, skipped.rows(), 0, skipped.exampleLine(), switch (skipped.reason()) {
                case NO_END -> "no end time (still running when the trace was taken)";
                case NO_GPUS -> "no GPUs";
            }));
        }
        long clusterGpus = experiment.cluster().gpus();
        int largestNode = experiment.cluster().pools().stream().mapToInt(NodePool::gpus).max().orElse(0);
        for (Policy policy : experiment.policies()) {
            Map<String, QuotaState> quotas = new HashMap<>();
            policy.quotas().forEach(q -> quotas.put(q.id().toString(), q));
            for (String tenant : experiment.trace().tenants()) {
                QuotaState quota = quotas.get(Policy.quotaOf(tenant).toString());
                if (quota != null && quota.min().gpu() == 0) {
                    warnings.add(new Warning(Warning.Kind.ZERO_GUARANTEE, policy.name(), tenant, 0, 0, -1, policy.quotasSource()));
                }
            }
            // (kind, tenant) -> count, GPU-hours, example, detail; tree maps keep the output in a stable order.
            Map<Warning.Kind, Map<String, Warning>> found = new TreeMap<>();
            for (TraceJob job : experiment.trace().jobs()) {
                QuotaState quota = quotas.get(Policy.quotaOf(job.tenant()).toString());
                IdleMode mode = policy.idleMode() != null ? policy.idleMode() : job.idleMode() != null ? job.idleMode() : IdleMode.Acceptable;
                Warning.Kind kind = null;
                String detail = null;
                if (job.gpus() > largestNode) {
                    kind = Warning.Kind.INSTANCE_BIGGER_THAN_NODE;
                    detail = "nodes have at most " + largestNode + " GPUs";
                } else if (job.totalGpus() > clusterGpus) {
                    kind = Warning.Kind.BIGGER_THAN_CLUSTER;
                    detail = clusterGpus + " GPUs";
                } else if (quota != null && quota.max() != null && job.totalGpus() > quota.max().gpu()) {
                    kind = Warning.Kind.BIGGER_THAN_QUOTA_MAX;
                    detail = quota.max().gpu() + " GPUs";
                } else if (quota != null && mode == IdleMode.Disabled && job.totalGpus() > quota.min().gpu()) {
                    kind = Warning.Kind.BIGGER_THAN_GUARANTEE;
                    detail = quota.min().gpu() + " GPUs";
                }
                if (kind != null) {
                    String d = detail;
                    found.computeIfAbsent(kind, k -> new TreeMap<>()).merge(job.tenant(),
                            new Warning(kind, policy.name(), job.tenant(), 1, job.gpuHours(), job.index(), d),
                            (a, b) -> new Warning(a.kind(), a.policy(), a.tenant(), a.count() + 1, a.gpuHours() + b.gpuHours(), Math.min(a.example(), b.example()),
                                    a.detail()));
                }
            }
            found.values().forEach(byTenant -> warnings.addAll(byTenant.values()));
        }
        return warnings;
    }
}
