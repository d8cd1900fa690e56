package io.slipstream.store.jdbc;

import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RealTimeResources;
import io.slipstream.api.run.RunId;
import io.slipstream.model.EventType;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.store.StoreUnavailableException;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.statement.SqlStatements;
import org.jdbi.v3.core.statement.StatementContext;
import org.jdbi.v3.core.statement.StatementCustomizer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the embedded store keeps between reads: the active runs ({@link ActiveRunRows}), the instances of those holding resources ({@link HeldInstances}). */
class KeptReadsTest {
    private static final Instant T0 = Instant.parse("2026-03-01T10:00:00Z");

    @TempDir
    Path dataDir;

    /**
     * A read of the instances that fails once begun (H2's statement timeout, 57014: the store "away for a moment", which
     * the control loop waits out and reads again) must not lose what the transactions before it wrote: the next read
     * that succeeds returns the instances as they are.
     */
    @Test
    void aReadThatFailsOnceBegunLosesNoWrittenInstances() throws Exception {
        try (JdbcStore store = JdbcStore.openH2(dataDir)) {
            RunRecord queued = submitted(store, "held");
            InstanceRecord pending = store.write(tx -> {
                RunRecord admitted = tx.updateRun(queued.admitted(RealTimeResources.InQuota, "Admitted", T0));
                return tx.createInstances(List.of(InstanceRecord.pending(new InstanceId(queued.id(), admitted.attempt(), 0), "main", 0,
                        "node-1", List.of()))).get(0);
            });
            store.runs().active(); // every state known: the instances of the runs holding resources are kept between reads
            assertThat(store.runs().instancesOfActiveRuns()).containsExactly(pending);

            InstanceRecord running = store.write(tx -> tx.updateInstance(pending.running(Map.of("pid", "1"), T0.plusSeconds(1))));

            timesOutOnce(store, "FROM instances");
            assertThatThrownBy(() -> store.runs().instancesOfActiveRuns()).isInstanceOf(StoreUnavailableException.class);

            assertThat(store.runs().instancesOfActiveRuns()).as("read after the write, once the store answers again").containsExactly(running);
        }
    }

    /** The same for the active runs: a read of the rows written since that fails loses none of them. */
    @Test
    void aReadOfTheActiveRunsThatFailsLosesNoWrittenRun() throws Exception {
        try (JdbcStore store = JdbcStore.openH2(dataDir)) {
            RunRecord queued = submitted(store, "kept");
            assertThat(store.runs().active()).containsExactly(queued); // the first read, whole: kept from now on
            RunRecord admitted = store.write(tx -> tx.updateRun(queued.admitted(RealTimeResources.InQuota, "Admitted", T0.plusSeconds(1))));

            timesOutOnce(store, "FROM runs WHERE id IN");
            assertThatThrownBy(() -> store.runs().active()).isInstanceOf(StoreUnavailableException.class);
            assertThat(store.runs().active()).as("read after the write, once the store answers again").containsExactly(admitted);

            RunRecord ended = store.write(tx -> tx.updateRun(admitted.moveTo(io.slipstream.api.run.RunState.SUCCEEDED, "Done", T0.plusSeconds(2))));
            assertThat(ended.state().isFinal()).isTrue();
            assertThat(store.runs().active()).isEmpty();
        }
    }

    /** The ids read again go in IN lists of a few lengths (powers of two), not one statement text per count. */
    @Test
    void inListsArePaddedToAPowerOfTwoWithTheLastIdAndHoldAtMost1024() {
        List<String> ids = java.util.stream.IntStream.range(0, 1500).mapToObj(i -> "run-" + i).toList();
        assertThat(InstanceRows.inList(ids.subList(0, 1), 0)).containsExactly("run-0");
        assertThat(InstanceRows.inList(ids.subList(0, 3), 0)).containsExactly("run-0", "run-1", "run-2", "run-2");
        assertThat(InstanceRows.inList(ids.subList(0, 5), 0)).hasSize(8).endsWith("run-4", "run-4", "run-4", "run-4");
        assertThat(InstanceRows.inList(ids, 0)).hasSize(1024).startsWith("run-0").endsWith("run-1023");
        assertThat(InstanceRows.inList(ids, 1024)).hasSize(512).startsWith("run-1024").endsWith("run-1499").containsAll(ids.subList(1024, 1500));
    }

    private static RunRecord submitted(JdbcStore store, String job) {
        RunRecord run = RunRecord.queued(RunId.newFor(job), "team-a", job, 1, aJob(job).workspace("team-a").replicas(1).gpus(1).spec(), T0);
        return store.write(tx -> tx.createRun(run, RunEvent.of(run.id(), T0, EventType.StateChanged, "QUEUED", "Submitted", null, null)));
    }

    /** The next statement of the store whose SQL contains {@code sql} times out (H2's 57014), once. */
    private static void timesOutOnce(JdbcStore store, String sql) throws ReflectiveOperationException {
        AtomicBoolean timeOut = new AtomicBoolean(true);
        jdbiOf(store).getConfig(SqlStatements.class).addCustomizer(new StatementCustomizer() {
            @Override
            public void beforeExecution(PreparedStatement statement, StatementContext ctx) throws SQLException {
                if (ctx.getRenderedSql().contains(sql) && timeOut.getAndSet(false)) {
                    throw new SQLException("Statement was canceled or the session timed out", "57014", 57014);
                }
            }
        });
    }

    private static Jdbi jdbiOf(JdbcStore store) throws ReflectiveOperationException {
        java.lang.reflect.Field transactions = JdbcStore.class.getDeclaredField("transactions");
        transactions.setAccessible(true);
        java.lang.reflect.Field jdbi = Transactions.class.getDeclaredField("jdbi");
        jdbi.setAccessible(true);
        return (Jdbi) jdbi.get(transactions.get(store));
    }
}
