package io.slipstream.server.control;

import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.InstanceReport;
import io.slipstream.model.FaultState;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.lifecycle.RunLifecycle;
import io.slipstream.model.usage.UsageChanges;
import io.slipstream.store.ConflictException;
import io.slipstream.store.NodeDown;
import io.slipstream.store.Store;
import io.slipstream.store.StoreTx;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What executors report, queued from any thread and recorded by the control loop's thread, at least once: a report
 * is dropped only once it is applied (executors report an exit once, so losing it would strand the run). It also
 * knows which adopted instances have not been heard of since this process started.
 */
final class ReportIntake {
    private static final Logger LOG = LoggerFactory.getLogger(ReportIntake.class);

    private final Store store;
    private final Clock clock;
    private final Runnable wakeUp;
    private final ConcurrentLinkedQueue<InstanceReport> reports = new ConcurrentLinkedQueue<>();
    private final Set<InstanceId> unconfirmed = ConcurrentHashMap.newKeySet();
    private volatile Instant unconfirmedUntil = Instant.MIN;

    /** @param wakeUp asks the loop for a cycle at once */
    ReportIntake(Store store, Clock clock, Runnable wakeUp) {
        this.store = store;
        this.clock = clock;
        this.wakeUp = wakeUp;
    }

    /** From any thread. */
    void offer(InstanceReport report) {
        reports.add(report);
        wakeUp.run();
    }

    /** These adopted instances are awaited until {@code until}: an executor reports them within moments. */
    void awaitAdopted(Set<InstanceId> adopted, Instant until) {
        unconfirmed.addAll(adopted);
        unconfirmedUntil = until;
    }

    /** The adopted instances not heard of yet; none once the wait is over (waiting longer would hide a timeout). */
    Set<InstanceId> unconfirmed(Instant now) {
        if (!unconfirmed.isEmpty() && now.isAfter(unconfirmedUntil)) {
            unconfirmed.clear();
        }
        return Set.copyOf(unconfirmed);
    }

    /** At most this many reports are recorded in one transaction. */
    static final int BATCH = 1_000;

    /**
     * Records every queued report; stops at the first that cannot be, to try it again next cycle. They are recorded in
     * one transaction (many instances end in the same moment); if that fails, one at a time, as each can be.
     */
    void applyAll(Map<String, NodeDown> downNodes) {
        List<InstanceReport> batch = new ArrayList<>();
        for (InstanceReport queued : reports) {
            if (batch.size() == BATCH) {
                break;
            }
            batch.add(queued);
        }
        if (batch.size() > 1) {
            try {
                store.commit(tx -> batch.forEach(report -> apply(tx, report, downNodes)));
                batch.forEach(report -> {
                    reports.remove(); // only this thread takes reports off the queue: these are its head
                    unconfirmed.remove(report.id()); // heard of, once it is recorded
                });
                if (!reports.isEmpty()) {
                    wakeUp.run(); // more than a batch, or some came meanwhile: the next cycle follows at once
                }
                return;
            } catch (io.slipstream.store.StoreUnavailableException | io.slipstream.store.FencedException e) {
                throw e;
            } catch (RuntimeException e) {
                LOG.debug("recording {} reports at once failed ({}); one at a time", batch.size(), e.toString());
            }
        }
        applyEach(downNodes);
    }

    private void applyEach(Map<String, NodeDown> downNodes) {
        InstanceReport report;
        while ((report = reports.peek()) != null) {
            try {
                InstanceReport next = report;
                store.commit(tx -> apply(tx, next, downNodes));
            } catch (ConflictException e) {
                wakeUp.run(); // the instance changed meanwhile: apply it again next cycle
                return;
            } catch (io.slipstream.store.StoreUnavailableException | io.slipstream.store.FencedException e) {
                throw e; // kept for when the store is back; the loop pauses
            } catch (RuntimeException e) {
                LOG.warn("could not record {}; retrying next cycle: {}", report, e.toString());
                return;
            }
            reports.remove();
            unconfirmed.remove(report.id());
        }
    }

    private void apply(StoreTx tx, InstanceReport report, Map<String, NodeDown> downNodes) {
        Optional<InstanceRecord> found = tx.runs().instance(report.id());
        if (found.isEmpty()) {
            return; // late: its run is gone
        }
        InstanceRecord instance = found.get();
        NodeDown down = downNodes.get(instance.node());
        String preemption = report instanceof InstanceReport.Exited exited && exited.terminated() ? preemption(tx, instance) : null;
        InstanceReports.apply(instance, report, down == null ? null : down.reason(), preemption, clock.instant()).ifPresent(change -> {
            tx.updateInstance(change.next());
            if (change.event() != null) {
                tx.appendEvent(change.event());
            }
            if (change.next().state().isFinal() && change.next().usage() != null) {
                recordMeasured(tx, change.next());
            }
            if (change.wakeUp()) {
                wakeUp.run(); // with InOrder startup, the next node group may start
            }
        });
    }

    /**
     * What the executor measured of an instance that ended goes into the usage record with its end, charged to its run's
     * group (a run that cannot be read is left alone, as the store logged: its instance's end is still recorded).
     */
    private static void recordMeasured(StoreTx tx, InstanceRecord ended) {
        try {
            tx.runs().get(ended.id().runId()).map(run -> UsageChanges.measured(run, ended.id().rank(), ended.usage(), ended.finishedAt()))
                    .ifPresent(measured -> tx.recordUsage(List.of(measured)));
        } catch (io.slipstream.store.UnreadableRecordException e) {
            LOG.debug("the usage of instance {} is not accounted: its run cannot be read", ended.id());
        }
    }

    /**
     * How an instance stopped for its run's preemption ends: {@code Preempted}, or {@code Preempted: NodeDrain} when a
     * drain moves the run; {@code null} if its run is not being preempted.
     */
    private static String preemption(StoreTx tx, InstanceRecord instance) {
        try {
            return tx.runs().get(instance.id().runId()).filter(run -> run.restartCause() == FaultState.RestartCause.PREEMPTION)
                    .map(run -> run.reason().startsWith(RunLifecycle.NODE_DRAIN) ? "Preempted: " + RunLifecycle.NODE_DRAIN : "Preempted")
                    .orElse(null);
        } catch (io.slipstream.store.UnreadableRecordException e) {
            return null; // its run is left alone (the store logged why): its instance's report is still recorded
        }
    }
}
