package io.slipstream.store;

import io.slipstream.model.RunOrigin;
import io.slipstream.model.EventType;
import io.slipstream.model.RunEvent;
import io.slipstream.model.FaultState;
import io.slipstream.model.InstanceRecord;
import io.slipstream.model.RunRecord;
import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceState;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.api.spec.Kind;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.ShapeSpec;
import io.slipstream.api.spec.WorkspaceSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link Store} must do. Each implementation's test extends this and provides a fresh, empty store.
 */
public abstract class BaseStoreContractTest implements UsageContract, NodeConditionContract {
    private static final Instant T0 = Instant.parse("2026-03-01T10:00:00.123Z");

    protected Store store;

    @Override
    public Store store() {
        return store;
    }

    /** A new, empty, migrated store. */
    protected abstract Store createStore() throws Exception;

    /** Whether only one process can open the store (then a new holder may take the leadership without waiting). */
    protected boolean singleProcess() {
        return false;
    }

    /**
     * Whether one write transaction runs at a time (an H2 file: {@code OneWriterAtATime}); a lease renewal then waits
     * for the write before it, which is no failover risk there, since no other process can lead over that file.
     */
    protected boolean oneWriterAtATime() {
        return false;
    }

    /**
     * A connection to the store's database, to damage a row as a bug, a hand edit or a newer server would; {@code null}
     * where records are held as objects (they cannot be damaged so, and the tests of unreadable rows are skipped).
     */
    protected java.sql.Connection connection() throws Exception {
        return null;
    }

    private void sql(String statement) throws Exception {
        try (java.sql.Connection connection = connection()) {
            org.junit.jupiter.api.Assumptions.assumeTrue(connection != null, "this store holds records as objects");
            try (java.sql.Statement s = connection.createStatement()) {
                s.executeUpdate(statement);
            }
        }
        writtenBehindTheStoresBack();
    }

    /**
     * A row was changed behind the store's back ({@link #connection()}), as only another process can do: a store that
     * keeps rows between reads because no other process can write its file is told so here.
     */
    protected void writtenBehindTheStoresBack() {
    }

    private long sqlLong(String query) throws Exception {
        try (java.sql.Connection connection = connection()) {
            org.junit.jupiter.api.Assumptions.assumeTrue(connection != null, "this store holds records as objects");
            try (java.sql.Statement s = connection.createStatement(); java.sql.ResultSet rs = s.executeQuery(query)) {
                assertThat(rs.next()).isTrue();
                return rs.getLong(1);
            }
        }
    }

    @BeforeEach
    void open() throws Exception {
        store = createStore();
    }

    @AfterEach
    void close() {
        store.close();
    }

    protected static Document<WorkspaceSpec> workspace(String name, String... members) {
        return new Document<>(ObjectMeta.of(name, null), new WorkspaceSpec(List.of(members)));
    }

    private static RunRecord queuedRun(String job, String workspace, Instant createdAt) {
        JobSpec spec = aJob(job).workspace(workspace).replicas(2).gpus(1).env("LR", "0.1").spec();
        return RunRecord.queued(RunId.newFor(job), workspace, job, 1, spec, createdAt);
    }

    private RunRecord createRun(RunRecord run) {
        return store.write(tx -> tx.createRun(run, RunEvent.of(run.id(), run.createdAt(), EventType.StateChanged, "QUEUED", "Submitted", null, null)));
    }

    // --- leadership ---

    private static final java.time.Duration TTL = java.time.Duration.ofSeconds(10);

    @Test
    void theFirstClaimLeadsAtEpochOneAndRenewalsKeepTheEpoch() {
        assertThat(store.leases().current()).isEmpty();
        Leadership first = store.leases().claim("a", T0, TTL);
        assertThat(first).isEqualTo(new Leadership("a", 1, T0, T0.plus(TTL)));
        Leadership renewed = store.leases().claim("a", T0.plusSeconds(3), TTL);
        assertThat(renewed.epoch()).isEqualTo(1);
        assertThat(renewed.expiresAt()).isEqualTo(T0.plusSeconds(13));
        assertThat(store.leases().current()).contains(renewed);
        // late, after its own lease expired: the same leader, but at a new epoch (what it did meanwhile is fenced)
        assertThat(store.leases().claim("a", T0.plusSeconds(30), TTL)).isEqualTo(new Leadership("a", 2, T0.plusSeconds(30), T0.plusSeconds(40)));
    }

    @Test
    void anotherHolderWaitsForTheLeaseThenTakesOverAtTheNextEpoch() {
        store.leases().claim("a", T0, TTL);
        Leadership seen = store.leases().claim("b", T0.plusSeconds(5), TTL);
        if (singleProcess()) {
            assertThat(seen).as("whoever held a single-process store is gone").isEqualTo(new Leadership("b", 2, T0.plusSeconds(5), T0.plusSeconds(15)));
            return;
        }
        assertThat(seen.holder()).isEqualTo("a");
        assertThat(seen.epoch()).isEqualTo(1);
        Leadership taken = store.leases().claim("b", T0.plus(TTL), TTL);
        assertThat(taken).isEqualTo(new Leadership("b", 2, T0.plus(TTL), T0.plus(TTL).plus(TTL)));
        assertThat(store.leases().claim("a", T0.plus(TTL).plusSeconds(1), TTL)).as("the old leader does not get it back").isEqualTo(taken);
    }

    @Test
    void theLeaseOfAHolderKnownToBeGoneIsTakenAtOnce() {
        store.leases().claim("a", T0, TTL);
        if (!singleProcess()) {
            assertThat(store.leases().claim("b", "someone-else", T0.plusSeconds(1), TTL).holder()).as("only the one named gone").isEqualTo("a");
        }
        Leadership taken = store.leases().claim("b", "a", T0.plusSeconds(2), TTL);
        assertThat(taken).isEqualTo(new Leadership("b", 2, T0.plusSeconds(2), T0.plusSeconds(12)));
        assertThat(store.leases().claim("c", "a", T0.plusSeconds(3), TTL).holder()).as("a is gone, but b leads now")
                .isEqualTo(singleProcess() ? "c" : "b");
    }

    @Test
    void aLeaderMovesItsEpochPastOneAnExecutorWasFencedAt() {
        store.leases().claim("a", T0, TTL);
        assertThat(store.leases().advanceEpoch("b", 1, 7).epoch()).as("not b's").isEqualTo(1);
        assertThat(store.leases().advanceEpoch("a", 2, 7).epoch()).as("not at the epoch a leads at").isEqualTo(1);
        Leadership moved = store.leases().advanceEpoch("a", 1, 7);
        assertThat(moved).isEqualTo(new Leadership("a", 8, T0, T0.plus(TTL)));
        assertThat(store.leases().current()).contains(moved);
        assertThat(store.leases().claim("a", T0.plusSeconds(1), TTL).epoch()).as("renewals keep it").isEqualTo(8);
    }

    /**
     * A leader's renewal does not queue behind its own fenced writes (under load, one was always open, and renewals
     * waited out the lock timeout): the lease and the fence are apart. A takeover still waits for them, so that nothing
     * the old epoch's open transaction writes lands after the new epoch began. Where one write runs at a time, the
     * renewal waits for the open one, and renews once it ends.
     */
    @Test
    void aRenewalDoesNotWaitForTheLeadersOpenFencedTransactionButATakeoverDoes() throws Exception {
        long epoch = store.leases().claim("a", T0, TTL).epoch();
        try (OpenTransaction write = OpenTransaction.open(new FencedStore(store, epoch), tx -> tx.createDocument(workspace("team-a"), T0), tx -> { })) {
            Future<Leadership> renewal = write.meanwhile(() -> store.leases().claim("a", T0.plusSeconds(3), TTL));
            if (oneWriterAtATime()) {
                write.finish();
            }
            assertThat(renewal.get(30, TimeUnit.SECONDS)).as("renewed while the fenced transaction is open")
                    .isEqualTo(new Leadership("a", epoch, T0.plusSeconds(3), T0.plusSeconds(13)));
            assertThat(store.leases().current()).contains(new Leadership("a", epoch, T0.plusSeconds(3), T0.plusSeconds(13)));
            if (!oneWriterAtATime()) {
                assertThat(write.isDone()).as("the fenced transaction is still open").isFalse();
                write.finish();
            }

            Leadership taken = store.leases().claim("b", T0.plusSeconds(13), TTL);
            assertThat(taken).isEqualTo(new Leadership("b", epoch + 1, T0.plusSeconds(13), T0.plusSeconds(23)));
            assertThat(store.documents().list(Kind.Workspace, null)).extracting(d -> d.document().name()).containsExactly("team-a");
            assertThatThrownBy(() -> new FencedStore(store, epoch).write(tx -> tx.createDocument(workspace("team-b"), T0))).isInstanceOf(FencedException.class);
        }
    }

    /**
     * A takeover cannot begin while a transaction of the old epoch is open: it waits for it, and gives up (to try again
     * later, nothing changed) when that takes longer than the store's lock timeout.
     */
    @Test
    void aTakeoverCannotBeginWhileATransactionOfTheOldEpochIsOpen() throws Exception {
        long epoch = store.leases().claim("a", T0, TTL).epoch();
        try (OpenTransaction write = OpenTransaction.open(new FencedStore(store, epoch), tx -> tx.requireLeader(epoch),
                tx -> tx.createDocument(workspace("team-a"), T0))) {
            Future<Leadership> takeover = write.meanwhile(() -> store.leases().claim("b", T0.plusSeconds(10), TTL));
            assertThatThrownBy(() -> takeover.get(60, TimeUnit.SECONDS)).as("no takeover while the old epoch writes")
                    .isInstanceOf(java.util.concurrent.ExecutionException.class);
            assertThat(store.leases().current()).as("the failed takeover changed nothing").contains(new Leadership("a", epoch, T0, T0.plus(TTL)));

            write.finish();
            assertThat(store.leases().claim("b", T0.plusSeconds(10), TTL)).isEqualTo(new Leadership("b", epoch + 1, T0.plusSeconds(10), T0.plusSeconds(20)));
            assertThat(store.documents().list(Kind.Workspace, null)).extracting(d -> d.document().name()).containsExactly("team-a");
        }
    }

    /**
     * A build before V14 moves only the lease's epoch (a downgrade, then this build again): such a lease is never
     * renewed as it is, since its holder could not write at it, but taken at an epoch past both.
     */
    @Test
    void aLeaseWhoseEpochIsNotTheFencesIsTakenPastBoth() throws Exception {
        store.leases().claim("a", T0, TTL);
        sql("UPDATE leadership SET epoch = 4"); // an older build's takeover by a itself, the fence left at 1
        Leadership again = store.leases().claim("a", T0.plusSeconds(1), TTL);
        assertThat(again).isEqualTo(new Leadership("a", 5, T0.plusSeconds(1), T0.plusSeconds(11)));
        new FencedStore(store, 5).write(tx -> tx.createDocument(workspace("team-a"), T0));

        sql("UPDATE leadership SET holder = 'old', epoch = 6"); // an older build leads, its lease not expired
        Leadership seen = store.leases().claim("b", T0.plusSeconds(2), TTL);
        if (!singleProcess()) {
            assertThat(seen.holder()).as("its lease is waited out").isEqualTo("old");
            seen = store.leases().claim("b", T0.plusSeconds(11), TTL);
        }
        assertThat(seen.holder()).isEqualTo("b");
        assertThat(seen.epoch()).isEqualTo(7);
        new FencedStore(store, 7).write(tx -> tx.createDocument(workspace("team-b"), T0));
        assertThatThrownBy(() -> new FencedStore(store, 5).write(tx -> tx.createDocument(workspace("team-c"), T0))).isInstanceOf(FencedException.class);
        assertThatThrownBy(() -> new FencedStore(store, 6).write(tx -> tx.createDocument(workspace("team-c"), T0))).isInstanceOf(FencedException.class);
    }

    /** A fence left without its lease (the lease's row deleted by hand) is never gone back past. */
    @Test
    void aFirstClaimOverAFenceLeftWithoutItsLeaseStartsPastIt() throws Exception {
        store.leases().claim("a", T0, TTL);
        store.leases().release("a", 1, T0.plusSeconds(1));
        store.leases().claim("b", T0.plusSeconds(2), TTL); // epoch 2
        sql("DELETE FROM leadership");
        Leadership first = store.leases().claim("c", T0.plusSeconds(3), TTL);
        assertThat(first).isEqualTo(new Leadership("c", 3, T0.plusSeconds(3), T0.plusSeconds(13)));
        assertThatThrownBy(() -> new FencedStore(store, 1).write(tx -> tx.createDocument(workspace("team-a"), T0))).isInstanceOf(FencedException.class);
        new FencedStore(store, 3).write(tx -> tx.createDocument(workspace("team-a"), T0));
    }

