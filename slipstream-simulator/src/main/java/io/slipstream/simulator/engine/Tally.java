package io.slipstream.simulator.engine;

import io.slipstream.api.run.QuotaId;
import io.slipstream.scheduler.QuotaState;
import io.slipstream.simulator.input.Policy;
import io.slipstream.simulator.input.Trace;
import io.slipstream.simulator.report.Distribution;
import io.slipstream.simulator.report.ElasticFigures;
import io.slipstream.simulator.report.PolicyResult;
import io.slipstream.simulator.report.ReclaimSample;
import io.slipstream.simulator.report.TenantResult;
import io.slipstream.simulator.report.TopologyResult;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** What a replay counts of its stops, waits and reclaims as it goes, and the policy's result made of it at the end. */
final class Tally {
    private static final int LONGEST_RECLAIMS = 5;

    private int preemptions;
    private int failures;
    private double lostGpuMs;
    private double borrowerLostGpuMs;
    private int elasticJobs;
    private int grows;
    private int instancesGrown;
    private int shrinks;
    private int instancesShrunk;
    private final int[] preemptedByTenant;
    private final List<List<Double>> reclaimByTenant = new ArrayList<>();
    private final List<Double> guaranteeWaits = new ArrayList<>();
    private final List<ReclaimSample> longestReclaims = new ArrayList<>();

    Tally(int tenants) {
        this.preemptedByTenant = new int[tenants];
        for (int i = 0; i < tenants; i++) {
            reclaimByTenant.add(new ArrayList<>());
        }
    }

    void preempted(int tenant) {
        preemptions++;
        preemptedByTenant[tenant]++;
    }

    /** Work lost to a stop (GPU-ms since the last checkpoint). */
    void lost(double gpuMs) {
        lostGpuMs += gpuMs;
    }

    /** Work lost to a stop, of a run that was on idle capacity ({@code borrower}) or not. */
    void lost(double gpuMs, boolean borrower) {
        lost(gpuMs);
        if (borrower) {
            borrowerLostGpuMs += gpuMs;
        }
    }

    /** A job the policy made elastic. */
    void elasticJob() {
        elasticJobs++;
    }

    /** An elastic job got {@code instances} more. */
    void grew(int instances) {
        grows++;
        instancesGrown += instances;
    }

    /** An elastic job of {@code tenant} lost {@code instances} to a shrink instead of being stopped whole. */
    void shrunk(int tenant, int instances) {
        shrinks++;
        instancesShrunk += instances;
    }

    /** A failure, and the work it lost. */
    void failed(double lostGpuMs) {
        failures++;
        lost(lostGpuMs);
    }

    /** How long a run that fit its guarantee waited for capacity. */
    void guaranteeWait(double seconds) {
        guaranteeWaits.add(seconds);
    }

    /** A reclaim of {@code seconds}, from its start to the owner's start; the few longest are kept, to show what the maximum was made of. */
    void reclaimed(int tenant, double seconds, ReclaimSample sample) {
        reclaimByTenant.get(tenant).add(seconds);
        if (longestReclaims.size() == LONGEST_RECLAIMS && sample.seconds() <= longestReclaims.get(LONGEST_RECLAIMS - 1).seconds()) {
            return;
        }
        longestReclaims.add(sample);
        longestReclaims.sort(Comparator.comparingDouble(ReclaimSample::seconds).reversed().thenComparingInt(ReclaimSample::jobIndex));
        if (longestReclaims.size() > LONGEST_RECLAIMS) {
            longestReclaims.remove(LONGEST_RECLAIMS);
        }
    }

