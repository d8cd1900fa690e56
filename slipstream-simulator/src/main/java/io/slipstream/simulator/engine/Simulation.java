package io.slipstream.simulator.engine;

import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.WaitReason;
import io.slipstream.scheduler.Allocation;
import io.slipstream.scheduler.CycleResult;
import io.slipstream.scheduler.Decision;
import io.slipstream.scheduler.Defragmentation;
import io.slipstream.scheduler.FairSharingPreemption;
import io.slipstream.scheduler.NodeState;
import io.slipstream.scheduler.PendingRun;
import io.slipstream.scheduler.Scheduler;
import io.slipstream.simulator.input.ClusterSpec;
import io.slipstream.simulator.input.Policy;
import io.slipstream.simulator.input.Trace;
import io.slipstream.simulator.report.PolicyResult;
import io.slipstream.simulator.report.ReclaimSample;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * A discrete-event simulation of one policy over one trace. Virtual time is in milliseconds from the trace's start;
 * the scheduling core is the server's own {@link Scheduler}, given a state of the same runs the server would snapshot. The
 * world around it is modelled: jobs run for their trace duration, preempted jobs get a notice, a grace period and a
 * kill, lose the work since their last saved checkpoint and are queued again; instances may fail at random.
 *
 * <p>A cycle runs at the next tick of the scheduling interval after something changed (an arrival, an end, a
 * stop); with no change, none runs. Deterministic: the same trace, policy and seed give the same result.
 */
public final class Simulation {
    /** Virtual time zero as an instant, for the scheduler (which only compares instants). */
    static final Instant EPOCH = Instant.parse("2021-01-01T00:00:00Z");
    private static final long STOP_AFTER_LAST_SUBMIT = 365L * 86_400_000;

    /** What a long run reports as it goes. */
    public interface Listener {
        void progress(String policy, long virtualMillis, long lastSubmitMillis, int done, int total);
    }

    private enum Kind {
        FINISH, STOPPED, SHRUNK, FAILED, RELAX, CYCLE
    }

    /** {@code segment}: for a FINISH, the job's segment it was computed in (a change of size makes it stale). */
    private record Event(long time, Kind kind, long seq, SimJob job, int attempt, int segment) {
        static final Comparator<Event> ORDER = Comparator.comparingLong(Event::time).thenComparing(Event::kind).thenComparingLong(Event::seq);
    }

    private final Trace trace;
    private final List<NodeState> nodes;
    private final long clusterGpus;
    /** The most GPUs of a node: a job with a larger instance never starts, and wants nothing of the idle capacity. */
    private final int largestNodeGpus;
    private final Policy policy;
    private final long seed;
    private final Listener listener;
    private final Scheduler scheduler;
    private final Progress progress;

    private final List<String> tenantNames;
    private final List<SimJob> jobs;
    private final Map<RunId, SimJob> byId;
    private final AdmissibleQueue queued;
    private final GuaranteeWaits guaranteeWaits = new GuaranteeWaits();
    /** Queued jobs that borrowers were preempted for: the core holds capacity for them, so they are always shown. */
    private final Set<SimJob> reclaiming = new LinkedHashSet<>();
    /** Whether a cycle is given only the queued jobs it could admit (false: all of them, to test that it makes no difference). */
    private final boolean admissibleOnly;
    /** What each cycle shows the core of the queue. */
    private final ShownQueue shownQueue;
    private final Holdings holdings;
    private final PriorityQueue<Event> events = new PriorityQueue<>(Event.ORDER);
    private final Recorder recorder;
    private long seq;
    private long now;
    private long lastCycle = Long.MIN_VALUE / 2;
    private boolean cycleScheduled;
    private long firstChangeSinceCycle = -1;

    private int done;
    private long cycles;
    private long schedulerNanos;
    private final Tally tally;
    /** Where gangs land in the cluster's topology (counts nothing if it has none). */
    private final TopologyTally topology;

    public Simulation(Trace trace, ClusterSpec cluster, Policy policy, long seed, Listener listener) {
        this(trace, cluster, policy, seed, listener, true, true);
    }