    /**
     * A write that waits for another transaction's row past the store's lock timeout fails as {@link
     * StoreUnavailableException} (the API's 503, to be tried again), not as an error of its own (a 500 in ChaosIT,
     * from H2's lock timeout while a crash loop loaded the machine). Nothing of it is written.
     */
    @Test
    void aWriteThatWaitsOutTheLockTimeoutFailsAsUnavailableAndWritesNothing() throws Exception {
        try (OpenTransaction holder = OpenTransaction.open(store, tx -> tx.createDocument(workspace("team-a"), T0), tx -> { })) {
            Future<?> waiting = holder.meanwhile(() -> store.write(tx -> tx.createDocument(workspace("team-a"), T0.plusSeconds(1))));
            assertThatThrownBy(() -> waiting.get(60, TimeUnit.SECONDS)).isInstanceOf(java.util.concurrent.ExecutionException.class)
                    .cause().isInstanceOf(StoreUnavailableException.class);
            holder.finish();
            assertThat(store.documents().get(Kind.Workspace, null, "team-a")).hasValueSatisfying(d -> assertThat(d.createdAt()).isEqualTo(T0));
        }
    }

    /** Reads never wait for a write transaction, not even where writes run one at a time; they see what was committed. */
    @Test
    void aReadDoesNotWaitForAnOpenWriteTransaction() throws Exception {
        store.write(tx -> tx.createDocument(workspace("team-a"), T0));
        try (OpenTransaction write = OpenTransaction.open(store, tx -> tx.createDocument(workspace("team-b"), T0), tx -> { })) {
            Future<List<StoredDocument>> read = write.meanwhile(() -> store.documents().list(Kind.Workspace, null));
            assertThat(read.get(30, TimeUnit.SECONDS)).extracting(d -> d.document().name()).containsExactly("team-a");
            assertThat(write.isDone()).as("the write transaction is still open").isFalse();
        }
    }

    /**
     * Writes whose durability is deferred ({@link Store#deferDurability}, the control loop's within a cycle) are
     * committed as they return: another thread reads them at once, one that fails leaves nothing; awaiting them, and
     * closing the scope, returns (at once where none is left), and after it writes are as before.
     */
    @Test
    void writesWhoseDurabilityIsDeferredAreCommittedAsTheyReturn() throws Exception {
        ExecutorService other = Executors.newSingleThreadExecutor();
        try (Store.Deferral ignored = store.deferDurability()) {
            store.write(tx -> tx.createDocument(workspace("team-b"), T0));
            assertThatThrownBy(() -> store.write(tx -> {
                tx.createDocument(workspace("team-c"), T0);
                throw new IllegalStateException("rolled back");
            })).hasMessage("rolled back");
            assertThat(other.submit(() -> store.documents().list(Kind.Workspace, null)).get(30, TimeUnit.SECONDS))
                    .extracting(d -> d.document().name()).contains("team-b").doesNotContain("team-c");
            other.submit(() -> store.write(tx -> tx.createDocument(workspace("team-d"), T0))).get(30, TimeUnit.SECONDS); // not deferred
            store.awaitDurable();
            store.write(tx -> tx.createDocument(workspace("team-e"), T0));
        } finally {
            other.shutdownNow();
        }
        store.awaitDurable();
        store.write(tx -> tx.createDocument(workspace("team-f"), T0));
        assertThat(store.documents().list(Kind.Workspace, null)).extracting(d -> d.document().name())
                .contains("team-b", "team-d", "team-e", "team-f").doesNotContain("team-c");
    }

    /**
     * A transaction that another thread holds open, between {@code before} and {@code after}, until {@link #finish};
     * {@link #meanwhile} runs a call on a second thread while it is open.
     */
    protected static final class OpenTransaction implements AutoCloseable {
        private final CountDownLatch opened = new CountDownLatch(1);
        private final CountDownLatch finish = new CountDownLatch(1);
        private final ExecutorService threads = Executors.newFixedThreadPool(2);
        private Future<?> work;

        public static OpenTransaction open(Store on, java.util.function.Consumer<StoreTx> before, java.util.function.Consumer<StoreTx> after) throws InterruptedException {
            OpenTransaction open = new OpenTransaction();
            open.work = open.threads.submit(() -> on.commit(tx -> {
                before.accept(tx);
                open.opened.countDown();
                await(open.finish);
                after.accept(tx);
            }));
            assertThat(open.opened.await(30, TimeUnit.SECONDS)).as("the transaction opened").isTrue();
            return open;
        }

        public <T> Future<T> meanwhile(Callable<T> call) {
            return threads.submit(call);
        }

        public boolean isDone() {
            return work.isDone();
        }

        /** Lets the transaction end and waits until it has committed. */
        public void finish() throws Exception {
            finish.countDown();
            work.get(30, TimeUnit.SECONDS);
        }

        /**
         * Lets the transaction end and waits for both threads, without interrupting them: an interrupted or still
         * committing writer raced the store's close and the deletion of its directory (CI once failed so).
         */
        @Override
        public void close() throws InterruptedException {
            finish.countDown();
            threads.shutdown();
            if (!threads.awaitTermination(60, TimeUnit.SECONDS)) {
                threads.shutdownNow();
                throw new IllegalStateException("the transaction's threads did not end within 60 s");
            }
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the test never let the transaction finish");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aReleasedLeaseIsTakenAtOnce() {
        store.leases().claim("a", T0, TTL);
        store.leases().release("b", 1, T0.plusSeconds(1)); // not b's to release
        if (!singleProcess()) {
            assertThat(store.leases().claim("b", T0.plusSeconds(2), TTL).holder()).isEqualTo("a");
        }
        store.leases().release("a", store.leases().current().orElseThrow().epoch(), T0.plusSeconds(3));
        Leadership taken = store.leases().claim("b", T0.plusSeconds(3), TTL);
        assertThat(taken.holder()).isEqualTo("b");
    }

    @Test
    void writesOfAFencedLeaderAreRefusedAndWriteNothing() {
        long old = store.leases().claim("a", T0, TTL).epoch();
        Store leader = new FencedStore(store, old);
        leader.write(tx -> tx.createDocument(workspace("team-a"), T0));
        long next = store.leases().claim("b", T0.plus(TTL), TTL).epoch();
        assertThat(next).isEqualTo(old + 1);

        assertThatThrownBy(() -> leader.write(tx -> tx.createDocument(workspace("team-b"), T0))).isInstanceOf(FencedException.class);
        assertThatThrownBy(() -> leader.write(tx -> tx.createDocument(workspace("team-c"), T0))).isInstanceOf(FencedException.class);
        assertThatThrownBy(() -> store.commit(tx -> tx.requireLeader(old))).isInstanceOf(FencedException.class);
        assertThat(leader.documents().get(Kind.Workspace, null, "team-a")).as("reads still work").isPresent();
        assertThat(store.documents().list(Kind.Workspace, null)).extracting(d -> d.document().name()).containsExactly("team-a");

        Store successor = new FencedStore(store, next);
        successor.write(tx -> tx.createDocument(workspace("team-d"), T0));
        successor.write(tx -> {
            tx.requireLeader(next);
            return tx.createDocument(workspace("team-e"), T0);
        });
        assertThat(store.documents().list(Kind.Workspace, null)).hasSize(3);
    }

    /** A transaction that found the leader at its epoch need not look again; another epoch is refused all the same. */
    @Test
    void aTransactionThatPassedTheFenceStillRefusesAnotherEpoch() {
        long epoch = store.leases().claim("a", T0, TTL).epoch();
        store.commit(tx -> {
            tx.requireLeader(epoch);
            tx.requireLeader(epoch);
            assertThatThrownBy(() -> tx.requireLeader(epoch + 1)).isInstanceOf(FencedException.class);
            assertThatThrownBy(() -> tx.requireLeader(epoch - 1)).isInstanceOf(FencedException.class);
        });
        long next = store.leases().advanceEpoch("a", epoch, epoch).epoch();
        store.commit(tx -> {
            tx.requireLeader(next);
            assertThatThrownBy(() -> tx.requireLeader(epoch)).as("the epoch moved").isInstanceOf(FencedException.class);
            tx.requireLeader(next);
        });
    }

    @Test
    void aFencedStoreBeforeAnyLeaderIsRefused() {
        assertThatThrownBy(() -> new FencedStore(store, 1).write(tx -> tx.createDocument(workspace("team-a"), T0))).isInstanceOf(FencedException.class);
    }

    @Test
    void aReachableStoreAnswersPing() {
        store.ping();
        store.commit(tx -> { }); // a transaction that writes nothing commits all the same
    }

    @Test
    void documentsAreCreatedReadAndListedWithVersions() {
        StoredDocument created = store.write(tx -> tx.createDocument(workspace("team-a", "alice"), T0));
        assertThat(created.version()).isEqualTo(1);
        store.write(tx -> tx.createDocument(workspace("team-b", "bob", "alice"), T0));
        Document<ShapeSpec> shape = new Document<>(ObjectMeta.of("gpu.8x.sim", null), new ShapeSpec(new Resources(32000, 256L << 30, 8, "sim-gpu")));
        store.write(tx -> tx.createDocument(shape, T0));

        StoredDocument read = store.documents().get(Kind.Workspace, null, "team-a").orElseThrow();
        assertThat(read.document()).isEqualTo(workspace("team-a", "alice"));
        assertThat(read.createdAt()).isEqualTo(T0);
        assertThat(store.documents().get(Kind.Shape, null, "gpu.8x.sim").orElseThrow().document()).isEqualTo(shape);
        assertThat(store.documents().list(Kind.Workspace, null)).extracting(d -> d.document().name()).containsExactly("team-a", "team-b");
        assertThat(store.documents().list(Kind.Workspace, Set.of("team-b"))).hasSize(1);
        assertThat(store.documents().list(Kind.Workspace, Set.of())).isEmpty();
        assertThat(store.documents().get(Kind.Workspace, null, "nope")).isEmpty();
    }

    @Test
    void creatingAnExistingDocumentConflicts() {
        store.write(tx -> tx.createDocument(workspace("team-a"), T0));
        assertThatThrownBy(() -> store.write(tx -> tx.createDocument(workspace("team-a"), T0))).isInstanceOf(ConflictException.class);
    }

    @Test
    void concurrentCreatesOfOneDocumentLetExactlyOneWin() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Callable<Boolean>> attempts = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                attempts.add(() -> {
                    try {
                        store.write(tx -> tx.createDocument(workspace("raced", "alice"), T0));
                        return true;
                    } catch (ConflictException e) {
                        return false;
                    }
                });
            }
            int wins = 0;
            for (Future<Boolean> result : pool.invokeAll(attempts)) {
                wins += result.get() ? 1 : 0;
            }
            assertThat(wins).isEqualTo(1);
            assertThat(store.documents().workspacesOf("alice")).containsExactly("raced");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void documentUpdatesAreCompareAndSet() {
        store.write(tx -> tx.createDocument(workspace("team-a", "alice"), T0));
        StoredDocument updated = store.write(tx -> tx.updateDocument(workspace("team-a", "alice", "bob"), 1, T0.plusSeconds(5)));
        assertThat(updated.version()).isEqualTo(2);
        assertThat(updated.updatedAt()).isEqualTo(T0.plusSeconds(5));
        assertThat(updated.createdAt()).isEqualTo(T0);
        assertThatThrownBy(() -> store.write(tx -> tx.updateDocument(workspace("team-a"), 1, T0))).isInstanceOf(ConflictException.class);
        assertThat(store.documents().get(Kind.Workspace, null, "team-a").orElseThrow().document()).isEqualTo(workspace("team-a", "alice", "bob"));
        assertThatThrownBy(() -> store.commit(tx -> tx.deleteDocument(Kind.Workspace, null, "team-a", 1))).isInstanceOf(ConflictException.class);
        store.commit(tx -> tx.deleteDocument(Kind.Workspace, null, "team-a", 2));
        assertThat(store.documents().get(Kind.Workspace, null, "team-a")).isEmpty();
    }

    @Test
    void membershipFollowsWorkspaceDocuments() {
        store.write(tx -> tx.createDocument(workspace("team-a", "alice"), T0));
        store.write(tx -> tx.createDocument(workspace("team-b", "alice", "bob"), T0));
        assertThat(store.documents().workspacesOf("alice")).containsExactly("team-a", "team-b");
        store.write(tx -> tx.updateDocument(workspace("team-b", "bob"), 1, T0));
        assertThat(store.documents().workspacesOf("alice")).containsExactly("team-a");
        assertThat(store.documents().workspacesOf("bob")).containsExactly("team-b");
        store.commit(tx -> tx.deleteDocument(Kind.Workspace, null, "team-b", 2));
        assertThat(store.documents().workspacesOf("bob")).isEmpty();
    }

