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
import java.util.List;
import org.junit.jupiter.api.Test;

class ObservedStoreTest {
    private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");

    private final InMemoryStore target = new InMemoryStore();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final Store store = ObservedStore.wrap(target, registry, new RunMetrics(registry, Clock.fixed(T0, ZoneOffset.UTC)));

    private RunRecord created() {
        RunRecord run = RunRecord.queued(RunId.newFor("job"), "team-a", "job", 1, aJob("job").workspace("team-a").spec(), T0);
        return store.write(tx -> tx.createRun(run, RunEvent.of(run.id(), T0, EventType.StateChanged, "QUEUED", "Submitted", null, null)));
    }

    private double admissions() {
        return registry.find("slipstream.admissions").counters().stream().mapToDouble(c -> c.count()).sum();
    }

    @Test
    void aWriteInATransactionCountsOnceItCommitsAndNotAtAllIfItRollsBack() {
        RunRecord run = created();
        RunRecord admitted = run.admitted(RealTimeResources.NotInQuota, "Admitted", T0);
        assertThatThrownBy(() -> store.write(tx -> {
            tx.updateRun(admitted);
            throw new IllegalStateException("rolled back");
        })).isInstanceOf(IllegalStateException.class).hasMessage("rolled back");
        assertThat(admissions()).isZero();
        assertThat(target.runs().get(run.id()).orElseThrow().state().name()).isEqualTo("QUEUED");

        store.write(tx -> tx.updateRun(admitted));
        assertThat(admissions()).isEqualTo(1);
    }

    /**
     * The control loop writes through a FencedStore over this store: its writes count only once they commit. A write
     * through the store inside one of its transactions is refused (it would not join it), and counts nothing either.
     */
    @Test
    void aFencedWriteCountsOnlyOnceItCommitsAndAWriteOfTheStoreInsideATransactionIsRefused() {
        RunRecord run = created();
        RunRecord admitted = run.admitted(RealTimeResources.NotInQuota, "Admitted", T0);
        long epoch = store.leases().claim("me", T0, java.time.Duration.ofMinutes(1)).epoch();
        Store fenced = new io.slipstream.store.FencedStore(store, epoch);
        assertThatThrownBy(() -> fenced.write(tx -> {
            tx.updateRun(admitted);
            throw new IllegalStateException("rolled back");
        })).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> store.commit(tx -> store.write(inner -> inner.updateRun(admitted))))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("inside one of its own transactions");
        assertThat(target.runs().get(run.id()).orElseThrow().state().name()).isEqualTo("QUEUED");
        assertThat(admissions()).isZero();

        fenced.write(tx -> tx.updateRun(admitted));
        assertThat(admissions()).isEqualTo(1);
    }

    /**
     * Write transactions are counted once each, by outcome (a FencedStore's included: its check of the epoch is a call
     * in the transaction), and each call made in one is timed by its name.
     */
    @Test
    void eachWriteTransactionCountsOnceByItsOutcomeAndItsCallsByTheirNames() {
        RunRecord run = created();
        long epoch = store.leases().claim("me", T0, java.time.Duration.ofMinutes(1)).epoch();
        Store fenced = new io.slipstream.store.FencedStore(store, epoch);
        fenced.write(tx -> {
            tx.updateRun(run.admitted(RealTimeResources.NotInQuota, "Admitted", T0));
            tx.appendEvent(RunEvent.of(run.id(), T0, EventType.StateChanged, "STARTING", "Admitted", null, null));
            return tx.runs().get(run.id());
        });
        assertThatThrownBy(() -> store.commit(tx -> {
            throw new IllegalStateException("rolled back");
        })).isInstanceOf(IllegalStateException.class);

        assertThat(registry.find("slipstream.store.transaction").tag("outcome", "ok").timer().count()).as("the creation, the fenced write").isEqualTo(2);
        assertThat(registry.find("slipstream.store.transaction").tag("outcome", "IllegalStateException").timer().count()).isEqualTo(1);
        assertThat(registry.find("slipstream.store.operation").tag("operation", "write").timers().stream()
                .mapToLong(io.micrometer.core.instrument.Timer::count).sum()).isEqualTo(3);
        for (String operation : List.of("requireLeader", "updateRun", "appendEvent", "runs.get")) {
            assertThat(registry.find("slipstream.store.operation").tags("operation", operation, "outcome", "ok").timer().count()).as(operation).isEqualTo(1);
        }
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
        Store pollAfterEachCommit = new io.slipstream.store.InterceptedStore(target, (operation, args, proceed) -> {
            Object result = proceed.call();
            if (operation.equals("write") && polled.get() != null) {
                Thread poll = new Thread(() -> observed.get().runs().get(polled.get()));
                poll.start();
                poll.join();
            }
            return result;
        });
        observed.set(ObservedStore.wrap(pollAfterEachCommit, registry, new RunMetrics(registry, Clock.fixed(T0, ZoneOffset.UTC))));
        Store store = observed.get();
        RunRecord queued = RunRecord.queued(RunId.newFor("job"), "team-a", "job", 1, aJob("job").workspace("team-a").spec(), T0);
        RunRecord run = store.write(tx -> tx.createRun(queued, RunEvent.of(queued.id(), T0, EventType.StateChanged, "QUEUED", "Submitted", null, null)));
        polled.set(run.id());

        RunRecord admitted = store.write(tx -> tx.updateRun(run.admitted(RealTimeResources.NotInQuota, "Admitted", T0)));
        assertThat(admissions()).isEqualTo(1);

        store.write(tx -> tx.updateRun(admitted.moveTo(io.slipstream.api.run.RunState.RUNNING, "Running", T0).terminating(io.slipstream.api.run.RunState.CANCELLED, "Cancel")
                .moveTo(io.slipstream.api.run.RunState.CANCELLED, "Cancelled", T0))); // a transaction of its own: committed when the call returns
        assertThat(registry.find("slipstream.runs.finished").tags("state", "CANCELLED").counter()).isNotNull()
                .extracting(c -> c.count()).isEqualTo(1.0);
    }

    @Test
    void everyCallIsTimedByOperationAndOutcomeAndAnOutageReachesTheCallerAsItself() {
        created();
        store.runs().active();
        assertThat(registry.find("slipstream.store.operation").tags("operation", "runs.active", "outcome", "ok").timer().count()).isEqualTo(1);
        target.simulateOutage(true);
        assertThatThrownBy(() -> store.runs().active()).isInstanceOf(StoreUnavailableException.class);
        assertThat(registry.find("slipstream.store.operation").tags("operation", "runs.active", "outcome", "StoreUnavailableException").timer().count())
                .isEqualTo(1);
    }
}