    /**
     * @param admissibleOnly whether a cycle is shown only the queued jobs it could admit (false: all of them)
     * @param keptState      whether the core's state is kept between cycles (false: built anew for each)
     */
    Simulation(Trace trace, ClusterSpec cluster, Policy policy, long seed, Listener listener, boolean admissibleOnly, boolean keptState) {
        this.admissibleOnly = admissibleOnly;
        this.trace = trace;
        this.nodes = cluster.nodes();
        this.clusterGpus = cluster.gpus();
        // Per node (by index) its GPUs: what the cycle-start figures and the shown queue are computed from.
        int[] nodeGpus = new int[nodes.size()];
        Map<String, Integer> nodeIndex = new HashMap<>();
        for (int i = 0; i < nodes.size(); i++) {
            nodeGpus[i] = nodes.get(i).capacity().gpu();
            nodeIndex.put(nodes.get(i).name(), i);
        }
        this.largestNodeGpus = Arrays.stream(nodeGpus).max().orElse(0);
        this.policy = policy;
        this.scheduler = new Scheduler(policy.defragmentation() != null ? policy.defragmentation() : Defragmentation.DEFAULT, policy.fairSharing());
        this.seed = seed;
        this.listener = listener;
        this.progress = new Progress(policy);
        this.tenantNames = trace.tenants();
        this.tally = new Tally(tenantNames.size());
        this.queued = new AdmissibleQueue(tenantNames.size());
        TenantQuotas quotas = TenantQuotas.of(policy, tenantNames);
        DomainMap domains = cluster.topology().isEmpty() ? null : new DomainMap(nodes, cluster.topology());
        JobTable table = JobTable.of(trace, policy, domains, quotas, tally);
        this.jobs = table.jobs();
        this.byId = table.byId();
        this.recorder = new Recorder(quotas.quotaGpus(), quotas.weights(), clusterGpus, trace.firstSubmitMillis(), trace.lastSubmitMillis());
        this.holdings = new Holdings(nodes, policy.quotas(), progress, keptState, quotas.quotaIndex(), quotas.ownGuaranteeGpus(),
                quotas.checkpointsOfGuaranteedRead(), nodeIndex, nodeGpus, clusterGpus, quotas.quotaId(), quotas.lendingOnlyShrinks());
        this.shownQueue = new ShownQueue(queued, reclaiming, holdings,
                new ShownQueue.Limits(quotas.quotaIndex(), quotas.preemptsWithinQuota(), quotas.hasMax(), largestNodeGpus, clusterGpus,
                        policy.fairSharing() != FairSharingPreemption.Never));
        this.topology = new TopologyTally(domains, byId, table.anyRequired(),
                new Relaxation(policy.placement(), holdings, at -> push(at, Kind.RELAX, null, 0)));
    }

    public PolicyResult run() {
        long wallStart = System.nanoTime();
        long nextReport = wallStart + 1_000_000_000L;
        int nextArrival = 0;
        long limit = trace.lastSubmitMillis() + STOP_AFTER_LAST_SUBMIT;
        long steps = 0;
        while (true) {
            Event head = events.peek();
            boolean arrival = nextArrival < jobs.size() && (head == null || jobs.get(nextArrival).trace.submitMillis() <= head.time());
            long t = arrival ? jobs.get(nextArrival).trace.submitMillis() : head == null ? -1 : head.time();
            if (t < 0 || t > limit) {
                break;
            }
            recorder.advance(t);
            now = t;
            if (arrival) {
                arrive(jobs.get(nextArrival++));
            } else {
                handle(events.poll());
            }
            if ((++steps & 1023) == 0 && listener != null && System.nanoTime() > nextReport) {
                listener.progress(policy.name(), now, trace.lastSubmitMillis(), done, jobs.size());
                nextReport = System.nanoTime() + 1_000_000_000L;
            }
        }
        return tally.result(policy, trace, jobs, tenantNames, recorder, clusterGpus, done, cycles, schedulerNanos,
                (System.nanoTime() - wallStart) / 1e9, topology.result(jobs, now));
    }

    // --- events ---

    /** The job arrives, or queues again after a stop. */
    private void arrive(SimJob job) {
        job.state = SimJob.State.QUEUED;
        job.queuedSince = now;
        topology.queued(job);
        queued.add(job);
        demand(job, 1);
        changed();
    }