    @Test
    void aFailedTransactionLeavesNothingBehind() {
        assertThatThrownBy(() -> store.commit(tx -> {
            tx.createDocument(workspace("team-a", "alice"), T0);
            tx.createDocument(workspace("team-a"), T0); // conflicts: the whole transaction rolls back
        })).isInstanceOf(ConflictException.class);
        assertThat(store.documents().get(Kind.Workspace, null, "team-a")).isEmpty();
        assertThat(store.documents().workspacesOf("alice")).isEmpty();
    }

    @Test
    void tokensAreFoundByHashAndRevoked() {
        TokenRecord token = new TokenRecord("tok-1", "ab".repeat(32), "alice", false, "laptop", T0, T0.plus(Duration.ofDays(1)), null);
        store.commit(tx -> tx.createToken(token));
        assertThat(store.credentials().tokenByHash("ab".repeat(32))).contains(token);
        assertThat(store.credentials().tokenByHash("cd".repeat(32))).isEmpty();
        assertThat(store.credentials().hasAdminToken(T0)).isFalse();
        store.commit(tx -> tx.createToken(new TokenRecord("tok-2", "ef".repeat(32), "admin", true, null, T0, null, null)));
        assertThat(store.credentials().hasAdminToken(T0)).isTrue();
        assertThat(store.<Boolean>write(tx -> tx.revokeToken("tok-2", T0.plusSeconds(1)))).isTrue();
        assertThat(store.<Boolean>write(tx -> tx.revokeToken("tok-2", T0.plusSeconds(2)))).isFalse();
        assertThat(store.credentials().hasAdminToken(T0.plusSeconds(3))).isFalse();
        assertThat(store.credentials().tokens()).extracting(TokenRecord::id).containsExactly("tok-1", "tok-2");
    }

    @Test
    void aTokensUseIsRecordedAtMostOncePerIntervalAndOldHashesAreUpgradedByCompareAndSet() {
        store.commit(tx -> tx.createToken(new TokenRecord("tok-old", "0a".repeat(32), TokenRecord.SHA256, "alice", false, null, T0, null, null, null)));
        assertThat(store.credentials().tokenByHash("0a".repeat(32))).get().extracting(TokenRecord::hashScheme).isEqualTo(TokenRecord.SHA256);
        assertThat(store.<Boolean>write(tx -> tx.rehashToken("tok-old", "ff".repeat(32), "1b".repeat(32), TokenRecord.HMAC_SHA256))).as("not the stored hash").isFalse();
        assertThat(store.<Boolean>write(tx -> tx.rehashToken("tok-old", "0a".repeat(32), "1b".repeat(32), TokenRecord.HMAC_SHA256))).isTrue();
        assertThat(store.credentials().tokenByHash("0a".repeat(32))).isEmpty();
        TokenRecord upgraded = store.credentials().tokenByHash("1b".repeat(32)).orElseThrow();
        assertThat(upgraded.hashScheme()).isEqualTo(TokenRecord.HMAC_SHA256);
        assertThat(upgraded.lastUsedAt()).isNull();

        Instant used = T0.plusSeconds(10);
        assertThat(store.<Boolean>write(tx -> tx.recordTokenUse("tok-old", used, used.minusSeconds(60)))).isTrue();
        assertThat(store.<Boolean>write(tx -> tx.recordTokenUse("tok-old", used.plusSeconds(30), used.plusSeconds(30).minusSeconds(60)))).as("within a minute").isFalse();
        assertThat(store.credentials().tokenByHash("1b".repeat(32)).orElseThrow().lastUsedAt()).isEqualTo(used);
        assertThat(store.<Boolean>write(tx -> tx.recordTokenUse("tok-old", used.plusSeconds(61), used.plusSeconds(1)))).isTrue();
        assertThat(store.credentials().tokens()).singleElement().extracting(TokenRecord::lastUsedAt).isEqualTo(used.plusSeconds(61));
        assertThat(store.<Boolean>write(tx -> tx.recordTokenUse("tok-none", used, used))).isFalse();
    }

    @Test
    void secretsKeepTheirSealedValuesAndChangeByCompareAndSet() {
        SecretRecord secret = new SecretRecord("team-a", "hf", "k1", Map.of("token", "c2VhbGVk", "user", "b3RoZXI="), 0, T0, T0);
        SecretRecord created = store.write(tx -> tx.createSecret(secret));
        assertThat(created.version()).isEqualTo(1);
        assertThat(store.credentials().secret("team-a", "hf")).contains(created);
        assertThat(created.keys()).containsExactly("token", "user");
        assertThatThrownBy(() -> store.write(tx -> tx.createSecret(secret))).isInstanceOf(ConflictException.class);
        store.write(tx -> tx.createSecret(new SecretRecord("team-b", "hf", "k1", Map.of(), 0, T0, T0)));
        store.write(tx -> tx.createSecret(new SecretRecord("team-a", "db", "k1", Map.of("password", "eA=="), 0, T0, T0)));

        assertThat(store.credentials().secrets(null)).extracting(s -> s.workspace() + "/" + s.name()).containsExactly("team-a/db", "team-a/hf", "team-b/hf");
        assertThat(store.credentials().secrets(Set.of("team-b"))).extracting(SecretRecord::name).containsExactly("hf");
        assertThat(store.credentials().secrets(Set.of())).isEmpty();

        SecretRecord changed = store.write(tx -> tx.updateSecret(created.withSealed("k2", Map.of("token", "bmV3"), T0.plusSeconds(5))));
        assertThat(changed.version()).isEqualTo(2);
        assertThat(store.credentials().secret("team-a", "hf")).contains(changed);
        assertThat(changed.keyId()).isEqualTo("k2");
        assertThat(changed.createdAt()).isEqualTo(T0);
        assertThat(changed.updatedAt()).isEqualTo(T0.plusSeconds(5));
        assertThatThrownBy(() -> store.write(tx -> tx.updateSecret(created))).as("stale version").isInstanceOf(ConflictException.class);
        assertThatThrownBy(() -> store.commit(tx -> tx.deleteSecret("team-a", "hf", 1))).isInstanceOf(ConflictException.class);
        store.commit(tx -> tx.deleteSecret("team-a", "hf", 2));
        assertThat(store.credentials().secret("team-a", "hf")).isEmpty();
        assertThat(store.credentials().secret("team-b", "hf")).isPresent();
    }

    @Test
    void aSecretIsNeverStoredAsADocument() {
        var secret = new Document<>(ObjectMeta.of("hf", "team-a"),
                new io.slipstream.api.spec.SecretSpec(Map.of("token", io.slipstream.api.spec.SecretValue.of("hf_clear"))));
        assertThatThrownBy(() -> store.write(tx -> tx.createDocument(secret, T0))).isInstanceOf(IllegalArgumentException.class);
        assertThat(store.documents().list(Kind.Secret, null)).isEmpty();
    }

    @Test
    void serverKeysAreRegisteredOnceAndMovedByCompareAndSet() {
        assertThat(store.credentials().serverKeyId("secrets")).isEmpty();
        store.commit(tx -> tx.registerServerKey("secrets", "k1", T0));
        assertThatThrownBy(() -> store.commit(tx -> tx.registerServerKey("secrets", "k9", T0))).isInstanceOf(ConflictException.class);
        store.commit(tx -> tx.registerServerKey("tokens", "p1", T0));
        assertThat(store.credentials().serverKeyId("secrets")).contains("k1");
        assertThatThrownBy(() -> store.commit(tx -> tx.replaceServerKey("secrets", "k0", "k2", T0))).isInstanceOf(ConflictException.class);
        store.commit(tx -> tx.replaceServerKey("secrets", "k1", "k2", T0.plusSeconds(1)));
        assertThat(store.credentials().serverKeyId("secrets")).contains("k2");
        assertThat(store.credentials().serverKeyId("tokens")).contains("p1");
    }

    @Test
    void identityKeysAreAddedOnceListedOldestFirstAndRemoved() {
        assertThat(store.credentials().identityKeys()).isEmpty();
        IdentityKey older = new IdentityKey("k-2", T0, "sealed-2", "{\"kid\":\"k-2\"}");
        IdentityKey newer = new IdentityKey("k-1", T0.plusSeconds(60), "sealed-1", "{\"kid\":\"k-1\"}");
        store.commit(tx -> tx.addIdentityKey(newer));
        store.commit(tx -> tx.addIdentityKey(older));
        assertThat(store.credentials().identityKeys()).containsExactly(older, newer);
        assertThatThrownBy(() -> store.commit(tx -> tx.addIdentityKey(new IdentityKey("k-1", T0, "other", "{}"))))
                .isInstanceOf(ConflictException.class);
        store.commit(tx -> tx.removeIdentityKey("k-2"));
        store.commit(tx -> tx.removeIdentityKey("k-2")); // gone already: nothing happens
        assertThat(store.credentials().identityKeys()).containsExactly(newer);
    }

    @Test
    void runsRoundTripExactly() {
        RunRecord run = queuedRun("train", "team-a", T0);
        RunRecord stored = createRun(run);
        assertThat(stored.version()).isEqualTo(1);
        assertThat(store.runs().get(run.id())).contains(stored);
        assertThat(store.runs().active()).containsExactly(stored);
        assertThat(store.runs().events(run.id(), 0, 10)).singleElement().satisfies(e -> assertThat(e.reason()).isEqualTo("Submitted"));
        assertThat(store.runs().get(new RunId("nope-12345678"))).isEmpty();
    }

    @Test
    void runUpdatesAreCompareAndSet() {
        RunRecord stored = createRun(queuedRun("train", "team-a", T0));
        RunRecord starting = store.write(tx -> tx.updateRun(stored.moveTo(RunState.STARTING, "Admitted", T0.plusSeconds(1))));
        assertThat(starting.version()).isEqualTo(2);
        assertThatThrownBy(() -> store.write(tx -> tx.updateRun(stored.moveTo(RunState.CANCELLED, "Cancelled", T0)))).isInstanceOf(ConflictException.class);
        RunRecord running = store.write(tx -> tx.updateRun(starting.moveTo(RunState.RUNNING, "AllInstancesRunning", T0.plusSeconds(2))));
        RunRecord done = store.write(tx -> tx.updateRun(running.moveTo(RunState.SUCCEEDED, "AllInstancesSucceeded", T0.plusSeconds(3))));
        assertThat(store.runs().get(stored.id())).contains(done);
        assertThat(done.startedAt()).isEqualTo(T0.plusSeconds(2));
        assertThat(done.finishedAt()).isEqualTo(T0.plusSeconds(3));
        assertThat(store.runs().active()).isEmpty();
    }

    @Test
    void aPreemptedRunRoundTripsWithWhereItRanAndWhomItMakesRoomFor() {
        RunRecord stored = createRun(queuedRun("borrow", "team-a", T0));
        RunRecord admitted = store.write(tx -> tx.updateRun(stored.admitted(io.slipstream.api.run.RealTimeResources.NotInQuota, "Admitted", T0)));
        RunRecord preempting = store.write(tx -> tx.updateRun(admitted.preempting(new RunId("owner-12345678"), "Reclaimed")));
        assertThat(store.runs().get(stored.id())).contains(preempting);
        assertThat(preempting.outcome()).isEqualTo(RunState.QUEUED);
        RunRecord requeued = store.write(tx -> tx.updateRun(preempting.requeued("Preempted", T0.plusSeconds(5))));
        assertThat(store.runs().get(stored.id())).contains(requeued);
        assertThat(requeued.attempt()).isEqualTo(2);
        assertThat(requeued.preemptions()).isEqualTo(1);
        assertThat(requeued.realTimeResources()).isNull();
        assertThat(store.runs().active()).contains(requeued);
    }

