package io.slipstream.server.control;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.executor.Executor;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import io.slipstream.model.lifecycle.RunLifecycle;
import io.slipstream.model.lifecycle.Step;
import io.slipstream.store.NodeDown;
import io.slipstream.store.Store;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a loop does once, before its first cycle: re-attach to the instances that ran before this start. No cycle
 * runs before it is done (a run whose instances are not adopted yet would look as if they had vanished).
 */
final class Recovery {
    private static final Logger LOG = LoggerFactory.getLogger(Recovery.class);
    /** How long timeouts wait for adopted instances to report (an executor reports them within moments). */
    private static final Duration ADOPTION_WAIT = Duration.ofMinutes(1);

    private final Store store;
    private final Executor executor;
    private final Clock clock;
    private final RunLifecycle lifecycle;
    private final ReportIntake reports;

    Recovery(Store store, Executor executor, Clock clock, RunLifecycle lifecycle, ReportIntake reports) {
        this.store = store;
        this.executor = executor;
        this.clock = clock;
        this.lifecycle = lifecycle;
        this.reports = reports;
    }

    /**
     * Asks the executor about every instance the store says is running (each answers Running, Exited or Lost), and
     * tells again those told to stop before: the previous process may have died before their grace period ended.
     */
    void adopt() {
        Map<InstanceId, Map<String, String>> handles = new LinkedHashMap<>();
        List<InstanceRecord> stopping = new ArrayList<>();
        for (InstanceRecord instance : store.runs().activeInstances()) {
            if (instance.state() == InstanceState.RUNNING) {
                handles.put(instance.id(), instance.handle());
                if (instance.stopRequestedAt() != null) {
                    stopping.add(instance);
                }
            }
        }
        if (handles.isEmpty()) {
            return;
        }
        LOG.info("adopting {} instance(s) that ran before this start", handles.size());
        // Until an adopted instance's report is in, its run's runtime is unknown: it is not timed out meanwhile.
        reports.awaitAdopted(handles.keySet(), clock.instant().plus(ADOPTION_WAIT));
        executor.adopt(handles);
        Map<String, NodeDown> down = store.runs().downNodes();
        for (InstanceRecord instance : stopping) {
            try {
                RunRecord run = store.runs().get(instance.id().runId()).orElseThrow();
                Step.Stop again = lifecycle.stopAgain(run, instance); // the notice it had (an elastic run's world change: that one)
                Duration grace = down.containsKey(instance.node()) ? Duration.ZERO : again.grace();
                executor.terminate(instance.id(), instance.handle(), grace, again.reason());
            } catch (RuntimeException e) {
                LOG.warn("could not tell {} to stop again after the restart; its run's next cycle will: {}", instance.id(), e.toString());
                resendLater(instance);
            }
        }
    }

    /**
     * Records that the instance is to be told to stop again by its run's next cycle. If that cannot be recorded either,
     * the recovery fails and is tried again whole (its caller retries it until it is done): a stop that is neither
     * sent nor recorded as unsent would never be sent, and the run would wait for its instance forever.
     */
    private void resendLater(InstanceRecord instance) {
        store.write(tx -> tx.updateInstance(instance.stopToResend()));
    }
}
