package io.slipstream.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.NodeGroupSpec;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.Resources;
import io.slipstream.store.BaseStoreContractTest;
import io.slipstream.store.Store;
import io.slipstream.store.StoreUnavailableException;
import io.slipstream.store.jdbc.h2.OneWriterAtATime;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class H2StoreTest extends BaseStoreContractTest {
    @TempDir
    Path dataDir;

    @Override
    protected Store createStore() {
        return JdbcStore.openH2(dataDir);
    }

    @Override
    protected boolean singleProcess() {
        return true; // the embedded file is locked by the process that opened it
    }

    @Override
    protected boolean oneWriterAtATime() {
        return true; // H2CrashConsistencyTest: why
    }

    @Override
    protected java.sql.Connection connection() throws Exception {
        return java.sql.DriverManager.getConnection(JdbcStore.h2Url(dataDir), "sa", "");
    }

    @Override
    protected void writtenBehindTheStoresBack() {
        ((JdbcStore) store).forgetKeptRows(); // the file is this process's alone: only a test writes behind the store
    }

    /**
     * Writes of different rows run one at a time ({@link OneWriterAtATime}): a writer waiting for an open write
     * transaction past the wait gets the store as unavailable (503); the writer is let go at commit and at rollback.
     */
    @Test
    void writesOfDifferentRowsRunOneAtATimeAndTheWriterIsLetGoAtCommitAndRollback() throws Exception {
        Instant t0 = Instant.parse("2026-03-01T10:00:00Z");
        try (OpenTransaction open = OpenTransaction.open(store, tx -> tx.createDocument(workspace("team-a"), t0), tx -> { })) {
            Future<?> other = open.meanwhile(() -> store.write(tx -> tx.createDocument(workspace("team-b"), t0)));
            assertThatThrownBy(() -> other.get(60, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("waited " + OneWriterAtATime.WAIT.toSeconds() + " s");
            open.finish();
        }
        ExecutorService another = Executors.newSingleThreadExecutor();
        try {
            another.submit(() -> store.write(tx -> tx.createDocument(workspace("team-b"), t0))).get(30, TimeUnit.SECONDS); // let go at commit
            assertThatThrownBy(() -> store.write(tx -> {
                tx.createDocument(workspace("team-c"), t0);
                throw new IllegalStateException("rolled back");
            })).hasMessage("rolled back");
            another.submit(() -> store.write(tx -> tx.createDocument(workspace("team-d"), t0))).get(30, TimeUnit.SECONDS); // and at rollback
        } finally {
            another.shutdownNow();
        }
        assertThat(store.documents().list(Kind.Workspace, null)).extracting(d -> d.document().name()).containsExactlyInAnyOrder("team-a", "team-b", "team-d");
    }

    /**
     * A writer whose durability is deferred (the control loop's, {@link Store#deferDurability}) waits for the one writing
     * and at most one queued before it, not for every request queued: with three queued behind an open transaction,
     * it writes first or second. Queued in order, each once the one before waits.
     */
    @Test
    void aDeferringWriterGoesBeforeTheWritersQueuedBeforeIt() throws Exception {
        Instant t0 = Instant.parse("2026-03-01T10:00:00Z");
        List<String> order = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        List<Thread> queued = new java.util.ArrayList<>();
        try (OpenTransaction open = OpenTransaction.open(store, tx -> tx.createDocument(workspace("team-a"), t0), tx -> { })) {
            for (String name : List.of("request-1", "request-2", "request-3", "loop")) {
                Thread writer = new Thread(() -> {
                    Runnable write = () -> store.commit(tx -> {
                        tx.createDocument(workspace(name), t0);
                        order.add(name); // the writer now
                    });
                    if (name.equals("loop")) {
                        try (Store.Deferral ignored = store.deferDurability()) {
                            write.run();
                        }
                    } else {
                        write.run();
                    }
                });
                writer.start();
                queued.add(writer);
                org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> writer.getState() == Thread.State.TIMED_WAITING);
            }
            open.finish();
            for (Thread writer : queued) {
                writer.join(30_000);
            }
        }
        assertThat(order).hasSize(4);
        assertThat(order.indexOf("loop")).as("the deferring writer's place in %s", order).isLessThanOrEqualTo(1);
    }

    /** H2's sessions carry the statement timeout (set once at connect, not before every statement). */
    @Test
    void everyConnectionHasTheStatementTimeout() {
        try (JdbcStore store = JdbcStore.openH2(dataDir.resolve("another"))) {
            assertThat(store.sessionStatementTimeoutSeconds()).isEqualTo(ConnectionPool.STATEMENT_TIMEOUT_S);
        }
    }

    /** What was stored is data: a job beyond what users may send today (more replicas, a longer runtime) still reads. */
    @Test
    void aStoredJobBeyondTodaysLimitsReadsBack() {
        JobSpec job = new JobSpec(0, List.of(new NodeGroupSpec("w", 20_000, null, new Resources(9_000_000, 1L << 60, 100, null),
                List.of("x"), Map.of("A", "1"), null, null, Duration.ofDays(400))));
        Document<JobSpec> document = new Document<>(ObjectMeta.of("old", "team-a"), job);
        try (Store store = createStore()) {
            store.write(tx -> tx.createDocument(document, Instant.parse("2026-01-01T00:00:00Z")));
            assertThat(store.documents().get(Kind.Job, "team-a", "old")).hasValueSatisfying(stored -> assertThat(stored.document()).isEqualTo(document));
        }
    }
}