    @Test
    void aRestartedRunRoundTripsWithItsFaultRecord() {
        RunRecord stored = createRun(queuedRun("flaky", "team-a", T0));
        RunRecord admitted = store.write(tx -> tx.updateRun(stored.admitted(io.slipstream.api.run.RealTimeResources.InQuota, "Admitted", T0)));
        RunRecord progressed = store.write(tx -> tx.updateRun(admitted.withFaults(admitted.faults().failedWith("exit code 1")
                .progressed(1200L, T0.plusSeconds(60), 1000L, T0.plusSeconds(50)))));
        RunRecord restarting = store.write(tx -> tx.updateRun(progressed.restarting(FaultState.RestartCause.FAILURE, "InstanceFailed: w-0")));
        assertThat(store.runs().get(stored.id())).contains(restarting);
        assertThat(restarting.restartCause()).isEqualTo(FaultState.RestartCause.FAILURE);

        RunRecord requeued = store.write(tx -> tx.updateRun(restarting.withFaults(restarting.faults().lost(20_000))
                .requeued("Restarted", T0.plusSeconds(70), T0.plusSeconds(80))));
        assertThat(store.runs().get(stored.id())).contains(requeued);
        assertThat(requeued.faults()).isEqualTo(new FaultState(1, 0, 0, 0, "exit code 1", 1, null, T0.plusSeconds(80), 1000L,
                T0.plusSeconds(50), 1200L, T0.plusSeconds(60), 20_000));
        assertThat(requeued.preemptions()).as("a failure is not a preemption").isZero();
        assertThat(requeued.attempt()).isEqualTo(2);
    }

    @Test
    void anElasticRunsWorldRoundTripsAndIsGoneWhenItIsQueuedAgain() {
        RunRecord stored = createRun(queuedRun("elastic", "team-a", T0));
        RunRecord admitted = store.write(tx -> tx.updateRun(stored.admitted(io.slipstream.api.run.RealTimeResources.InQuota, "Admitted", T0)
                .withWorld(io.slipstream.model.ElasticWorld.admitted(List.of(0, 1, 2), java.util.Set.of(2)))));
        RunRecord shrinking = store.write(tx -> tx.updateRun(admitted.withWorld(admitted.world().shrunk(List.of(
                new io.slipstream.model.ElasticWorld.Leaving(2, new RunId("owner-1"), io.slipstream.api.run.RealTimeResources.NotInQuota,
                        "Shrunk: capacity reclaimed"))))));
        assertThat(store.runs().get(stored.id())).contains(shrinking);
        assertThat(shrinking.world().version()).isEqualTo(2);
        assertThat(shrinking.world().members()).containsExactly(0, 1);
        assertThat(shrinking.world().leaving()).extracting(io.slipstream.model.ElasticWorld.Leaving::forRun).containsExactly(new RunId("owner-1"));
        assertThat(shrinking.world().changing()).isTrue();

        RunRecord preempting = store.write(tx -> tx.updateRun(shrinking.preempting(null, "Preempted")));
        RunRecord requeued = store.write(tx -> tx.updateRun(preempting.requeued("Preempted", T0.plusSeconds(5))));
        assertThat(store.runs().get(stored.id()).orElseThrow().world()).as("a world is an attempt's").isNull();
        assertThat(requeued.world()).isNull();
    }

    @Test
    void nodesAreDeclaredDownOnceAndUpAgain() {
        assertThat(store.runs().downNodes()).isEmpty();
        store.commit(tx -> tx.markNodeDown(new NodeDown("node-2", "disk failure", T0)));
        store.commit(tx -> tx.markNodeDown(new NodeDown("node-2", "again", T0.plusSeconds(5))));
        store.commit(tx -> tx.markNodeDown(new NodeDown("node-1", "maintenance", T0.plusSeconds(9))));
        assertThat(store.runs().downNodes()).containsOnlyKeys("node-1", "node-2");
        assertThat(store.runs().downNodes().get("node-2")).isEqualTo(new NodeDown("node-2", "disk failure", T0));
        assertThat(store.<Boolean>write(tx -> tx.markNodeUp("node-2"))).isTrue();
        assertThat(store.<Boolean>write(tx -> tx.markNodeUp("node-2"))).isFalse();
        assertThat(store.runs().downNodes()).containsOnlyKeys("node-1");
    }

    /** A store may keep what it read of the active runs (a cache): each read still shows every change committed since. */
    @Test
    void theActiveRunsShowEveryChangeSinceTheLastRead() {
        JobSpec spec = aJob("kept").spec();
        RunRecord keyed = createRun(RunRecord.queued(RunId.newFor("kept"), "team-a", "kept", 1, spec,
                new RunOrigin(Map.of(), null, "key-kept", "alice"), T0));
        RunRecord other = createRun(queuedRun("kept", "team-a", T0.plusSeconds(1)));
        assertThat(store.runs().active()).containsExactly(keyed, other);

        RunRecord starting = store.write(tx -> tx.updateRun(other.moveTo(RunState.STARTING, "Admitted", T0.plusSeconds(2))));
        store.commit(tx -> tx.releaseIdempotencyKey(keyed.id())); // the one change that is not an update of the run
        RunRecord third = createRun(queuedRun("kept", "team-a", T0.plusSeconds(3)));
        List<RunRecord> active = store.runs().active();
        assertThat(active).extracting(RunRecord::id).containsExactly(keyed.id(), other.id(), third.id());
        assertThat(active.get(0).origin()).isEqualTo(keyed.origin().withoutIdempotencyKey());
        assertThat(active.subList(1, 3)).containsExactly(starting, third);

        store.write(tx -> tx.updateRun(starting.moveTo(RunState.FAILED, "x", T0.plusSeconds(4))));
        // A transaction that is rolled back leaves nothing a later read shows, even at the version it would have written.
        assertThatThrownBy(() -> store.write(tx -> {
            tx.updateRun(third.moveTo(RunState.CANCELLED, "Cancelled", T0.plusSeconds(5)));
            throw new IllegalStateException("rolled back");
        })).isInstanceOf(IllegalStateException.class);
        assertThat(store.runs().active()).extracting(RunRecord::id).containsExactly(keyed.id(), third.id());
        RunRecord running = store.write(tx -> tx.updateRun(third.moveTo(RunState.STARTING, "Admitted", T0.plusSeconds(6))));
        assertThat(store.runs().active()).extracting(RunRecord::id, RunRecord::state, RunRecord::version)
                .containsExactly(tuple(keyed.id(), RunState.QUEUED, keyed.version()), tuple(running.id(), RunState.STARTING, running.version()));
    }

    @Test
    void aRunsOriginRoundTripsAndItsIdempotencyKeyIsUniquePerWorkspace() {
        JobSpec spec = aJob("keyed").spec();
        RunOrigin origin = new RunOrigin(Map.of("nodeGroups.main.replicas", "4"), T0.minusSeconds(60), "key-1", "alice");
        RunRecord first = createRun(RunRecord.queued(RunId.newFor("keyed"), "team-a", "keyed", 1, spec, origin, T0));
        assertThat(store.runs().get(first.id()).orElseThrow().origin()).isEqualTo(origin);
        assertThat(store.runs().byIdempotencyKey("team-a", "key-1")).contains(first);
        assertThat(store.runs().byIdempotencyKey("team-b", "key-1")).isEmpty();
        assertThatThrownBy(() -> createRun(RunRecord.queued(RunId.newFor("keyed"), "team-a", "keyed", 1, spec, origin, T0)))
                .isInstanceOf(ConflictException.class);
        createRun(RunRecord.queued(RunId.newFor("keyed"), "team-b", "keyed", 1, spec, origin, T0)); // another workspace: fine
        store.commit(tx -> tx.releaseIdempotencyKey(first.id()));
        assertThat(store.runs().byIdempotencyKey("team-a", "key-1")).isEmpty();
        createRun(RunRecord.queued(RunId.newFor("keyed"), "team-a", "keyed", 1, spec, origin, T0)); // the key is free again
    }

    @Test
    void finishedRunsCanBeFoundByAgeAndDeletedButActiveOnesCannot() {
        RunRecord old = createRun(queuedRun("old", "team-a", T0));
        RunRecord done = store.write(tx -> tx.updateRun(old.moveTo(RunState.CANCELLED, "Cancelled", T0.plusSeconds(10))));
        store.write(tx -> tx.createInstances(List.of(InstanceRecord.pending(new InstanceId(old.id(), 1, 0), "main", 0, "node-1", List.of()))));
        RunRecord active = createRun(queuedRun("active", "team-a", T0));
        assertThat(store.runs().finishedBefore(T0.plusSeconds(11), 10)).containsExactly(done);
        assertThat(store.runs().finishedBefore(T0.plusSeconds(10), 10)).isEmpty();
        assertThatThrownBy(() -> store.commit(tx -> tx.deleteRun(active.id()))).isInstanceOf(ConflictException.class);
        store.commit(tx -> tx.deleteRun(old.id()));
        assertThat(store.runs().get(old.id())).isEmpty();
        assertThat(store.runs().instancesOf(old.id())).isEmpty();
        assertThat(store.runs().events(old.id(), 0, 10)).isEmpty();
        assertThat(store.runs().get(active.id())).isPresent();
    }

    @Test
    void aScheduleMovesForwardByCompareAndSet() {
        assertThat(store.runs().lastScheduled("team-a", "nightly")).isEmpty();
        store.commit(tx -> tx.recordScheduled("team-a", "nightly", null, T0));
        assertThatThrownBy(() -> store.commit(tx -> tx.recordScheduled("team-a", "nightly", null, T0))).isInstanceOf(ConflictException.class);
        store.commit(tx -> tx.recordScheduled("team-a", "nightly", T0, T0.plusSeconds(60)));
        assertThatThrownBy(() -> store.commit(tx -> tx.recordScheduled("team-a", "nightly", T0, T0.plusSeconds(120)))).isInstanceOf(ConflictException.class);
        assertThat(store.runs().lastScheduled("team-a", "nightly")).contains(T0.plusSeconds(60));
        assertThatThrownBy(() -> store.commit(tx -> tx.recordScheduled("team-a", "nightly", T0.plusSeconds(60), T0))).as("never backwards")
                .isInstanceOf(ConflictException.class);
    }

    @Test
    void deletingAJobForgetsItsSchedule() {
        StoredDocument job = store.write(tx -> tx.createDocument(aJob("nightly").workspace("team-a").build(), T0));
        store.commit(tx -> tx.recordScheduled("team-a", "nightly", null, T0));
        store.commit(tx -> tx.deleteDocument(Kind.Job, "team-a", "nightly", job.version()));
        assertThat(store.runs().lastScheduled("team-a", "nightly")).isEmpty();
    }

    @Test
    void runtimeCountsRunningAttemptsOnly() {
        RunRecord queued = createRun(queuedRun("timed", "team-a", T0));
        RunRecord running = store.write(tx -> tx.updateRun(tx.updateRun(queued.admitted(io.slipstream.api.run.RealTimeResources.NotInQuota, "Admitted", T0.plusSeconds(100)))
                .moveTo(RunState.RUNNING, "Running", T0.plusSeconds(100))));
        assertThat(running.runtime(T0.plusSeconds(130))).isEqualTo(Duration.ofSeconds(30));
        RunRecord requeued = store.write(tx -> tx.updateRun(tx.updateRun(running.preempting(new RunId("owner-12345678"), "Reclaimed"))
                .requeued("Preempted", T0.plusSeconds(140))));
        assertThat(requeued.runtime(T0.plusSeconds(500))).isEqualTo(Duration.ofSeconds(40));
        assertThat(store.runs().get(queued.id()).orElseThrow().priorRuntimeMillis()).isEqualTo(40_000);
    }

    @Test
    void runsAreListedNewestFirstWithFiltersAndCursor() {
        List<RunRecord> runs = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            runs.add(createRun(queuedRun(i % 2 == 0 ? "even" : "odd", i < 4 ? "team-a" : "team-b", T0.plusSeconds(i))));
        }
        assertThat(store.runs().list(new RunQuery(null, null, null, null, 10, null))).extracting(RunRecord::id)
                .containsExactly(runs.get(4).id(), runs.get(3).id(), runs.get(2).id(), runs.get(1).id(), runs.get(0).id());
        assertThat(store.runs().list(new RunQuery(Set.of("team-b"), null, null, null, 10, null))).extracting(RunRecord::id)
                .containsExactly(runs.get(4).id());
        assertThat(store.runs().list(new RunQuery(Set.of(), null, null, null, 10, null))).isEmpty();
        assertThat(store.runs().list(new RunQuery(null, "team-a", "even", null, 10, null))).extracting(RunRecord::id)
                .containsExactly(runs.get(2).id(), runs.get(0).id());
        assertThat(store.runs().list(new RunQuery(null, null, null, Set.of(RunState.RUNNING), 10, null))).isEmpty();
        assertThat(store.runs().list(new RunQuery(null, null, null, null, T0.plusSeconds(1), T0.plusSeconds(3), 10, null))).extracting(RunRecord::id)
                .containsExactly(runs.get(2).id(), runs.get(1).id());