    private void handle(Event event) {
        SimJob job = event.job();
        switch (event.kind()) {
            case CYCLE -> cycle();
            case RELAX -> changed(); // a cycle shows the core the gangs relaxed
            case FINISH -> {
                if (job.attempt == event.attempt() && job.segment == event.segment() && (job.state == SimJob.State.RUNNING
                        || job.state == SimJob.State.STOPPING)) {
                    release(job);
                    job.state = SimJob.State.DONE;
                    job.finishedAt = now;
                    done++;
                    changed();
                }
            }
            case STOPPED -> {
                if (job.attempt == event.attempt() && job.state == SimJob.State.STOPPING) {
                    tally.lost((double) (job.progressAtStop - job.durableAtStop) * job.gpus(), !job.inQuota);
                    release(job);
                    requeue(job, job.durableAtStop);
                }
            }
            case SHRUNK -> {
                if (job.attempt == event.attempt() && (job.state == SimJob.State.RUNNING || job.state == SimJob.State.STOPPING)) {
                    shrunk(job);
                }
            }
            case FAILED -> {
                if (job.attempt == event.attempt() && job.state == SimJob.State.RUNNING) {
                    long durable = progress.durableAt(job, now);
                    tally.failed((double) (progress.at(job, now) - durable) * job.gpus());
                    release(job);
                    requeue(job, durable);
                }
            }
        }
    }

    private void release(SimJob job) {
        holdings.released(job);
        recorder.holding(job, -1);
        job.allocations = List.of();
        job.releasing = List.of();
        job.borrowedRanks = Set.of();
        job.viewChanged();
    }

    private void requeue(SimJob job, long durable) {
        job.durable = durable;
        job.attempt++;
        job.reclaimFor = null;
        arrive(job);
    }

    /**
     * Something changed: a cycle runs at the next tick of the scheduling interval (now, if now is one and no cycle
     * ran at it yet). Ticks are multiples of the interval, so a change waits less than one interval to be seen.
     */
    private void changed() {
        if (firstChangeSinceCycle < 0) {
            firstChangeSinceCycle = now;
        }
        if (!cycleScheduled) {
            cycleScheduled = true;
            long interval = policy.schedulingInterval().toMillis();
            long tick = Math.floorDiv(now + interval - 1, interval) * interval;
            push(tick > lastCycle ? tick : lastCycle + interval, Kind.CYCLE, null, 0);
        }
    }

    private void push(long time, Kind kind, SimJob job, int attempt) {
        events.add(new Event(time, kind, seq++, job, attempt, job == null ? 0 : job.segment));
    }

    // --- the scheduling cycle ---

    private void cycle() {
        cycleScheduled = false;
        lastCycle = now;
        long changedAt = firstChangeSinceCycle < 0 ? now : firstChangeSinceCycle;
        firstChangeSinceCycle = -1;
        holdings.beginCycle(now);
        topology.beginCycle(now); // before the queue is read
        List<PendingRun> shown = admissibleOnly ? shownQueue.forCycle() : new ArrayList<>(queued.size());
        if (!admissibleOnly) {
            queued.forEach(job -> shown.add(job.pending));
        }
        // Nothing to admit or promote, but elastic jobs may grow into what is free.
        List<PendingRun> pending = shown == null && holdings.mayGrow() ? List.of() : shown;
        if (pending == null) {
            cycles++;
            guaranteeWaits.cycleEnded(byId, now, changedAt);
            return;
        }
        long start = System.nanoTime();
        // Most cycles are decided on the cut; the few where it did not hold are decided again on every shown job.
        List<PendingRun> cut = admissibleOnly ? shownQueue.cut() : null;
        CycleResult result = scheduler.schedule(holdings.state(), cut != null ? cut : pending, EPOCH.plusMillis(now));
        if (cut != null && !shownQueue.cutHeld(result)) {
            result = scheduler.schedule(holdings.state(), pending, EPOCH.plusMillis(now));
        }
        schedulerNanos += System.nanoTime() - start;
        cycles++;
        Decision.Handler<Void> apply = new Applier(this, changedAt);
        for (Decision decision : result.decisions()) {
            topology.decided(decision);
            if (decision instanceof Decision.Wait wait && !guaranteeWaits.matters(wait)) {
                continue; // most decisions: nothing to record
            }
            decision.accept(apply);
        }
        guaranteeWaits.cycleEnded(byId, now, changedAt);
    }

    /** The job the core knows by {@code id}. */
    SimJob job(RunId id) {
        return byId.get(id);
    }

    /** A job on idle capacity now fits its guarantee: it stands InQuota from now on. */
    void promote(SimJob job) {
        recorder.holding(job, -1);
        job.inQuota = true;
        holdings.promoted(job, now);
        recorder.holding(job, 1);
    }

    /** The job is stopped to be started again elsewhere (a move). */
    void moved(SimJob job) {
        job.movedAt = now;
    }

    /** The cycle tells the job why it waits: its guarantee wait may start or stop. */
    void waiting(SimJob job, WaitReason reason, long changedAt) {
        guaranteeWaits.told(job, reason, now, changedAt);
    }

