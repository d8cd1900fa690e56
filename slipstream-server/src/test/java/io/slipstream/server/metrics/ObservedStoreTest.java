package io.slipstream.server.metrics;

import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.model.EventType;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import io.slipstream.store.StoreUnavailableException;
import io.slipstream.store.memory.InMemoryStore;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class ObservedStoreTest {
    private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");

    private final InMemoryStore target = new InMemoryStore();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final Store store = ObservedStore.wrap(target, registry, new RunMetrics(registry, Clock.fixed(T0, ZoneOffset.UTC)));

    private RunRecord created() {
        RunRecord run = RunRecord.queued(RunId.newFor("job"), "team-a", "job", 1, aJob("job").workspace("team-a").spec(), T0);
        return store.createRun(run, RunEvent.of(run.id(), T0, EventType.StateChanged, "QUEUED", "Submitted", null, null));
    }

    private double admissions() {
        return registry.find("slipstream.admissions").counters().stream().mapToDouble(c -> c.count()).sum();
    }

    @Test
    void aWriteInATransactionCountsOnceItCommitsAndNotAtAllIfItRollsBack() {
        RunRecord run = created();
        RunRecord admitted = run.admitted(RealTimeResources.NotInQuota, "Admitted", T0);
        assertThatThrownBy(() -> store.inTransaction(tx -> {
            tx.updateRun(admitted);
            throw new IllegalStateException("rolled back");
        })).isInstanceOf(IllegalStateException.class).hasMessage("rolled back");
        assertThat(admissions()).isZero();
        assertThat(target.getRun(run.id()).orElseThrow().state().name()).isEqualTo("QUEUED");

        store.inTransaction(tx -> tx.updateRun(admitted));
        assertThat(admissions()).isEqualTo(1);
    }

    /**
     * The control loop writes through a FencedStore, whose writes go to the store it wraps (this proxy), not to the
     * transaction's store: they join the open transaction all the same, so they count only once it commits.
     */
    @Test
    void aWriteThroughTheOuterStoreInsideATransactionCountsOnlyOnceItCommits() {
        RunRecord run = created();
        RunRecord admitted = run.admitted(RealTimeResources.NotInQuota, "Admitted", T0);
        long epoch = store.claimLeadership("me", T0, java.time.Duration.ofMinutes(1)).epoch();
        Store fenced = new io.slipstream.store.FencedStore(store, epoch);
        assertThatThrownBy(() -> fenced.inTransaction(tx -> {
            tx.updateRun(admitted);
            throw new IllegalStateException("rolled back");
        })).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> store.inTransaction(tx -> {
            store.updateRun(admitted);
            throw new IllegalStateException("rolled back");
        })).isInstanceOf(IllegalStateException.class);
        assertThat(target.getRun(run.id()).orElseThrow().state().name()).isEqualTo("QUEUED");
        assertThat(admissions()).isZero();

        fenced.inTransaction(tx -> tx.updateRun(admitted));
        assertThat(admissions()).isEqualTo(1);
    }

    /**
     * Outermost transactions are counted once each, by outcome: the calls inside them (a FencedStore's writes open a
     * nested transaction each) are not transactions of their own.
     */
    @Test
    void eachOutermostTransactionCountsOnceByItsOutcome() {
        RunRecord run = created();
        long epoch = store.claimLeadership("me", T0, java.time.Duration.ofMinutes(1)).epoch();
        Store fenced = new io.slipstream.store.FencedStore(store, epoch);
        fenced.inTransaction(tx -> {
            tx.updateRun(run.admitted(RealTimeResources.NotInQuota, "Admitted", T0));
            tx.appendEvent(RunEvent.of(run.id(), T0, EventType.StateChanged, "STARTING", "Admitted", null, null));
            return store.inTransaction(nested -> nested.getRun(run.id()));
        });
        assertThatThrownBy(() -> store.inTransaction(tx -> {
            throw new IllegalStateException("rolled back");
        })).isInstanceOf(IllegalStateException.class);

        assertThat(registry.find("slipstream.store.transaction").tag("outcome", "ok").timer().count()).isEqualTo(1);
        assertThat(registry.find("slipstream.store.transaction").tag("outcome", "IllegalStateException").timer().count()).isEqualTo(1);
        assertThat(registry.find("slipstream.store.operation").tag("operation", "inTransaction").timers().stream()
                .mapToLong(io.micrometer.core.instrument.Timer::count).sum()).as("nested ones are store calls all the same").isGreaterThan(2);
    }

    /**
     * Anyone (an API poll, the control loop) may read a run between the commit of this replica's write and the moment
     * the writer hands the write on. That read must not pass for another replica's news and swallow the count: the
     * CI saw a run's admission go uncounted while its submitter polled it.
     */
    @Test
    void aReadBetweenAWritesCommitAndItsHandingOnDoesNotSwallowItsCount() {
        java.util.concurrent.atomic.AtomicReference<Store> observed = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicReference<RunId> polled = new java.util.concurrent.atomic.AtomicReference<>();
        Store pollAfterEachCommit = (Store) java.lang.reflect.Proxy.newProxyInstance(Store.class.getClassLoader(), new Class<?>[] {Store.class},
                (proxy, method, args) -> {
                    Object result;
                    try {
                        result = method.invoke(target, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                    if ((method.getName().equals("inTransaction") || method.getName().equals("updateRun")) && polled.get() != null) {
                        Thread poll = new Thread(() -> observed.get().getRun(polled.get()));
                        poll.start();
                        poll.join();
                    }
                    return result;
                });
        observed.set(ObservedStore.wrap(pollAfterEachCommit, registry, new RunMetrics(registry, Clock.fixed(T0, ZoneOffset.UTC))));
        Store store = observed.get();
        RunRecord queued = RunRecord.queued(RunId.newFor("job"), "team-a", "job", 1, aJob("job").workspace("team-a").spec(), T0);
        RunRecord run = store.createRun(queued, RunEvent.of(queued.id(), T0, EventType.StateChanged, "QUEUED", "Submitted", null, null));
        polled.set(run.id());

        RunRecord admitted = store.inTransaction(tx -> tx.updateRun(run.admitted(RealTimeResources.NotInQuota, "Admitted", T0)));
        assertThat(admissions()).isEqualTo(1);

        store.updateRun(admitted.moveTo(io.slipstream.api.run.RunState.RUNNING, "Running", T0).terminating(io.slipstream.api.run.RunState.CANCELLED, "Cancel")
                .moveTo(io.slipstream.api.run.RunState.CANCELLED, "Cancelled", T0)); // outside any transaction: committed when the call returns
        assertThat(registry.find("slipstream.runs.finished").tags("state", "CANCELLED").counter()).isNotNull()
                .extracting(c -> c.count()).isEqualTo(1.0);
    }

    @Test
    void everyCallIsTimedByOperationAndOutcomeAndAnOutageReachesTheCallerAsItself() {
        created();
        store.activeRuns();
        assertThat(registry.find("slipstream.store.operation").tags("operation", "activeRuns", "outcome", "ok").timer().count()).isEqualTo(1);
        target.simulateOutage(true);
        assertThatThrownBy(store::activeRuns).isInstanceOf(StoreUnavailableException.class);
        assertThat(registry.find("slipstream.store.operation").tags("operation", "activeRuns", "outcome", "StoreUnavailableException").timer().count())
                .isEqualTo(1);
    }
}