    /** The policy's result, from the jobs as the replay left them and what the recorder counted. */
    PolicyResult result(Policy policy, Trace trace, List<SimJob> jobs, List<String> tenantNames, Recorder recorder, long clusterGpus, int done,
                        long cycles, long schedulerNanos, double wallSeconds, TopologyResult topology) {
        int tenants = tenantNames.size();
        List<List<Double>> delayByTenant = new ArrayList<>();
        for (int i = 0; i < tenants; i++) {
            delayByTenant.add(new ArrayList<>());
        }
        List<Double> delays = new ArrayList<>();
        List<Double> completions = new ArrayList<>();
        int[] jobsByTenant = new int[tenants];
        int[] doneByTenant = new int[tenants];
        int neverStarted = 0;
        double neverStartedGpuHours = 0;
        int[] neverStartedByTenant = new int[tenants];
        double[] neverStartedHoursByTenant = new double[tenants];
        long lastFinish = trace.firstSubmitMillis();
        List<SimJob> unstarted = new ArrayList<>();
        for (SimJob job : jobs) {
            jobsByTenant[job.tenant]++;
            if (job.firstStart < 0) {
                unstarted.add(job);
                // Never started (usually it can never fit under this policy): counted apart with the GPU-hours it asked
                // for, and left out of the delays, where a wait "until the replay ended" is no measurement.
                neverStarted++;
                neverStartedGpuHours += job.trace.gpuHours();
                neverStartedByTenant[job.tenant]++;
                neverStartedHoursByTenant[job.tenant] += job.trace.gpuHours();
                continue;
            }
            if (job.state == SimJob.State.DONE) {
                doneByTenant[job.tenant]++;
                completions.add((job.finishedAt - job.trace.submitMillis()) / 1000.0);
                lastFinish = Math.max(lastFinish, job.finishedAt);
                double delay = job.queuedTotal / 1000.0;
                delays.add(delay);
                delayByTenant.get(job.tenant).add(delay);
            }
        }
        List<List<Double>> atLeastByTenant = new ArrayList<>();
        delayByTenant.forEach(started -> atLeastByTenant.add(new ArrayList<>(started)));
        for (SimJob job : unstarted) {
            atLeastByTenant.get(job.tenant).add(Math.max(0, lastFinish - job.trace.submitMillis()) / 1000.0);
        }
        double window = Math.max(1, trace.lastSubmitMillis() - trace.firstSubmitMillis());
        double allocated = 0;
        double borrowed = 0;
        List<TenantResult> tenantResults = new ArrayList<>();
        Map<QuotaId, QuotaState> quotas = new HashMap<>();
        policy.quotas().forEach(q -> quotas.put(q.id(), q));
        for (int i = 0; i < tenants; i++) {
            allocated += recorder.allocatedGpuMs[i];
            borrowed += recorder.borrowedGpuMs[i];
            QuotaState quota = quotas.get(Policy.quotaOf(tenantNames.get(i)));
            tenantResults.add(new TenantResult(tenantNames.get(i), quota == null ? 0 : quota.min().gpu(), jobsByTenant[i], doneByTenant[i],
                    Distribution.of(delayByTenant.get(i)), recorder.allocatedGpuMs[i] / 3.6e6, recorder.borrowedGpuMs[i] / 3.6e6,
                    recorder.lentGpuMs[i] / 3.6e6, preemptedByTenant[i], Distribution.of(reclaimByTenant.get(i)), neverStartedByTenant[i],
                    neverStartedHoursByTenant[i], recorder.entitledGpuMs[i] / 3.6e6, Distribution.of(atLeastByTenant.get(i))));
        }
        List<Double> allReclaims = new ArrayList<>();
        reclaimByTenant.forEach(allReclaims::addAll);
        double replay = Math.max(1, lastFinish - trace.firstSubmitMillis());
        return new PolicyResult(policy, jobs.size(), done, neverStarted, neverStartedGpuHours, allocated / (clusterGpus * replay), recorder.windowGpuMs / (clusterGpus * window),
                Distribution.of(delays),
                Distribution.of(completions), preemptions, failures, allocated / 3.6e6, lostGpuMs / 3.6e6, borrowed / 3.6e6, Distribution.of(allReclaims),
                Distribution.of(guaranteeWaits), cycles, schedulerNanos / 1e9, wallSeconds, (lastFinish - trace.firstSubmitMillis()) / 1000.0,
                tenantResults, recorder.bucketMillis() / 1000.0, recorder.averageGpus(), longestReclaims,
                PolicyResult.jain(tenantResults.stream().mapToDouble(TenantResult::entitlementRatio).toArray()), topology,
                new ElasticFigures(elasticJobs, grows, instancesGrown, shrinks, instancesShrunk, borrowerLostGpuMs / 3.6e6));
    }
}