        List<RunRecord> firstPage = store.runs().list(new RunQuery(null, null, null, null, 2, null));
        RunRecord last = firstPage.get(1);
        List<RunRecord> secondPage = store.runs().list(new RunQuery(null, null, null, null, 2,
                new RunQuery.Cursor(last.createdAt().toEpochMilli(), last.id().value())));
        assertThat(secondPage).extracting(RunRecord::id).containsExactly(runs.get(2).id(), runs.get(1).id());
    }

    /** A workspace's runs page by page, newest first, those created in the same millisecond by id: each exactly once. */
    @Test
    void aWorkspacesRunsArePagedNewestFirstWithTiesById() {
        List<RunRecord> runs = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            runs.add(createRun(queuedRun("job", "team-a", i < 5 ? T0.plusSeconds(1) : T0.plusSeconds(i))));
        }
        createRun(queuedRun("job", "team-b", T0.plusSeconds(2))); // another workspace's, between them
        List<RunId> expected = runs.stream().sorted(java.util.Comparator.comparing(RunRecord::createdAt).thenComparing(r -> r.id().value()).reversed())
                .map(RunRecord::id).toList();
        for (boolean asked : List.of(true, false)) { // asked for, or the only workspace the caller sees
            List<RunId> paged = new ArrayList<>();
            RunQuery.Cursor before = null;
            for (int page = 0; page < 10; page++) {
                List<RunRecord> next = store.runs().list(asked ? new RunQuery(null, "team-a", null, null, 2, before)
                        : new RunQuery(Set.of("team-a"), null, null, null, 2, before));
                if (next.isEmpty()) {
                    break;
                }
                next.forEach(run -> paged.add(run.id()));
                RunRecord last = next.get(next.size() - 1);
                before = new RunQuery.Cursor(last.createdAt().toEpochMilli(), last.id().value());
            }
            assertThat(paged).as(asked ? "the workspace asked for" : "the only workspace seen").containsExactlyElementsOf(expected);
        }
    }

    private RunRecord labelledRun(String job, Instant createdAt, Map<String, String> labels) {
        RunRecord run = queuedRun(job, "team-a", createdAt);
        return createRun(RunRecord.queued(run.id(), "team-a", job, 1, run.spec(), new RunOrigin(Map.of(), null, null, "alice", labels), createdAt));
    }

    private List<RunId> selected(String selector, int limit, RunQuery.Cursor before) {
        return store.runs().list(new RunQuery(null, null, null, null, null, null, io.slipstream.api.label.LabelSelector.parse(selector), limit, before))
                .stream().map(RunRecord::id).toList();
    }

    @Test
    void runsAreSelectedByLabelsInTheQuerySoPagesAndCursorsStayRight() {
        RunRecord nlp = labelledRun("a", T0, Map.of("team", "nlp", "tier", "gold"));
        RunRecord vision = labelledRun("b", T0.plusSeconds(1), Map.of("team", "vision", "example.com/owner", "ann"));
        RunRecord bare = labelledRun("c", T0.plusSeconds(2), Map.of());
        RunRecord empty = labelledRun("d", T0.plusSeconds(3), Map.of("team", ""));
        assertThat(store.runs().get(nlp.id()).orElseThrow().origin().labels()).isEqualTo(Map.of("team", "nlp", "tier", "gold"));
        record Row(String selector, List<RunRecord> expected) {
        }
        for (Row row : List.of(
                new Row("", List.of(empty, bare, vision, nlp)),
                new Row("team=nlp", List.of(nlp)),
                new Row("team==vision", List.of(vision)),
                new Row("team!=nlp", List.of(empty, bare, vision)),
                new Row("team in (nlp,vision)", List.of(vision, nlp)),
                new Row("team notin (nlp,vision)", List.of(empty, bare)),
                new Row("team", List.of(empty, vision, nlp)),
                new Row("!team", List.of(bare)),
                new Row("team=", List.of(empty)),
                new Row("team,!tier", List.of(empty, vision)),
                new Row("example.com/owner=ann,team=vision", List.of(vision)),
                new Row("team=nlp,team=vision", List.of()),
                new Row("tier=GOLD", List.of()))) {
            assertThat(selected(row.selector(), 10, null)).as(row.selector()).isEqualTo(row.expected().stream().map(RunRecord::id).toList());
        }
        // A page holds its limit of matching runs, and the next one starts after the last of them.
        List<RunId> first = selected("team", 2, null);
        assertThat(first).containsExactly(empty.id(), vision.id());
        RunRecord last = store.runs().get(first.get(1)).orElseThrow();
        assertThat(selected("team", 2, new RunQuery.Cursor(last.createdAt().toEpochMilli(), last.id().value()))).containsExactly(nlp.id());
        // Updates keep the labels; a deleted run takes its labels with it (the same id can be created again, once listed).
        RunRecord cancelled = store.write(tx -> tx.updateRun(nlp.moveTo(RunState.CANCELLED, "Cancelled", T0.plusSeconds(10))));
        assertThat(cancelled.origin().labels()).containsEntry("tier", "gold");
        assertThat(store.runs().get(nlp.id()).orElseThrow().origin().labels()).containsEntry("tier", "gold");
        store.commit(tx -> tx.deleteRun(nlp.id()));
        assertThat(selected("tier=gold", 10, null)).isEmpty();
        RunRecord again = createRun(RunRecord.queued(nlp.id(), "team-a", "a", 1, nlp.spec(), new RunOrigin(Map.of(), null, null, null, Map.of("tier", "gold")),
                T0.plusSeconds(20)));
        assertThat(selected("tier=gold", 10, null)).containsExactly(again.id());
    }

    @Test
    void instancesRoundTripAndUpdatesAreCompareAndSet() {
        RunRecord run = createRun(queuedRun("train", "team-a", T0));
        InstanceRecord first = InstanceRecord.pending(new InstanceId(run.id(), 1, 0), "main", 0, "node-1", List.of(0, 3),
                new io.slipstream.api.run.Endpoint("localhost", "localhost", "127.0.0.1", List.of(41000, 41001)));
        InstanceRecord second = InstanceRecord.pending(new InstanceId(run.id(), 1, 1), "main", 1, "node-2", List.of());
        List<InstanceRecord> created = store.write(tx -> tx.createInstances(List.of(first, second)));
        assertThat(store.runs().instancesOf(run.id())).containsExactlyElementsOf(created);
        assertThat(store.runs().activeInstances()).hasSize(2);

        InstanceRecord started = store.write(tx -> tx.updateInstance(created.get(0).running(Map.of("pid", "42", "dir", "/x"), T0.plusSeconds(1))));
        InstanceRecord running = store.write(tx -> tx.updateInstance(started.ready(T0.plusSeconds(2))));
        assertThat(store.runs().instance(first.id()).orElseThrow().readyAt()).isEqualTo(T0.plusSeconds(2));
        assertThat(store.runs().instance(first.id()).orElseThrow().endpoint().ports()).containsExactly(41000, 41001);
        assertThatThrownBy(() -> store.write(tx -> tx.updateInstance(created.get(0).running(Map.of(), T0)))).isInstanceOf(ConflictException.class);
        InstanceRecord done = store.write(tx -> tx.updateInstance(running.finished(InstanceState.RESOURCE_PREEMPTED, 143, "Preempted", T0.plusSeconds(2))));
        assertThat(store.runs().instance(first.id())).contains(done);
        assertThat(done.handle()).containsEntry("pid", "42");
        assertThat(store.runs().activeInstances()).extracting(InstanceRecord::id).containsExactly(second.id());
        // As the server does: a run has instances of its attempt once admitted (a store may rely on it, RunReads says).
        RunRecord starting = store.write(tx -> tx.updateRun(run.moveTo(RunState.STARTING, "Admitted", T0)));
        assertThat(store.runs().active()).containsExactly(starting);
        assertThat(store.runs().instancesOfActiveRuns()).extracting(InstanceRecord::id).containsExactly(first.id(), second.id());

        RunRecord finished = store.write(tx -> tx.updateRun(starting.moveTo(RunState.FAILED, "x", T0)));
        assertThat(finished.state()).isEqualTo(RunState.FAILED);
        assertThat(store.runs().instancesOfActiveRuns()).isEmpty();
    }

    @Test
    void anInstanceRestartedInPlaceKeepsItsPlaceAndCountsItsRestarts() {
        RunRecord run = createRun(queuedRun("train", "team-a", T0));
        InstanceRecord placed = store.write(tx -> tx.createInstances(List.of(InstanceRecord.pending(new InstanceId(run.id(), 1, 2), "worker", 1, "node-2",
                List.of(1))))).get(0);
        assertThat(placed.restarts()).isZero();
        InstanceRecord failed = store.write(tx -> tx.updateInstance(tx.updateInstance(placed.running(Map.of("pid", "42"), T0))
                .finished(InstanceState.FAILED, 137, "Exited with code 137", T0.plusSeconds(3))));
        InstanceRecord restarted = store.write(tx -> tx.updateInstance(failed.restartedInPlace()));
        assertThat(store.runs().instance(placed.id())).contains(restarted);
        assertThat(restarted.restarts()).isEqualTo(1);
        assertThat(restarted.state()).isEqualTo(InstanceState.PENDING);
        assertThat(restarted.handle()).isEmpty();
        assertThat(restarted.exitCode()).isNull();
        assertThat(store.runs().activeInstances()).extracting(InstanceRecord::id).containsExactly(placed.id());
        InstanceRecord again = store.write(tx -> tx.updateInstance(tx.updateInstance(restarted.running(Map.of("pid", "43"), T0.plusSeconds(4)))
                .finished(InstanceState.FAILED, 137, "Exited with code 137", T0.plusSeconds(5)).restartedInPlace()));
        assertThat(store.runs().instancesOf(run.id())).singleElement().satisfies(i -> assertThat(i.restarts()).isEqualTo(2));
        assertThat(again.node()).isEqualTo("node-2");
    }

    @Test
    void anInstancesEndCauseRoundTripsAndARestartInPlaceClearsIt() {
        RunRecord run = createRun(queuedRun("train", "team-a", T0));
        InstanceRecord placed = store.write(tx -> tx.createInstances(List.of(InstanceRecord.pending(new InstanceId(run.id(), 1, 0), "main", 0, "node-1",
                List.of())))).get(0);
        assertThat(placed.endCause()).isNull();
        InstanceRecord oom = store.write(tx -> tx.updateInstance(tx.updateInstance(placed.running(Map.of("pid", "42"), T0))
                .finished(InstanceState.FAILED, 137, io.slipstream.api.run.EndCause.OOMKilled,
                        "OOMKilled: used more memory than its limit (exit code 137)", T0.plusSeconds(3))));
        assertThat(store.runs().instance(placed.id())).contains(oom);
        assertThat(store.runs().instancesOf(run.id())).singleElement()
                .satisfies(i -> assertThat(i.endCause()).isEqualTo(io.slipstream.api.run.EndCause.OOMKilled));
        InstanceRecord restarted = store.write(tx -> tx.updateInstance(oom.restartedInPlace()));
        assertThat(store.runs().instance(placed.id())).contains(restarted);
        assertThat(restarted.endCause()).isNull();
    }

    @Test
    void anInstancesUsageRoundTripsEachFigureOnItsOwnAndARestartInPlaceClearsIt() {
        RunRecord run = createRun(queuedRun("train", "team-a", T0));
        List<InstanceRecord> placed = store.write(tx -> tx.createInstances(List.of(
                InstanceRecord.pending(new InstanceId(run.id(), 1, 0), "main", 0, "node-1", List.of()),
                InstanceRecord.pending(new InstanceId(run.id(), 1, 1), "main", 1, "node-1", List.of()),
                InstanceRecord.pending(new InstanceId(run.id(), 1, 2), "main", 2, "node-1", List.of()))));
        assertThat(placed).allSatisfy(i -> assertThat(i.usage()).isNull());
        io.slipstream.api.run.InstanceUsage both = new io.slipstream.api.run.InstanceUsage(3L << 30, 12_345_678_901L);
        io.slipstream.api.run.InstanceUsage cpuOnly = io.slipstream.api.run.InstanceUsage.of(-1, 7);
        List<InstanceRecord> ended = store.write(tx -> List.of(
                tx.updateInstance(tx.updateInstance(placed.get(0).running(Map.of("pid", "41"), T0))
                        .finished(InstanceState.SUCCEEDED, 0, "Completed", T0.plusSeconds(3)).measured(both)),
                tx.updateInstance(tx.updateInstance(placed.get(1).running(Map.of("pid", "42"), T0))
                        .finished(InstanceState.FAILED, 1, "Exited with code 1", T0.plusSeconds(3)).measured(cpuOnly)),
                tx.updateInstance(tx.updateInstance(placed.get(2).running(Map.of("pid", "43"), T0))
                        .finished(InstanceState.FAILED, 1, "Exited with code 1", T0.plusSeconds(3)))));
        assertThat(store.runs().instancesOf(run.id())).containsExactlyElementsOf(ended);
        assertThat(store.runs().instance(placed.get(0).id()).orElseThrow().usage()).isEqualTo(both);
        assertThat(store.runs().instance(placed.get(1).id()).orElseThrow().usage()).isEqualTo(cpuOnly)
                .satisfies(u -> assertThat(u.hasMemoryPeak()).isFalse());
        assertThat(store.runs().instance(placed.get(2).id()).orElseThrow().usage()).isNull();
        InstanceRecord restarted = store.write(tx -> tx.updateInstance(ended.get(0).restartedInPlace()));
        assertThat(store.runs().instance(placed.get(0).id())).contains(restarted);
        assertThat(restarted.usage()).isNull();
    }

    @Test
    void eventsKeepTheirOrder() {
        RunRecord run = createRun(queuedRun("train", "team-a", T0));
        for (int i = 0; i < 5; i++) {
            int n = i;
            store.write(tx -> tx.appendEvent(RunEvent.of(run.id(), T0.plusSeconds(n), EventType.InstanceExited, null, "Exited", "code " + n, "main-0")));
        }
        List<RunEvent> events = store.runs().events(run.id(), 0, 100);
        assertThat(events).hasSize(6);
        assertThat(events).extracting(RunEvent::seq).isSorted().doesNotHaveDuplicates();
        assertThat(store.runs().events(run.id(), events.get(3).seq(), 2)).extracting(RunEvent::message).containsExactly("code 3", "code 4");
    }

    @Test
    void concurrentCompareAndSetUpdatesLetExactlyOneWin() throws Exception {
        RunRecord run = createRun(queuedRun("train", "team-a", T0));
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Callable<Boolean>> attempts = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                attempts.add(() -> {
                    try {
                        store.write(tx -> tx.updateRun(run.withCancelRequestedAt(T0.plusSeconds(9))));
                        return true;
                    } catch (ConflictException e) {
                        return false;
                    }
                });
            }
            int wins = 0;
            for (Future<Boolean> result : pool.invokeAll(attempts)) {
                wins += result.get() ? 1 : 0;
            }
            assertThat(wins).isEqualTo(1);
            assertThat(store.runs().get(run.id()).orElseThrow().version()).isEqualTo(2);
        } finally {
            pool.shutdownNow();
        }
    }

    // --- transactions: every kind of write rolls back, commits are atomic and invisible until done ---

    @Test
    void aFailedTransactionUndoesEveryKindOfWriteAndRethrowsTheFailure() {
        RunRecord kept = createRun(queuedRun("kept", "team-a", T0));
        InstanceRecord placed = store.write(tx -> tx.createInstances(List.of(InstanceRecord.pending(new InstanceId(kept.id(), 1, 0), "main", 0, "node-1",
                List.of())))).get(0);
        RunRecord fresh = queuedRun("fresh", "team-a", T0);
        RuntimeException failure = new IllegalStateException("the work failed");

        assertThatThrownBy(() -> store.write(tx -> {
            tx.createRun(fresh, RunEvent.of(fresh.id(), T0, EventType.StateChanged, "QUEUED", "Submitted", null, null));
            tx.createInstances(List.of(InstanceRecord.pending(new InstanceId(fresh.id(), 1, 0), "main", 0, "node-1", List.of())));
            tx.updateRun(kept.moveTo(RunState.STARTING, "Admitted", T0));
            tx.updateInstance(placed.running(Map.of("pid", "1"), T0));
            tx.appendEvent(RunEvent.of(kept.id(), T0, EventType.InstanceStarted, null, "Launched", null, "main-0"));
            tx.createToken(new TokenRecord("tok-tx", "ab".repeat(32), "alice", false, null, T0, null, null));
            tx.createSecret(new SecretRecord("team-a", "hf", "k1", Map.of("token", "c2VhbGVk"), 0, T0, T0));
            tx.registerServerKey("secrets", "k1", T0);
            tx.recordScheduled("team-a", "nightly", null, T0);
            tx.markNodeDown(new NodeDown("node-1", "disk", T0));
            tx.createDocument(workspace("team-tx", "alice"), T0);
            // Inside, the transaction reads its own writes.
            assertThat(tx.runs().get(fresh.id())).isPresent();
            assertThat(tx.runs().get(kept.id()).orElseThrow().state()).isEqualTo(RunState.STARTING);
            assertThat(tx.runs().instance(placed.id()).orElseThrow().version()).isEqualTo(2);
            assertThat(tx.documents().workspacesOf("alice")).containsExactly("team-tx");
            throw failure;
        })).isSameAs(failure);

        assertThat(store.runs().get(fresh.id())).isEmpty();
        assertThat(store.runs().instancesOf(fresh.id())).isEmpty();
        assertThat(store.runs().events(fresh.id(), 0, 10)).isEmpty();
        assertThat(store.runs().get(kept.id())).contains(kept);
        assertThat(store.runs().instance(placed.id())).contains(placed);
        assertThat(store.runs().events(kept.id(), 0, 10)).hasSize(1);
        assertThat(store.runs().active()).containsExactly(kept);
        assertThat(store.credentials().tokenByHash("ab".repeat(32))).isEmpty();
        assertThat(store.credentials().secrets(null)).isEmpty();
        assertThat(store.credentials().serverKeyId("secrets")).isEmpty();
        assertThat(store.runs().lastScheduled("team-a", "nightly")).isEmpty();
        assertThat(store.runs().downNodes()).isEmpty();
        assertThat(store.documents().workspacesOf("alice")).isEmpty();
        // Nothing is left locked either: the same writes succeed afterwards.
        store.write(tx -> tx.updateRun(kept.moveTo(RunState.STARTING, "Admitted", T0)));
        store.write(tx -> tx.updateInstance(placed.running(Map.of("pid", "1"), T0)));
    }

    @Test
    void aTransactionCommitsEverythingItWroteOrNothing() {
        RunRecord run = queuedRun("nightly", "team-a", T0);
        RunRecord created = store.write(tx -> {
            RunRecord stored = tx.createRun(run, RunEvent.of(run.id(), T0, EventType.StateChanged, "QUEUED", "Scheduled", null, null));
            tx.recordScheduled("team-a", "nightly", null, T0);
            tx.appendEvent(RunEvent.of(run.id(), T0, EventType.StateChanged, null, null, "later", null));
            return stored;
        });
        assertThat(store.runs().get(run.id())).contains(created);
        assertThat(store.runs().lastScheduled("team-a", "nightly")).contains(T0);
        assertThat(store.runs().events(run.id(), 0, 10)).extracting(RunEvent::message).containsExactly(null, "later");

        // A transaction that fails after some writes takes them all down with it.
        assertThatThrownBy(() -> store.commit(tx -> {
            tx.recordScheduled("team-a", "nightly", T0, T0.plusSeconds(60));
            tx.appendEvent(RunEvent.of(run.id(), T0, EventType.StateChanged, null, null, "lost", null));
            throw new ConflictException("a conflict");
        })).isInstanceOf(ConflictException.class).hasMessage("a conflict");
        assertThat(store.runs().lastScheduled("team-a", "nightly")).contains(T0);
        assertThat(store.runs().events(run.id(), 0, 10)).hasSize(2);
    }

    /**
     * A transaction is never joined: inside one, the store itself (or a store that wraps it) refuses every call on that
     * thread, a second transaction (which would not commit with the first, and where writes are one at a time would
     * wait for it) as well as a read (which would not see the transaction's writes). The transaction goes on: what it
     * wrote commits, and what the refused calls would have written is nowhere.
     */
    @Test
    void theStoreRefusesItsOwnCallsInsideOneOfItsTransactions() {
        long epoch = store.leases().claim("a", T0, TTL).epoch();
        Store fenced = new FencedStore(store, epoch);
        for (Store outer : List.of(store, fenced)) {
            String team = outer == store ? "team-a" : "team-f";
            outer.commit(tx -> {
                tx.createDocument(workspace(team, "member-of-" + team), T0);
                List<org.assertj.core.api.ThrowableAssert.ThrowingCallable> refused = List.of(
                        () -> outer.write(inner -> inner.createDocument(workspace(team + "-inner"), T0)),
                        () -> outer.commit(inner -> inner.markNodeDown(new NodeDown("node-1", "inner", T0))),
                        () -> store.commit(inner -> inner.markNodeDown(new NodeDown("node-1", "inner", T0))),
                        () -> outer.documents().get(Kind.Workspace, null, team),
                        () -> outer.runs().active(),
                        () -> outer.credentials().tokens(),
                        () -> outer.usage().lending(),
                        () -> outer.read(reads -> reads.documents().workspacesOf("member-of-" + team)),
                        () -> outer.leases().claim("a", T0.plusSeconds(1), TTL),
                        () -> outer.leases().current());
                for (var call : refused) {
                    assertThatThrownBy(call).isInstanceOf(IllegalStateException.class).hasMessageContaining("inside one of its own transactions");
                }
                assertThat(tx.documents().workspacesOf("member-of-" + team)).as("the transaction goes on").containsExactly(team);
            });
        }
        assertThat(store.documents().list(Kind.Workspace, null)).extracting(d -> d.document().name()).containsExactly("team-a", "team-f");
        assertThat(store.runs().downNodes()).isEmpty();
        assertThat(store.leases().current().orElseThrow().renewedAt()).as("no claim went through").isEqualTo(T0);

        store.read(reads -> {
            assertThat(reads.documents().list(Kind.Workspace, null)).hasSize(2);
            assertThatThrownBy(() -> store.runs().active()).isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> store.commit(tx -> tx.markNodeDown(new NodeDown("node-1", "inner", T0)))).isInstanceOf(IllegalStateException.class);
            return null;
        });
        assertThat(store.runs().downNodes()).isEmpty();
    }

    /** A transaction is its work's only while the work runs: kept past it, it refuses every call. */
    @Test
    void aTransactionKeptPastItsWorkRefusesEveryCall() {
        StoreTx kept = store.write(tx -> {
            tx.createDocument(workspace("team-a"), T0);
            return tx;
        });
        StoreReads view = store.read(reads -> reads);
        for (org.assertj.core.api.ThrowableAssert.ThrowingCallable call : List.<org.assertj.core.api.ThrowableAssert.ThrowingCallable>of(
                () -> kept.createDocument(workspace("team-b"), T0), () -> kept.documents().get(Kind.Workspace, null, "team-a"),
                () -> kept.requireLeader(1), () -> view.documents().list(Kind.Workspace, null))) {
            assertThatThrownBy(call).isInstanceOf(IllegalStateException.class).hasMessageContaining("ended");
        }
        assertThat(store.documents().list(Kind.Workspace, null)).extracting(d -> d.document().name()).containsExactly("team-a");
    }

    /** A read transaction sees what was committed, and its reads are those of the store. */
    @Test
    void aReadTransactionSeesWhatWasCommitted() {
        RunRecord run = createRun(queuedRun("train", "team-a", T0));
        store.commit(tx -> tx.createDocument(workspace("team-a", "alice"), T0));
        String seen = store.read(reads -> reads.runs().get(run.id()).orElseThrow().id() + " " + reads.documents().workspacesOf("alice")
                + " " + reads.runs().active().size() + " " + reads.credentials().tokens().size() + " " + reads.usage().lending().size());
        assertThat(seen).isEqualTo(run.id() + " [team-a] 1 0 0");
    }

    @Test
    void aTransactionsWritesAreInvisibleToOthersUntilItCommits() throws Exception {
        CountDownLatch written = new CountDownLatch(1);
        CountDownLatch looked = new CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<StoredDocument> writer = pool.submit(() -> store.write(tx -> {
                StoredDocument created = tx.createDocument(workspace("pending", "alice"), T0);
                written.countDown();
                try {
                    assertThat(looked.await(10, TimeUnit.SECONDS)).isTrue();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                return created;
            }));
            assertThat(written.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(store.documents().get(Kind.Workspace, null, "pending")).as("not committed yet").isEmpty();
            assertThat(store.documents().list(Kind.Workspace, null)).isEmpty();
            assertThat(store.documents().workspacesOf("alice")).isEmpty();
            looked.countDown();
            writer.get(10, TimeUnit.SECONDS);
            assertThat(store.documents().get(Kind.Workspace, null, "pending")).isPresent();
            assertThat(store.documents().workspacesOf("alice")).containsExactly("pending");
        } finally {
            looked.countDown();
            pool.shutdownNow();
        }
    }

    // --- versions and uniqueness beyond documents and runs ---

    @Test
    void instancesAreCreatedOnceAndChangedOnlyFromTheVersionRead() throws Exception {
        RunRecord run = createRun(queuedRun("train", "team-a", T0));
        InstanceRecord pending = InstanceRecord.pending(new InstanceId(run.id(), 1, 0), "main", 0, "node-1", List.of());
        InstanceRecord created = store.write(tx -> tx.createInstances(List.of(pending))).get(0);
        assertThat(created.version()).isEqualTo(1);
        assertThatThrownBy(() -> store.write(tx -> tx.createInstances(List.of(pending)))).isInstanceOf(ConflictException.class);
        InstanceRecord other = InstanceRecord.pending(new InstanceId(run.id(), 1, 1), "main", 1, "node-1", List.of());
        assertThatThrownBy(() -> store.write(tx -> tx.createInstances(List.of(other, pending)))).as("one taken id: none of the batch")
                .isInstanceOf(ConflictException.class);
        assertThat(store.runs().instance(other.id())).isEmpty();
        assertThatThrownBy(() -> store.write(tx -> tx.updateInstance(other.withVersion(1)))).as("never created").isInstanceOf(ConflictException.class);
        assertThat(store.runs().instance(other.id())).isEmpty();

        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Callable<Boolean>> attempts = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                String pid = Integer.toString(100 + i);
                attempts.add(() -> {
                    try {
                        store.write(tx -> tx.updateInstance(created.running(Map.of("pid", pid), T0.plusSeconds(1))));
                        return true;
                    } catch (ConflictException e) {
                        return false;
                    }
                });
            }
            int wins = 0;
            for (Future<Boolean> result : pool.invokeAll(attempts)) {
                wins += result.get() ? 1 : 0;
            }
            assertThat(wins).isEqualTo(1);
            assertThat(store.runs().instance(pending.id()).orElseThrow().version()).isEqualTo(2);
        } finally {
            pool.shutdownNow();
        }
        assertThatThrownBy(() -> store.write(tx -> tx.updateRun(queuedRun("never", "team-a", T0).withVersion(1)))).as("a run never created")
                .isInstanceOf(ConflictException.class);
    }

    @Test
    void aReclaimedClaimIsKeptWithTheRunUntilItIsAdmitted() {
        RunRecord owner = createRun(RunRecord.queued(RunId.newFor("owner"), "team-a", "owner", 1, aJob("owner").spec(), T0));
        store.write(tx -> tx.updateRun(owner.withCapacityReclaimed()));
        RunRecord claimed = store.runs().get(owner.id()).orElseThrow();
        assertThat(claimed.capacityReclaimed()).isTrue();
        store.write(tx -> tx.updateRun(claimed.admitted(io.slipstream.api.run.RealTimeResources.InQuota, "Admitted", T0.plusSeconds(1))));
        assertThat(store.runs().get(owner.id()).orElseThrow().capacityReclaimed()).isFalse();
    }

    @Test
    void anUpdateNeverChangesWhatARunIsOnlyWhereItStands() {
        RunOrigin origin = new RunOrigin(Map.of("nodeGroups.main.replicas", "2"), null, "key-fixed");
        RunRecord stored = createRun(RunRecord.queued(RunId.newFor("fixed"), "team-a", "fixed", 3, aJob("fixed").spec(), origin, T0));
        JobSpec otherSpec = aJob("other").replicas(7).spec();
        RunRecord rewritten = new RunRecord(stored.id(), "team-b", "other", 9, RunState.STARTING, "Admitted", null, 1, 99, otherSpec,
                T0.plusSeconds(5), null, null, null, io.slipstream.api.run.RealTimeResources.InQuota, null, false, RunOrigin.MANUAL, T0, 0,
                FaultState.NONE, stored.version());
        store.write(tx -> tx.updateRun(rewritten));
        RunRecord read = store.runs().get(stored.id()).orElseThrow();
        assertThat(read.state()).isEqualTo(RunState.STARTING);
        assertThat(read.realTimeResources()).isEqualTo(io.slipstream.api.run.RealTimeResources.InQuota);
        assertThat(read.version()).isEqualTo(2);
        assertThat(read.workspace()).isEqualTo("team-a");
        assertThat(read.job()).isEqualTo("fixed");
        assertThat(read.jobVersion()).isEqualTo(3);
        assertThat(read.priority()).isEqualTo(stored.priority());
        assertThat(read.spec()).isEqualTo(stored.spec());
        assertThat(read.createdAt()).isEqualTo(T0);
        assertThat(read.origin()).isEqualTo(origin);
        assertThat(store.runs().byIdempotencyKey("team-a", "key-fixed")).map(RunRecord::id).contains(stored.id());
    }

    @Test
    void aReleasedIdempotencyKeyLeavesItsRunAloneAndADeletedRunFreesItsKey() {
        JobSpec spec = aJob("keyed").spec();
        RunOrigin origin = new RunOrigin(Map.of("a", "1"), T0.minusSeconds(60), "key-2", "bob");
        RunRecord first = createRun(RunRecord.queued(RunId.newFor("keyed"), "team-a", "keyed", 1, spec, origin, T0));
        store.commit(tx -> tx.releaseIdempotencyKey(first.id()));
        RunRecord released = store.runs().get(first.id()).orElseThrow();
        assertThat(released.origin()).isEqualTo(new RunOrigin(Map.of("a", "1"), T0.minusSeconds(60), null, "bob"));
        assertThat(released.version()).as("a writer holding the run is not disturbed").isEqualTo(first.version());

        RunRecord second = createRun(RunRecord.queued(RunId.newFor("keyed"), "team-a", "keyed", 1, spec, origin, T0.plusSeconds(1)));
        // Writing the first run from a copy read before the release does not take the key back.
        store.write(tx -> tx.updateRun(first.moveTo(RunState.CANCELLED, "Cancelled", T0.plusSeconds(2))));
        assertThat(store.runs().byIdempotencyKey("team-a", "key-2")).map(RunRecord::id).contains(second.id());
        assertThat(store.runs().get(first.id()).orElseThrow().origin().idempotencyKey()).isNull();

        store.write(tx -> tx.updateRun(second.moveTo(RunState.CANCELLED, "Cancelled", T0.plusSeconds(3))));
        store.commit(tx -> tx.deleteRun(second.id()));
        assertThat(store.runs().byIdempotencyKey("team-a", "key-2")).isEmpty();
        createRun(RunRecord.queued(RunId.newFor("keyed"), "team-a", "keyed", 1, spec, origin, T0.plusSeconds(4)));
        assertThat(store.runs().byIdempotencyKey("team-a", "key-2")).isPresent();
    }

    @Test
    void aTokensIdAndHashAreEachTakenOnce() {
        store.commit(tx -> tx.createToken(new TokenRecord("tok-1", "ab".repeat(32), "alice", false, null, T0, null, null)));
        assertThatThrownBy(() -> store.commit(tx -> tx.createToken(new TokenRecord("tok-1", "cd".repeat(32), "bob", false, null, T0, null, null))))
                .isInstanceOf(ConflictException.class);
        assertThatThrownBy(() -> store.commit(tx -> tx.createToken(new TokenRecord("tok-2", "ab".repeat(32), "bob", true, null, T0, null, null))))
                .isInstanceOf(ConflictException.class);
        assertThat(store.credentials().tokens()).singleElement().extracting(TokenRecord::user).isEqualTo("alice");
        assertThat(store.credentials().hasAdminToken(T0)).isFalse();
    }

    // --- events, instances of attempts, what is kept ---

    @Test
    void eventsAreNumberedInTheOrderTheyWereAppendedAndKeptApartByRun() {
        RunRecord a = createRun(queuedRun("a", "team-a", T0));
        RunRecord b = createRun(queuedRun("b", "team-a", T0));
        List<RunEvent> appended = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            // Times go backwards: the order is the order of appending, not of times.
            int n = i;
            appended.add(store.write(tx -> tx.appendEvent(RunEvent.of(n % 2 == 0 ? a.id() : b.id(), T0.plusSeconds(10 - n), EventType.StateChanged, null, "Noted", "n" + n, null))));
        }
        assertThat(appended).extracting(RunEvent::seq).isSorted().doesNotHaveDuplicates().allMatch(seq -> seq > 0);
        List<RunEvent> ofA = store.runs().events(a.id(), 0, 100);
        assertThat(ofA).hasSize(4);
        assertThat(ofA.subList(1, 4)).containsExactly(appended.get(0), appended.get(2), appended.get(4));
        assertThat(ofA.get(0).seq()).isLessThan(appended.get(0).seq());
        assertThat(store.runs().events(b.id(), 0, 100).subList(1, 4)).containsExactly(appended.get(1), appended.get(3), appended.get(5));
        assertThat(store.runs().events(a.id(), appended.get(0).seq(), 1)).containsExactly(appended.get(2));
        assertThat(store.runs().events(a.id(), appended.get(4).seq(), 10)).isEmpty();
    }

    @Test
    void onlyTheCurrentAttemptsInstancesAreTheActiveRunsAndAPageOfRunsOnes() {
        RunRecord run = createRun(queuedRun("again", "team-a", T0));
        RunRecord admitted = store.write(tx -> tx.updateRun(run.admitted(io.slipstream.api.run.RealTimeResources.NotInQuota, "Admitted", T0)));
        InstanceRecord first = store.write(tx -> tx.createInstances(List.of(InstanceRecord.pending(new InstanceId(run.id(), 1, 0), "main", 0, "node-1",
                List.of())))).get(0);
        store.write(tx -> tx.updateInstance(first.finished(InstanceState.RESOURCE_PREEMPTED, 143, "Preempted", T0.plusSeconds(1))));
        RunRecord requeued = store.write(tx -> tx.updateRun(tx.updateRun(admitted.preempting(new RunId("owner-12345678"), "Reclaimed"))
                .requeued("Preempted", T0.plusSeconds(2))));
        RunRecord again = store.write(tx -> tx.updateRun(requeued.admitted(io.slipstream.api.run.RealTimeResources.InQuota, "Admitted", T0.plusSeconds(3))));
        store.write(tx -> tx.createInstances(List.of(InstanceRecord.pending(new InstanceId(run.id(), 2, 1), "main", 1, "node-2", List.of()),
                InstanceRecord.pending(new InstanceId(run.id(), 2, 0), "main", 0, "node-1", List.of()))));

        assertThat(store.runs().instancesOfActiveRuns()).extracting(InstanceRecord::id)
                .containsExactly(new InstanceId(run.id(), 2, 0), new InstanceId(run.id(), 2, 1));
        assertThat(store.runs().instancesOf(run.id())).extracting(InstanceRecord::id)
                .containsExactly(new InstanceId(run.id(), 1, 0), new InstanceId(run.id(), 2, 0), new InstanceId(run.id(), 2, 1));
        assertThat(store.runs().activeInstances()).extracting(InstanceRecord::id)
                .containsExactly(new InstanceId(run.id(), 2, 0), new InstanceId(run.id(), 2, 1));
        // A page of runs (a watch stream's): each run a key, with its current attempt's instances by rank.
        RunRecord queued = createRun(queuedRun("waiting", "team-a", T0));
        RunRecord other = createRun(queuedRun("other", "team-b", T0));
        store.write(tx -> tx.createInstances(List.of(InstanceRecord.pending(new InstanceId(other.id(), 1, 0), "main", 0, "node-3", List.of()))));
        Map<RunId, List<InstanceRecord>> page = store.runs().currentInstancesOf(List.of(queued, again));
        assertThat(page).containsOnlyKeys(queued.id(), again.id());
        assertThat(page.get(queued.id())).isEmpty();
        assertThat(page.get(again.id())).extracting(InstanceRecord::id).containsExactly(new InstanceId(run.id(), 2, 0), new InstanceId(run.id(), 2, 1));
        assertThat(store.runs().currentInstancesOf(List.of(admitted)).get(run.id())).extracting(InstanceRecord::id)
                .containsExactly(new InstanceId(run.id(), 1, 0)); // the attempt of the record given
        assertThat(store.runs().currentInstancesOf(List.of())).isEmpty();
    }

    /**
     * Seeded: whatever the writes (admissions, instances moving on, requeues to a new attempt, runs ending and
     * deleted, a transaction rolled back), the store's own read of the instances of the active runs (which a store may
     * keep between reads) equals a transaction's read of them, and so do the active runs.
     */
    @Test
    void theActiveRunsInstancesReadAfterAnyWritesAreWhatATransactionReads() {
        java.util.Random random = new java.util.Random(45);
        List<RunRecord> runs = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            runs.add(createRun(queuedRun("job-" + i, "team-a", T0)));
        }
        for (int round = 0; round < 300; round++) {
            int index = random.nextInt(runs.size());
            RunRecord run = store.runs().get(runs.get(index).id()).orElse(null);
            if (run == null) {
                runs.set(index, createRun(queuedRun("job-" + index + "-" + round, "team-a", T0)));
                continue;
            }
            Instant at = T0.plusSeconds(round);
            String pid = Integer.toString(round);
            List<InstanceRecord> mine = store.runs().instancesOf(run.id()).stream().filter(i -> i.id().attempt() == run.attempt()).toList();
            switch (run.state()) {
                case QUEUED -> store.write(tx -> {
                    RunRecord admitted = tx.updateRun(run.admitted(io.slipstream.api.run.RealTimeResources.InQuota, "Admitted", at));
                    return tx.createInstances(List.of(InstanceRecord.pending(new InstanceId(run.id(), admitted.attempt(), 0), "main", 0, "node-1", List.of()),
                            InstanceRecord.pending(new InstanceId(run.id(), admitted.attempt(), 1), "main", 1, "node-2", List.of())));
                });
                case STARTING, RUNNING -> {
                    int choice = random.nextInt(5);
                    InstanceRecord one = mine.get(random.nextInt(mine.size()));
                    if (choice == 0 && run.state() == RunState.STARTING) {
                        store.write(tx -> tx.updateRun(run.moveTo(RunState.RUNNING, "Started", at)));
                    } else if (choice == 1) { // preempted: a new attempt, queued
                        store.write(tx -> {
                            mine.stream().filter(i -> !i.state().isFinal())
                                    .forEach(i -> tx.updateInstance(i.finished(InstanceState.RESOURCE_PREEMPTED, 143, "Preempted", at)));
                            return tx.updateRun(tx.updateRun(run.preempting(new RunId("owner-12345678"), "Reclaimed")).requeued("Preempted", at));
                        });
                    } else if (choice == 2) {
                        store.write(tx -> tx.updateRun(run.moveTo(RunState.SUCCEEDED, "Done", at)));
                    } else if (choice == 3 && one.state() == InstanceState.PENDING) { // written, then rolled back
                        assertThatThrownBy(() -> store.write(tx -> {
                            tx.updateInstance(one.running(Map.of("pid", "1"), at));
                            throw new IllegalStateException("rolled back");
                        })).hasMessage("rolled back");
                    } else if (one.state() == InstanceState.PENDING) {
                        store.write(tx -> tx.updateInstance(one.running(Map.of("pid", pid), at)));
                    } else if (!one.state().isFinal()) {
                        store.write(tx -> tx.updateInstance(one.finished(InstanceState.SUCCEEDED, 0, "Exited", at)));
                    }
                }
                default -> store.write(tx -> { // ended: deleted after its retention
                    tx.deleteRun(run.id());
                    return null;
                });
            }
            if (round % 3 == 0) {
                assertThat(store.runs().active()).as("round %d", round).containsExactlyElementsOf(store.read(tx -> tx.runs().active()));
                assertThat(store.runs().instancesOfActiveRuns()).as("round %d", round)
                        .containsExactlyElementsOf(store.read(tx -> tx.runs().instancesOfActiveRuns()));
            }
        }
    }

    @Test
    void longTextIsShortenedToWhatTheStoreKeepsNotRefused() {
        RunRecord run = createRun(queuedRun("wordy", "team-a", T0));
        store.write(tx -> tx.updateRun(run.moveTo(RunState.CANCELLED, "r".repeat(5000), T0)));
        assertThat(store.runs().get(run.id()).orElseThrow().reason()).hasSize(1024).startsWith("rrr").endsWith("…");
        store.write(tx -> tx.appendEvent(RunEvent.of(run.id(), T0, EventType.StateChanged, null, "e".repeat(2000), "m".repeat(10_000), null)));
        RunEvent event = store.runs().events(run.id(), 0, 10).get(1);
        assertThat(event.reason()).hasSize(1024).endsWith("…");
        assertThat(event.message()).hasSize(4096).endsWith("…");
        store.commit(tx -> tx.markNodeDown(new NodeDown("node-1", "d".repeat(2000), T0)));
        assertThat(store.runs().downNodes().get("node-1").reason()).hasSize(1024);
    }

    @Test
    void timesAreKeptToTheMicrosecond() {
        Instant precise = Instant.parse("2026-03-01T10:00:00.123456789Z");
        Instant kept = Instant.parse("2026-03-01T10:00:00.123457Z");
        RunRecord run = createRun(queuedRun("precise", "team-a", precise));
        assertThat(store.runs().get(run.id()).orElseThrow().createdAt()).isEqualTo(kept);
        assertThat(store.runs().events(run.id(), 0, 10).get(0).time()).isEqualTo(kept);
        store.write(tx -> tx.createDocument(workspace("team-a"), precise));
        assertThat(store.documents().get(Kind.Workspace, null, "team-a").orElseThrow().createdAt()).isEqualTo(kept);
        store.commit(tx -> tx.recordScheduled("team-a", "nightly", null, precise));
        assertThat(store.runs().lastScheduled("team-a", "nightly")).contains(kept);
    }

    // --- stored data is data: one unreadable row never stops the others ---

    /** What a field renamed or retyped by a later release (or a bug, or a hand edit) looks like to this one. */
    static final String UNBINDABLE_SPEC = "{\"apiVersion\":\"slipstream/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"broken\","
            + "\"workspace\":\"team-a\"},\"spec\":{\"nodeGroups\":\"not a list\"}}";

    @Test
    void newRecordsCarryTodaysFormatVersion() throws Exception {
        RunRecord run = createRun(queuedRun("train", "team-a", T0));
        store.write(tx -> tx.createDocument(workspace("team-a"), T0));
        assertThat(sqlLong("SELECT schema_version FROM runs WHERE id = '" + run.id() + "'")).isEqualTo(io.slipstream.api.spec.StoredFormat.CURRENT);
        assertThat(sqlLong("SELECT schema_version FROM documents WHERE name = 'team-a'")).isEqualTo(io.slipstream.api.spec.StoredFormat.CURRENT);
        StoredDocument stored = store.documents().get(Kind.Workspace, null, "team-a").orElseThrow();
        sql("UPDATE documents SET schema_version = 0");
        store.write(tx -> tx.updateDocument(workspace("team-a", "alice"), stored.version(), T0));
        assertThat(sqlLong("SELECT schema_version FROM documents WHERE name = 'team-a'")).isEqualTo(io.slipstream.api.spec.StoredFormat.CURRENT);
    }

    /**
     * A run in a state this server lacks (a newer server's) keeps its instances among the active runs' (the loop keeps
     * their nodes held), also where the store reads the instances of the runs that hold resources by their state.
     */
    @Test
    void theInstancesOfARunInAStateThisServerLacksAreStillAmongTheActiveRunsOnes() throws Exception {
        RunRecord run = createRun(queuedRun("newer", "team-a", T0));
        RunRecord starting = store.write(tx -> tx.updateRun(run.moveTo(RunState.STARTING, "Admitted", T0)));
        InstanceId instance = new InstanceId(run.id(), 1, 0);
        store.write(tx -> tx.createInstances(List.of(InstanceRecord.pending(instance, "main", 0, "node-1", List.of()))));
        assertThat(store.runs().active()).containsExactly(starting);
        sql("UPDATE runs SET state = 'PAUSED', version = version + 1 WHERE id = '" + run.id() + "'"); // as a newer server writes it
        assertThat(store.runs().active()).isEmpty(); // unreadable here
        assertThat(store.runs().instancesOfActiveRuns()).extracting(InstanceRecord::id).containsExactly(instance);
    }

    /** A table: each way a run's row can become unreadable, and what every read then does. */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', value = {
            "a spec that does not bind   | spec = '" + UNBINDABLE_SPEC + "'                       | nodeGroups",
            "a spec that is not JSON     | spec = '{nope'                                        | Unexpected character",
            "a state this server lacks   | state = 'PAUSED'                                      | PAUSED",
            "a newer server's format     | schema_version = 2                                    | newer than this server knows",
            "faults that do not bind     | faults = '{\"failures\":\"many\"}'                    | failures"})
    void anUnreadableRunIsLeftOutOfListsAndNamedWhenLookedUp(String what, String damage, String why) throws Exception {
        RunRecord before = createRun(queuedRun("before", "team-a", T0));
        RunRecord broken = createRun(queuedRun("broken", "team-a", T0.plusSeconds(1)));
        RunRecord after = createRun(queuedRun("after", "team-a", T0.plusSeconds(2)));
        sql("UPDATE runs SET " + damage + " WHERE id = '" + broken.id() + "'");

        assertThat(store.runs().active()).extracting(RunRecord::id).containsExactly(before.id(), after.id());
        RunQuery all = new RunQuery(null, null, null, Set.of(), 10, null);
        assertThat(store.runs().list(all)).extracting(RunRecord::id).containsExactly(after.id(), before.id());
        assertThat(store.runs().rows(all)).extracting(RunRow::id).containsExactly(after.id(), broken.id(), before.id());
        assertThat(store.runs().rows(all).get(1)).isInstanceOfSatisfying(RunRow.Unreadable.class, row -> {
            assertThat(row.workspace()).isEqualTo("team-a");
            assertThat(row.job()).isEqualTo("broken");
            assertThat(row.createdAt()).isEqualTo(T0.plusSeconds(1));
            assertThat(row.error()).contains(why);
        });
        assertThatThrownBy(() -> store.runs().get(broken.id()))
                .isInstanceOfSatisfying(UnreadableRecordException.class, e -> assertThat(e.record()).isEqualTo("run " + broken.id()))
                .hasMessageContaining("cannot read").hasMessageContaining(why);
        assertThat(store.runs().get(after.id())).isPresent();
        store.write(tx -> tx.updateRun(after.moveTo(RunState.CANCELLED, "Cancelled", T0)));
        assertThat(store.runs().get(after.id()).orElseThrow().state()).isEqualTo(RunState.CANCELLED);
    }

    @Test
    void aStoredFieldThisServerDoesNotKnowIsIgnored() throws Exception {
        RunRecord run = createRun(queuedRun("later", "team-a", T0));
        sql("UPDATE runs SET faults = '{\"failures\":2,\"addedByALaterRelease\":{\"x\":1}}', spec = REPLACE(spec, '\"nodeGroups\"', "
                + "'\"addedLater\":true,\"nodeGroups\"') WHERE id = '" + run.id() + "'");
        RunRecord read = store.runs().get(run.id()).orElseThrow();
        assertThat(read.faults().failures()).isEqualTo(2);
        assertThat(read.spec()).isEqualTo(run.spec());
    }

    @Test
    void anUnreadableFinishedRunIsLeftOutOfRetention() throws Exception {
        RunRecord a = createRun(queuedRun("a", "team-a", T0));
        RunRecord b = createRun(queuedRun("b", "team-a", T0));
        store.write(tx -> tx.updateRun(a.moveTo(RunState.CANCELLED, "Cancelled", T0)));
        store.write(tx -> tx.updateRun(b.moveTo(RunState.CANCELLED, "Cancelled", T0)));
        sql("UPDATE runs SET spec = '" + UNBINDABLE_SPEC + "' WHERE id = '" + b.id() + "'");
        assertThat(store.runs().finishedBefore(T0.plusSeconds(1), 10)).extracting(RunRecord::id).containsExactly(a.id());
    }

    @Test
    void anUnreadableDocumentIsLeftOutOfListsAndNamedWhenLookedUp() throws Exception {
        store.write(tx -> tx.createDocument(workspace("team-a", "alice"), T0));
        store.write(tx -> tx.createDocument(workspace("team-b", "bob"), T0));
        store.write(tx -> tx.createDocument(workspace("team-c", "carol"), T0));
        sql("UPDATE documents SET body = '{\"apiVersion\":\"slipstream/v1\",\"kind\":\"Workspace\",\"metadata\":{\"name\":\"team-b\"},"
                + "\"spec\":{\"members\":{\"bob\":1}}}' WHERE name = 'team-b'");
        assertThat(store.documents().list(Kind.Workspace, null)).extracting(d -> d.document().name()).containsExactly("team-a", "team-c");
        assertThatThrownBy(() -> store.documents().get(Kind.Workspace, null, "team-b"))
                .isInstanceOfSatisfying(UnreadableRecordException.class, e -> assertThat(e.record()).isEqualTo("Workspace team-b"))
                .hasMessageContaining("members");
        sql("UPDATE documents SET schema_version = 99 WHERE name = 'team-c'");
        assertThatThrownBy(() -> store.documents().get(Kind.Workspace, null, "team-c"))
                .hasMessageContaining("Workspace team-c").hasMessageContaining("format version 99, newer than this server knows");
    }

}
