package io.slipstream.simulator.engine;

import io.slipstream.api.run.QuotaId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.IdleMode;
import io.slipstream.scheduler.InstanceRequest;
import io.slipstream.scheduler.Locality;
import io.slipstream.scheduler.PendingRun;
import io.slipstream.scheduler.Scheduler;
import io.slipstream.simulator.input.Policy;
import io.slipstream.simulator.input.Trace;
import io.slipstream.simulator.input.TraceJob;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The trace's jobs as the policy runs them, in submission order, each with the run the core is shown (its idle mode,
 * quota, placement, and minimum when the policy makes it elastic) and its rank in queue order.
 *
 * @param anyRequired whether a job must be placed in one domain of the topology
 */
record JobTable(List<SimJob> jobs, Map<RunId, SimJob> byId, boolean anyRequired) {

    /** @param domains the cluster's topology ({@code null}: none); {@code tally} counts the jobs made elastic */
    static JobTable of(Trace trace, Policy policy, DomainMap domains, TenantQuotas quotas, Tally tally) {
        Map<String, Integer> tenantIndex = new HashMap<>();
        for (int i = 0; i < trace.tenants().size(); i++) {
            tenantIndex.put(trace.tenants().get(i), i);
        }
        List<SimJob> jobs = new ArrayList<>();
        Map<RunId, SimJob> byId = new HashMap<>();
        Map<String, List<InstanceRequest>> shapes = new HashMap<>();
        boolean anyRequired = false;
        for (TraceJob row : trace.jobs()) {
            IdleMode mode = policy.idleMode() != null ? policy.idleMode() : row.idleMode() != null ? row.idleMode() : IdleMode.Acceptable;
            // An elastic rule may split a single instance in two halves (ElasticRule#split): the job as the policy runs it.
            TraceJob job = policy.elastic() == null ? row : policy.elastic().shape(row, mode);
            Locality locality = domains == null ? null : domains.localityOf(job, policy.placement());
            anyRequired |= locality != null && locality.required();
            List<InstanceRequest> requests = shapes.computeIfAbsent(job.gpus() + "x" + job.instances() + ":" + locality,
                    key -> DomainMap.requests(job, locality));
            RunId id = new RunId(String.format(Locale.ROOT, "j%07d", job.index()));
            int tenant = tenantIndex.get(job.tenant());
            QuotaId quota = quotas.quotaId()[tenant];
            PendingRun pending = new PendingRun(id, quota, mode, job.priority(), Simulation.EPOCH.plusMillis(job.submitMillis()), requests);
            int minimum = policy.elastic() == null || locality != null ? 0 : policy.elastic().minimumOf(job, mode);
            if (minimum > 0) {
                pending = pending.withMinReplicas(Map.of("main", minimum)); // DomainMap.requests: one group
                tally.elasticJob();
            }
            SimJob simJob = new SimJob(job, tenant, pending);
            jobs.add(simJob);
            byId.put(id, simJob);
        }
        List<SimJob> inQueueOrder = new ArrayList<>(jobs);
        inQueueOrder.sort(Comparator.comparing((SimJob job) -> job.pending, Scheduler.QUEUE_ORDER));
        for (int i = 0; i < inQueueOrder.size(); i++) {
            inQueueOrder.get(i).queueRank = i;
        }
        return new JobTable(jobs, byId, anyRequired);
    }
}
