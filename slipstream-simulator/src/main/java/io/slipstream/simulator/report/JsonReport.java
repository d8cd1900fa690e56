package io.slipstream.simulator.report;

import io.slipstream.api.codec.Json;
import io.slipstream.api.spec.Durations;
import io.slipstream.simulator.input.Experiment;
import io.slipstream.simulator.input.ExperimentWarnings;
import io.slipstream.simulator.input.Warning;
import io.slipstream.simulator.input.Policy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The results for machines: a JSON array with one object per policy. Seconds, GPU-hours, fractions. */
public final class JsonReport {
    private JsonReport() {
    }

    public static String render(Experiment experiment, List<PolicyResult> results) {
        List<Map<String, Object>> objects = new ArrayList<>();
        for (PolicyResult r : results) {
            objects.add(object(experiment, r));
        }
        return Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(objects);
    }

    static Map<String, Object> object(Experiment experiment, PolicyResult r) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("policy", r.policy().name());
        o.put("experiment", experiment.name());
        o.put("seed", experiment.seed());
        o.put("clusterGpus", experiment.cluster().gpus());
        o.put("jobs", r.jobs());
        o.put("completed", r.completed());
        o.put("neverStarted", r.neverStarted());
        o.put("neverStartedGpuHours", Format.round(r.neverStartedGpuHours(), 1));
        o.put("windowUtilization", Format.round(r.windowUtilization(), 4));
        o.put("utilization", Format.round(r.utilization(), 4));
        o.put("definitions", DEFINITIONS);
        o.put("meanQueueDelaySeconds", Format.round(r.queueDelay().mean(), 1));
        o.put("p50QueueDelaySeconds", Format.round(r.queueDelay().percentile(50), 1));
        o.put("p95QueueDelaySeconds", Format.round(r.queueDelay().percentile(95), 1));
        o.put("p99QueueDelaySeconds", Format.round(r.queueDelay().percentile(99), 1));
        o.put("meanCompletionSeconds", Format.round(r.completionTime().mean(), 1));
        o.put("p50CompletionSeconds", Format.round(r.completionTime().percentile(50), 1));
        o.put("p99CompletionSeconds", Format.round(r.completionTime().percentile(99), 1));
        o.put("preemptions", r.preemptions());
        o.put("failures", r.failures());
        o.put("allocatedGpuHours", Format.round(r.allocatedGpuHours(), 1));
        o.put("lostGpuHours", Format.round(r.lostGpuHours(), 2));
        o.put("lostFraction", Format.round(r.allocatedGpuHours() == 0 ? 0 : r.lostGpuHours() / r.allocatedGpuHours(), 6));
        o.put("borrowedGpuHours", Format.round(r.borrowedGpuHours(), 1));
        o.put("borrowerLostGpuHours", Format.round(r.elastic().borrowerLostGpuHours(), 2));
        o.put("reclaims", r.reclaim().count());
        o.put("p50ReclaimSeconds", Format.round(r.reclaim().percentile(50), 1));
        o.put("p99ReclaimSeconds", Format.round(r.reclaim().percentile(99), 1));
        o.put("maxReclaimSeconds", Format.round(r.reclaim().max(), 1));
        o.put("guaranteeWaits", r.guaranteeWait().count());
        o.put("p99GuaranteeWaitSeconds", Format.round(r.guaranteeWait().percentile(99), 1));
        o.put("fairnessIndex", Double.isNaN(r.fairnessIndex()) ? null : Format.round(r.fairnessIndex(), 4));
        o.put("makespanSeconds", Format.round(r.makespanSeconds(), 0));
        o.put("cycles", r.cycles());
        o.put("schedulerSeconds", Format.round(r.schedulerSeconds(), 2));
        o.put("wallSeconds", Format.round(r.wallSeconds(), 2));
        o.put("parameters", parameters(r.policy()));
        if (r.topology() != null) {
            o.put("topology", TopologyReport.json(r.topology()));
        }
        o.put("elastic", ElasticReport.json(r.elastic()));
        List<Map<String, Object>> tenants = new ArrayList<>();
        for (TenantResult t : r.tenants()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("tenant", t.tenant());
            m.put("quotaGpus", t.quotaGpus());
            m.put("jobs", t.jobs());
            m.put("completed", t.completed());
            m.put("neverStarted", t.neverStarted());
            m.put("neverStartedGpuHours", Format.round(t.neverStartedGpuHours(), 1));
            m.put("meanQueueDelaySeconds", Format.round(t.queueDelay().mean(), 1));
            m.put("p99QueueDelaySeconds", Format.round(t.queueDelay().percentile(99), 1));
            m.put("p99QueueDelayAtLeastSeconds", Format.round(t.queueDelayAtLeast().percentile(99), 1));
            m.put("allocatedGpuHours", Format.round(t.allocatedGpuHours(), 1));
            m.put("borrowedGpuHours", Format.round(t.borrowedGpuHours(), 1));
            m.put("entitledGpuHours", Format.round(t.entitledGpuHours(), 1));
            m.put("borrowedToEntitled", Double.isNaN(t.entitlementRatio()) ? null : Format.round(t.entitlementRatio(), 4));
            m.put("lentGpuHours", Format.round(t.lentGpuHours(), 1));
            m.put("preempted", t.preempted());
            m.put("reclaims", t.reclaim().count());
            m.put("p50ReclaimSeconds", Format.round(t.reclaim().percentile(50), 1));
            m.put("p99ReclaimSeconds", Format.round(t.reclaim().percentile(99), 1));
            m.put("maxReclaimSeconds", Format.round(t.reclaim().max(), 1));
            tenants.add(m);
        }
        o.put("tenants", tenants);
        List<Map<String, Object>> longest = new ArrayList<>();
        for (ReclaimSample sample : r.longestReclaims()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("job", sample.jobIndex());
            m.put("tenant", sample.tenant());
            m.put("gpus", sample.gpus());
            m.put("seconds", Format.round(sample.seconds(), 1));
            m.put("fromSeconds", Format.round(sample.from(), 1));
            m.put("firstVictimsSeconds", Format.round(sample.firstVictimsAt(), 1));
            m.put("lastVictimsSeconds", Format.round(sample.lastVictimsAt(), 1));
            m.put("victimRounds", sample.rounds());
            m.put("victims", sample.victims());
            m.put("startedSeconds", Format.round(sample.started(), 1));
            longest.add(m);
        }
        o.put("longestReclaims", longest);
        List<Map<String, Object>> warnings = new ArrayList<>();
        for (Warning w : ExperimentWarnings.of(experiment)) {
            if (w.policy() == null || w.policy().equals(r.policy().name())) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("kind", w.kind().name());
                m.put("tenant", w.tenant());
                m.put("count", w.count());
                m.put("gpuHours", Format.round(w.gpuHours(), 1));
                m.put("example", w.example());
                m.put("message", w.message());
                warnings.add(m);
            }
        }
        o.put("warnings", warnings);
        return o;
    }

    /** What the less obvious fields mean, in the JSON itself. */
    static final Map<String, String> DEFINITIONS;

    static {
        Map<String, String> d = new LinkedHashMap<>();
        d.put("windowUtilization", "allocated GPU-hours / cluster GPU-hours over the busy window, the first to the last submission (the headline figure)");
        d.put("utilization", "allocated GPU-hours / cluster GPU-hours over the whole replay, the first submission to the last completion");
        d.put("queueDelay", "time queued over all attempts, of the jobs that started; jobs never started are excluded (see neverStarted)");
        d.put("completion", "submission to the end of the last attempt, of the jobs that completed");
        d.put("neverStartedGpuHours", "GPU-hours the never-started jobs asked for (duration x GPUs)");
        d.put("reclaim", "for a run that had borrowers preempted to start on its guarantee: from the change after which the first were chosen to its start");
        d.put("topology", "gangs (2+ instances) at their first start: compactAt, the narrowest level whose one domain held them all; inSmallestDomain, "
                + "compact at a level as narrow as the narrowest whose domains could hold the gang empty; waitedForTopology, jobs told WaitingForTopology "
                + "(no domain had room for a Required group although the free nodes did); borrowersWaitedForTopology, borrowers told so "
                + "(approximate: what a borrower is told depends on the other borrowers the core is shown)");
        d.put("borrowerLostGpuHours", "work lost (GPU-hours since the last saved checkpoint) by runs stopped while on idle capacity");
        d.put("elastic", "elasticJobs: jobs the policy made elastic; shrinks: reclaims that took an elastic job's extra instances (instancesShrunk) "
                + "instead of stopping a run whole; grows: changes of size that added instances (instancesGrown) to a running job");
        d.put("fairnessIndex", "Jain's index over the tenants' borrowed GPU-hours / weighted entitlement to what was borrowed while they wanted idle capacity");
        DEFINITIONS = java.util.Collections.unmodifiableMap(d);
    }

    private static Map<String, Object> parameters(Policy p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("quotas", p.quotasSource());
        m.put("idleMode", p.idleMode() == null ? "fromTrace" : p.idleMode().name());
        m.put("gracePeriod", Durations.format(p.gracePeriod()));
        m.put("checkpointInterval", Durations.format(p.checkpointInterval()));
        m.put("checkpointSave", Durations.format(p.checkpointSave()));
        m.put("checkpointOnNotice", p.checkpointOnNotice());
        m.put("restartOverhead", Durations.format(p.restartOverhead()));
        m.put("schedulingInterval", Durations.format(p.schedulingInterval()));
        m.put("meanTimeBetweenFailures", p.meanTimeBetweenFailures() == null ? null : Durations.format(p.meanTimeBetweenFailures()));
        m.put("fairSharingPreemption", p.fairSharing().name());
        m.put("placement", p.placement() == null ? null : p.placement().describe());
        m.put("elastic", p.elastic() == null ? null : p.elastic().describe());
        return m;
    }
}