    /** A queued job that may borrow, and could ever start, wants idle capacity: its tenant has demand. */
    private void demand(SimJob job, int sign) {
        if (job.idleMode.mayBorrow() && job.trace.gpus() <= largestNodeGpus && job.queueGpus() <= clusterGpus) {
            recorder.demand(job.tenant, sign);
        }
    }

    void admit(SimJob job, Decision.Admit admit) {
        queued.remove(job);
        demand(job, -1);
        reclaiming.remove(job);
        job.queuedTotal += now - job.queuedSince;
        if (job.firstStart < 0) {
            job.firstStart = now;
        }
        job.state = SimJob.State.RUNNING;
        job.attemptStart = now;
        job.inQuota = admit.realTimeResources() == RealTimeResources.InQuota;
        List<Allocation> allocations = job.allocationsAt(admit.placements());
        job.allocations = List.copyOf(allocations); // immutable: each cycle's ActiveRun takes it without a copy
        job.borrowedRanks = admit.borrowed();
        job.releasing = List.of();
        job.viewChanged();
        progress.start(job, now, allocations.size());
        topology.admitted(job);
        holdings.started(job, now);
        recorder.holding(job, 1);
        double guaranteeWait = guaranteeWaits.started(job, now);
        if (guaranteeWait >= 0) {
            tally.guaranteeWait(guaranteeWait);
        }
        if (job.inQuota && job.reclaimFrom >= 0) {
            tally.reclaimed(job.tenant, (now - job.reclaimFrom) / 1000.0, new ReclaimSample(job.trace.index(), tenantNames.get(job.tenant), job.gpus(), job.reclaimFrom / 1000.0, job.firstVictimsAt / 1000.0,
                    job.lastVictimsAt / 1000.0, job.reclaimRounds, job.reclaimVictims, now / 1000.0));
        }
        job.clearWaits();
        job.pending = job.pending.withReclaimed(false);
        push(progress.finishTime(job), Kind.FINISH, job, job.attempt);
        if (policy.meanTimeBetweenFailures() != null) {
            // Seeded per job and attempt, so a failure does not depend on the order other events were handled in.
            SplittableRandom random = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + job.trace.index() * 1_000_003L + job.attempt);
            double mean = policy.meanTimeBetweenFailures().toMillis() / (double) job.trace.instances();
            long failAt = now + (long) (-Math.log(1 - random.nextDouble()) * mean);
            if (failAt < progress.finishTime(job)) {
                push(failAt, Kind.FAILED, job, job.attempt);
            }
        }
    }

    /** @param kind a reclaim of borrowed capacity (counted in the reclaim figures), a move, or a preemption for fairness */
    void preempt(SimJob job, SimJob forRun, long changedAt, Decision.PreemptKind kind) {
        job.state = SimJob.State.STOPPING;
        job.reclaimFor = forRun.id();
        holdings.stopping(job, now);
        tally.preempted(job.tenant);
        victimFor(forRun, changedAt, kind == Decision.PreemptKind.Reclaim, kind == Decision.PreemptKind.FairSharing);
        long grace = policy.gracePeriod().toMillis();
        long save = policy.checkpointSave().toMillis();
        if (policy.checkpointOnNotice() && save <= grace) {
            // It saves what it has on the notice and stops once saved.
            job.progressAtStop = progress.at(job, now);
            job.durableAtStop = job.progressAtStop;
            job.stopAt = now + save;
        } else {
            job.stopAt = now + grace;
            job.progressAtStop = progress.at(job, job.stopAt);
            job.durableAtStop = progress.durableAt(job, job.stopAt);
        }
        push(job.stopAt, Kind.STOPPED, job, job.attempt);
    }

    /** Runs were stopped, or instances removed, for {@code forRun} ({@code asBorrower}: as a borrower): the capacity is its own once they are gone. */
    private void victimFor(SimJob forRun, long changedAt, boolean reclaim, boolean asBorrower) {
        forRun.reclaimAsBorrower = asBorrower;
        if (reclaim) {
            if (forRun.reclaimFrom < 0) {
                forRun.reclaimFrom = Math.max(forRun.queuedSince, changedAt);
                forRun.firstVictimsAt = now;
            }
            if (forRun.lastVictimsAt != now) {
                forRun.reclaimRounds++;
                forRun.lastVictimsAt = now;
            }
            forRun.reclaimVictims++;
        }
        forRun.pending = forRun.pending.withReclaimed(true); // same queue order: the queue needs no re-sorting
        reclaiming.add(forRun);
    }

    // --- elastic jobs (docs/elastic.md) ---

    /** The job gets instances: it changes size now (its survivors save, restart in place and pause with the new ones). */
    void grow(SimJob job, Decision.Grow grow) {
        if (job.state != SimJob.State.RUNNING || !job.releasing.isEmpty()) {
            throw new IllegalStateException("job " + job.id() + " grown while " + job.state + (job.releasing.isEmpty() ? "" : " and shrinking"));
        }
        List<Allocation> added = job.allocationsAt(grow.placements());
        recorder.holding(job, -1);
        holdings.resized(job, now, () -> {
            List<Allocation> live = new ArrayList<>(job.allocations);
            live.addAll(added);
            live.sort(Comparator.comparingInt(Allocation::rank));
            job.allocations = List.copyOf(live);
            if (!grow.borrowed().isEmpty()) {
                java.util.TreeSet<Integer> borrowed = new java.util.TreeSet<>(job.borrowedRanks);
                borrowed.addAll(grow.borrowed());
                job.borrowedRanks = borrowed;
            }
            progress.resize(job, now, job.allocations.size(), policy.elastic().worldChangePause().toMillis());
        }, added, List.of());
        recorder.holding(job, 1);
        tally.grew(added.size());
        push(progress.finishTime(job), Kind.FINISH, job, job.attempt);
    }

    /**
     * Instances of the job are removed for {@code forRun}: each gets the notice and the grace period of a preemption (with
     * {@code checkpoint.onNotice} the job saves and they go once saved), and the job goes on at its size until they are gone.
     */
    void shrink(SimJob job, Decision.Shrink shrink, SimJob forRun, long changedAt) {
        long grace = policy.gracePeriod().toMillis();
        long save = policy.checkpointSave().toMillis();
        long goneAt = now + (policy.checkpointOnNotice() && save <= grace ? save : grace);
        // Extras on idle capacity give way to a borrower (for fairness, or to its minimum); a shrink's instances stand alike.
        boolean forBorrower = shrink.kind() == Decision.PreemptKind.FairSharing || shrink.kind() == Decision.PreemptKind.Extras
                && (!job.inQuota || job.borrowedRanks.contains(shrink.ranks().get(0)));
        recorder.holding(job, -1);
        holdings.resized(job, now, () -> {
            List<Allocation> live = new ArrayList<>();
            List<SimJob.Releasing> releasing = new ArrayList<>(job.releasing);
            for (Allocation allocation : job.allocations) {
                if (shrink.ranks().contains(allocation.rank())) {
                    releasing.add(new SimJob.Releasing(allocation, forRun.id(), goneAt, job.inQuota && !job.borrowedRanks.contains(allocation.rank())));
                } else {
                    live.add(allocation);
                }
            }
            job.allocations = List.copyOf(live);
            job.releasing = List.copyOf(releasing);
            if (!job.borrowedRanks.isEmpty()) {
                java.util.TreeSet<Integer> borrowed = new java.util.TreeSet<>(job.borrowedRanks);
                borrowed.removeAll(shrink.ranks());
                job.borrowedRanks = borrowed;
            }
        }, List.of(), List.of());
        recorder.holding(job, 1);
        tally.shrunk(job.tenant, shrink.ranks().size());
        victimFor(forRun, changedAt, shrink.kind() == Decision.PreemptKind.Reclaim, forBorrower); // extras giving way reclaim no guarantee
        push(goneAt, Kind.SHRUNK, job, job.attempt);
    }

    /** Instances a shrink removed are gone: their capacity is free, and a running job changes size (its survivors restart). */
    private void shrunk(SimJob job) {
        List<Allocation> gone = new ArrayList<>();
        List<SimJob.Releasing> left = new ArrayList<>();
        for (SimJob.Releasing r : job.releasing) {
            if (r.goneAt() <= now) {
                gone.add(r.allocation());
            } else {
                left.add(r);
            }
        }
        if (gone.isEmpty()) {
            return;
        }
        boolean running = job.state == SimJob.State.RUNNING;
        recorder.holding(job, -1);
        holdings.resized(job, now, () -> {
            job.releasing = List.copyOf(left);
            if (running) {
                progress.resize(job, now, job.allocations.size() + left.size(), policy.elastic().worldChangePause().toMillis());
            }
        }, List.of(), gone);
        recorder.holding(job, 1);
        if (running) {
            push(progress.finishTime(job), Kind.FINISH, job, job.attempt);
        }
        changed();
    }
}
