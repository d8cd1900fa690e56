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
public abstract class BaseStoreContractTest implements UsageContract {
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
        return store.createRun(run, RunEvent.of(run.id(), run.createdAt(), EventType.StateChanged, "QUEUED", "Submitted", null, null));
    }

    // --- leadership ---

    private static final java.time.Duration TTL = java.time.Duration.ofSeconds(10);

    @Test
    void theFirstClaimLeadsAtEpochOneAndRenewalsKeepTheEpoch() {
        assertThat(store.leadership()).isEmpty();
        Leadership first = store.claimLeadership("a", T0, TTL);
        assertThat(first).isEqualTo(new Leadership("a", 1, T0, T0.plus(TTL)));
        Leadership renewed = store.claimLeadership("a", T0.plusSeconds(3), TTL);
        assertThat(renewed.epoch()).isEqualTo(1);
        assertThat(renewed.expiresAt()).isEqualTo(T0.plusSeconds(13));
        assertThat(store.leadership()).contains(renewed);
        // late, after its own lease expired: the same leader, but at a new epoch (what it did meanwhile is fenced)
        assertThat(store.claimLeadership("a", T0.plusSeconds(30), TTL)).isEqualTo(new Leadership("a", 2, T0.plusSeconds(30), T0.plusSeconds(40)));
    }

    @Test
    void anotherHolderWaitsForTheLeaseThenTakesOverAtTheNextEpoch() {
        store.claimLeadership("a", T0, TTL);
        Leadership seen = store.claimLeadership("b", T0.plusSeconds(5), TTL);
        if (singleProcess()) {
            assertThat(seen).as("whoever held a single-process store is gone").isEqualTo(new Leadership("b", 2, T0.plusSeconds(5), T0.plusSeconds(15)));
            return;
        }
        assertThat(seen.holder()).isEqualTo("a");
        assertThat(seen.epoch()).isEqualTo(1);
        Leadership taken = store.claimLeadership("b", T0.plus(TTL), TTL);
        assertThat(taken).isEqualTo(new Leadership("b", 2, T0.plus(TTL), T0.plus(TTL).plus(TTL)));
        assertThat(store.claimLeadership("a", T0.plus(TTL).plusSeconds(1), TTL)).as("the old leader does not get it back").isEqualTo(taken);
    }

    @Test
    void theLeaseOfAHolderKnownToBeGoneIsTakenAtOnce() {
        store.claimLeadership("a", T0, TTL);
        if (!singleProcess()) {
            assertThat(store.claimLeadership("b", "someone-else", T0.plusSeconds(1), TTL).holder()).as("only the one named gone").isEqualTo("a");
        }
        Leadership taken = store.claimLeadership("b", "a", T0.plusSeconds(2), TTL);
        assertThat(taken).isEqualTo(new Leadership("b", 2, T0.plusSeconds(2), T0.plusSeconds(12)));
        assertThat(store.claimLeadership("c", "a", T0.plusSeconds(3), TTL).holder()).as("a is gone, but b leads now")
                .isEqualTo(singleProcess() ? "c" : "b");
    }

    @Test
    void aLeaderMovesItsEpochPastOneAnExecutorWasFencedAt() {
        store.claimLeadership("a", T0, TTL);
        assertThat(store.advanceEpoch("b", 1, 7).epoch()).as("not b's").isEqualTo(1);
        assertThat(store.advanceEpoch("a", 2, 7).epoch()).as("not at the epoch a leads at").isEqualTo(1);
        Leadership moved = store.advanceEpoch("a", 1, 7);
        assertThat(moved).isEqualTo(new Leadership("a", 8, T0, T0.plus(TTL)));
        assertThat(store.leadership()).contains(moved);
        assertThat(store.claimLeadership("a", T0.plusSeconds(1), TTL).epoch()).as("renewals keep it").isEqualTo(8);
    }

    /**
     * A leader's renewal does not queue behind its own fenced writes (under load, one was always open, and renewals
     * waited out the lock timeout): the lease and the fence are apart. A takeover still waits for them, so that nothing
     * the old epoch's open transaction writes lands after the new epoch began. Where one write runs at a time, the
     * renewal waits for the open one, and renews once it ends.
     */
    @Test
    void aRenewalDoesNotWaitForTheLeadersOpenFencedTransactionButATakeoverDoes() throws Exception {
        long epoch = store.claimLeadership("a", T0, TTL).epoch();
        try (OpenTransaction write = OpenTransaction.open(new FencedStore(store, epoch), tx -> tx.createDocument(workspace("team-a"), T0), tx -> { })) {
            Future<Leadership> renewal = write.meanwhile(() -> store.claimLeadership("a", T0.plusSeconds(3), TTL));
            if (oneWriterAtATime()) {
                write.finish();
            }
            assertThat(renewal.get(30, TimeUnit.SECONDS)).as("renewed while the fenced transaction is open")
                    .isEqualTo(new Leadership("a", epoch, T0.plusSeconds(3), T0.plusSeconds(13)));
            assertThat(store.leadership()).contains(new Leadership("a", epoch, T0.plusSeconds(3), T0.plusSeconds(13)));
            if (!oneWriterAtATime()) {
                assertThat(write.isDone()).as("the fenced transaction is still open").isFalse();
                write.finish();
            }

            Leadership taken = store.claimLeadership("b", T0.plusSeconds(13), TTL);
            assertThat(taken).isEqualTo(new Leadership("b", epoch + 1, T0.plusSeconds(13), T0.plusSeconds(23)));
            assertThat(store.listDocuments(Kind.Workspace, null)).extracting(d -> d.document().name()).containsExactly("team-a");
            assertThatThrownBy(() -> new FencedStore(store, epoch).createDocument(workspace("team-b"), T0)).isInstanceOf(FencedException.class);
        }
    }

    /**
     * A takeover cannot begin while a transaction of the old epoch is open: it waits for it, and gives up (to try again
     * later, nothing changed) when that takes longer than the store's lock timeout.
     */
    @Test
    void aTakeoverCannotBeginWhileATransactionOfTheOldEpochIsOpen() throws Exception {
        long epoch = store.claimLeadership("a", T0, TTL).epoch();
        try (OpenTransaction write = OpenTransaction.open(new FencedStore(store, epoch), tx -> tx.requireLeader(epoch),
                tx -> tx.createDocument(workspace("team-a"), T0))) {
            Future<Leadership> takeover = write.meanwhile(() -> store.claimLeadership("b", T0.plusSeconds(10), TTL));
            assertThatThrownBy(() -> takeover.get(60, TimeUnit.SECONDS)).as("no takeover while the old epoch writes")
                    .isInstanceOf(java.util.concurrent.ExecutionException.class);
            assertThat(store.leadership()).as("the failed takeover changed nothing").contains(new Leadership("a", epoch, T0, T0.plus(TTL)));

            write.finish();
            assertThat(store.claimLeadership("b", T0.plusSeconds(10), TTL)).isEqualTo(new Leadership("b", epoch + 1, T0.plusSeconds(10), T0.plusSeconds(20)));
            assertThat(store.listDocuments(Kind.Workspace, null)).extracting(d -> d.document().name()).containsExactly("team-a");
        }
    }

    /**
     * A build before V14 moves only the lease's epoch (a downgrade, then this build again): such a lease is never
     * renewed as it is, since its holder could not write at it, but taken at an epoch past both.
     */
    @Test
    void aLeaseWhoseEpochIsNotTheFencesIsTakenPastBoth() throws Exception {
        store.claimLeadership("a", T0, TTL);
        sql("UPDATE leadership SET epoch = 4"); // an older build's takeover by a itself, the fence left at 1
        Leadership again = store.claimLeadership("a", T0.plusSeconds(1), TTL);
        assertThat(again).isEqualTo(new Leadership("a", 5, T0.plusSeconds(1), T0.plusSeconds(11)));
        new FencedStore(store, 5).createDocument(workspace("team-a"), T0);

        sql("UPDATE leadership SET holder = 'old', epoch = 6"); // an older build leads, its lease not expired
        Leadership seen = store.claimLeadership("b", T0.plusSeconds(2), TTL);
        if (!singleProcess()) {
            assertThat(seen.holder()).as("its lease is waited out").isEqualTo("old");
            seen = store.claimLeadership("b", T0.plusSeconds(11), TTL);
        }
        assertThat(seen.holder()).isEqualTo("b");
        assertThat(seen.epoch()).isEqualTo(7);
        new FencedStore(store, 7).createDocument(workspace("team-b"), T0);
        assertThatThrownBy(() -> new FencedStore(store, 5).createDocument(workspace("team-c"), T0)).isInstanceOf(FencedException.class);
        assertThatThrownBy(() -> new FencedStore(store, 6).createDocument(workspace("team-c"), T0)).isInstanceOf(FencedException.class);
    }

    /** A fence left without its lease (the lease's row deleted by hand) is never gone back past. */
    @Test
    void aFirstClaimOverAFenceLeftWithoutItsLeaseStartsPastIt() throws Exception {
        store.claimLeadership("a", T0, TTL);
        store.releaseLeadership("a", 1, T0.plusSeconds(1));
        store.claimLeadership("b", T0.plusSeconds(2), TTL); // epoch 2
        sql("DELETE FROM leadership");
        Leadership first = store.claimLeadership("c", T0.plusSeconds(3), TTL);
        assertThat(first).isEqualTo(new Leadership("c", 3, T0.plusSeconds(3), T0.plusSeconds(13)));
        assertThatThrownBy(() -> new FencedStore(store, 1).createDocument(workspace("team-a"), T0)).isInstanceOf(FencedException.class);
        new FencedStore(store, 3).createDocument(workspace("team-a"), T0);
    }

    /**
     * A write that waits for another transaction's row past the store's lock timeout fails as {@link
     * StoreUnavailableException} (the API's 503, to be tried again), not as an error of its own (a 500 in ChaosIT,
     * from H2's lock timeout while a crash loop loaded the machine). Nothing of it is written.
     */
    @Test
    void aWriteThatWaitsOutTheLockTimeoutFailsAsUnavailableAndWritesNothing() throws Exception {
        try (OpenTransaction holder = OpenTransaction.open(store, tx -> tx.createDocument(workspace("team-a"), T0), tx -> { })) {
            Future<?> waiting = holder.meanwhile(() -> store.createDocument(workspace("team-a"), T0.plusSeconds(1)));
            assertThatThrownBy(() -> waiting.get(60, TimeUnit.SECONDS)).isInstanceOf(java.util.concurrent.ExecutionException.class)
                    .cause().isInstanceOf(StoreUnavailableException.class);
            holder.finish();
            assertThat(store.getDocument(Kind.Workspace, null, "team-a")).hasValueSatisfying(d -> assertThat(d.createdAt()).isEqualTo(T0));
        }
    }

    /** Reads never wait for a write transaction, not even where writes run one at a time; they see what was committed. */
    @Test
    void aReadDoesNotWaitForAnOpenWriteTransaction() throws Exception {
        store.createDocument(workspace("team-a"), T0);
        try (OpenTransaction write = OpenTransaction.open(store, tx -> tx.createDocument(workspace("team-b"), T0), tx -> { })) {
            Future<List<StoredDocument>> read = write.meanwhile(() -> store.listDocuments(Kind.Workspace, null));
            assertThat(read.get(30, TimeUnit.SECONDS)).extracting(d -> d.document().name()).containsExactly("team-a");
            assertThat(write.isDone()).as("the write transaction is still open").isFalse();
        }
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

        public static OpenTransaction open(Store on, java.util.function.Consumer<Store> before, java.util.function.Consumer<Store> after) throws InterruptedException {
            OpenTransaction open = new OpenTransaction();
            open.work = open.threads.submit(() -> on.inTransaction(tx -> {
                before.accept(tx);
                open.opened.countDown();
                await(open.finish);
                after.accept(tx);
                return null;
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
        store.claimLeadership("a", T0, TTL);
        store.releaseLeadership("b", 1, T0.plusSeconds(1)); // not b's to release
        if (!singleProcess()) {
            assertThat(store.claimLeadership("b", T0.plusSeconds(2), TTL).holder()).isEqualTo("a");
        }
        store.releaseLeadership("a", store.leadership().orElseThrow().epoch(), T0.plusSeconds(3));
        Leadership taken = store.claimLeadership("b", T0.plusSeconds(3), TTL);
        assertThat(taken.holder()).isEqualTo("b");
    }

    @Test
    void writesOfAFencedLeaderAreRefusedAndWriteNothing() {
        long old = store.claimLeadership("a", T0, TTL).epoch();
        Store leader = new FencedStore(store, old);
        leader.createDocument(workspace("team-a"), T0);
        long next = store.claimLeadership("b", T0.plus(TTL), TTL).epoch();
        assertThat(next).isEqualTo(old + 1);

        assertThatThrownBy(() -> leader.createDocument(workspace("team-b"), T0)).isInstanceOf(FencedException.class);
        assertThatThrownBy(() -> leader.inTransaction(tx -> tx.createDocument(workspace("team-c"), T0))).isInstanceOf(FencedException.class);
        assertThatThrownBy(() -> leader.requireLeader(old)).isInstanceOf(FencedException.class);
        assertThat(leader.getDocument(Kind.Workspace, null, "team-a")).as("reads still work").isPresent();
        assertThat(store.listDocuments(Kind.Workspace, null)).extracting(d -> d.document().name()).containsExactly("team-a");

        Store successor = new FencedStore(store, next);
        successor.createDocument(workspace("team-d"), T0);
        successor.inTransaction(tx -> {
            tx.requireLeader(next);
            return tx.createDocument(workspace("team-e"), T0);
        });
        assertThat(store.listDocuments(Kind.Workspace, null)).hasSize(3);
    }

    /** A transaction that found the leader at its epoch need not look again; another epoch is refused all the same. */
    @Test
    void aTransactionThatPassedTheFenceStillRefusesAnotherEpoch() {
        long epoch = store.claimLeadership("a", T0, TTL).epoch();
        store.inTransaction(tx -> {
            tx.requireLeader(epoch);
            tx.requireLeader(epoch);
            assertThatThrownBy(() -> tx.requireLeader(epoch + 1)).isInstanceOf(FencedException.class);
            assertThatThrownBy(() -> tx.requireLeader(epoch - 1)).isInstanceOf(FencedException.class);
            return null;
        });
        long next = store.inTransaction(tx -> {
            tx.requireLeader(epoch);
            long moved = tx.advanceEpoch("a", epoch, epoch).epoch();
            assertThatThrownBy(() -> tx.requireLeader(epoch)).as("the epoch moved in this transaction").isInstanceOf(FencedException.class);
            tx.requireLeader(moved);
            return moved;
        });
        store.inTransaction(tx -> {
            tx.requireLeader(next);
            assertThatThrownBy(() -> tx.requireLeader(epoch)).isInstanceOf(FencedException.class);
            return null;
        });
    }

    @Test
    void aFencedStoreBeforeAnyLeaderIsRefused() {
        assertThatThrownBy(() -> new FencedStore(store, 1).createDocument(workspace("team-a"), T0)).isInstanceOf(FencedException.class);
    }

    @Test
    void aReachableStoreAnswersPing() {
        store.ping();
        store.inTransaction(tx -> {
            tx.ping();
            return null;
        });
    }

    @Test
    void documentsAreCreatedReadAndListedWithVersions() {
        StoredDocument created = store.createDocument(workspace("team-a", "alice"), T0);
        assertThat(created.version()).isEqualTo(1);
        store.createDocument(workspace("team-b", "bob", "alice"), T0);
        Document<ShapeSpec> shape = new Document<>(ObjectMeta.of("gpu.8x.sim", null), new ShapeSpec(new Resources(32000, 256L << 30, 8, "sim-gpu")));
        store.createDocument(shape, T0);

        StoredDocument read = store.getDocument(Kind.Workspace, null, "team-a").orElseThrow();
        assertThat(read.document()).isEqualTo(workspace("team-a", "alice"));
        assertThat(read.createdAt()).isEqualTo(T0);
        assertThat(store.getDocument(Kind.Shape, null, "gpu.8x.sim").orElseThrow().document()).isEqualTo(shape);
        assertThat(store.listDocuments(Kind.Workspace, null)).extracting(d -> d.document().name()).containsExactly("team-a", "team-b");
        assertThat(store.listDocuments(Kind.Workspace, Set.of("team-b"))).hasSize(1);
        assertThat(store.listDocuments(Kind.Workspace, Set.of())).isEmpty();
        assertThat(store.getDocument(Kind.Workspace, null, "nope")).isEmpty();
    }

    @Test
    void creatingAnExistingDocumentConflicts() {
        store.createDocument(workspace("team-a"), T0);
        assertThatThrownBy(() -> store.createDocument(workspace("team-a"), T0)).isInstanceOf(ConflictException.class);
    }

    @Test
    void concurrentCreatesOfOneDocumentLetExactlyOneWin() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Callable<Boolean>> attempts = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                attempts.add(() -> {
                    try {
                        store.createDocument(workspace("raced", "alice"), T0);
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
            assertThat(store.workspacesOf("alice")).containsExactly("raced");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void documentUpdatesAreCompareAndSet() {
        store.createDocument(workspace("team-a", "alice"), T0);
        StoredDocument updated = store.updateDocument(workspace("team-a", "alice", "bob"), 1, T0.plusSeconds(5));
        assertThat(updated.version()).isEqualTo(2);
        assertThat(updated.updatedAt()).isEqualTo(T0.plusSeconds(5));
        assertThat(updated.createdAt()).isEqualTo(T0);
        assertThatThrownBy(() -> store.updateDocument(workspace("team-a"), 1, T0)).isInstanceOf(ConflictException.class);
        assertThat(store.getDocument(Kind.Workspace, null, "team-a").orElseThrow().document()).isEqualTo(workspace("team-a", "alice", "bob"));
        assertThatThrownBy(() -> store.deleteDocument(Kind.Workspace, null, "team-a", 1)).isInstanceOf(ConflictException.class);
        store.deleteDocument(Kind.Workspace, null, "team-a", 2);
        assertThat(store.getDocument(Kind.Workspace, null, "team-a")).isEmpty();
    }

    @Test
    void membershipFollowsWorkspaceDocuments() {
        store.createDocument(workspace("team-a", "alice"), T0);
        store.createDocument(workspace("team-b", "alice", "bob"), T0);
        assertThat(store.workspacesOf("alice")).containsExactly("team-a", "team-b");
        store.updateDocument(workspace("team-b", "bob"), 1, T0);
        assertThat(store.workspacesOf("alice")).containsExactly("team-a");
        assertThat(store.workspacesOf("bob")).containsExactly("team-b");
        store.deleteDocument(Kind.Workspace, null, "team-b", 2);
        assertThat(store.workspacesOf("bob")).isEmpty();
    }

    @Test
    void aFailedTransactionLeavesNothingBehind() {
        assertThatThrownBy(() -> store.inTransaction(tx -> {
            tx.createDocument(workspace("team-a", "alice"), T0);
            tx.createDocument(workspace("team-a"), T0); // conflicts: the whole transaction rolls back
            return null;
        })).isInstanceOf(ConflictException.class);
        assertThat(store.getDocument(Kind.Workspace, null, "team-a")).isEmpty();
        assertThat(store.workspacesOf("alice")).isEmpty();
    }

    @Test
    void tokensAreFoundByHashAndRevoked() {
        TokenRecord token = new TokenRecord("tok-1", "ab".repeat(32), "alice", false, "laptop", T0, T0.plus(Duration.ofDays(1)), null);
        store.createToken(token);
        assertThat(store.findTokenByHash("ab".repeat(32))).contains(token);
        assertThat(store.findTokenByHash("cd".repeat(32))).isEmpty();
        assertThat(store.hasAdminToken(T0)).isFalse();
        store.createToken(new TokenRecord("tok-2", "ef".repeat(32), "admin", true, null, T0, null, null));
        assertThat(store.hasAdminToken(T0)).isTrue();
        assertThat(store.revokeToken("tok-2", T0.plusSeconds(1))).isTrue();
        assertThat(store.revokeToken("tok-2", T0.plusSeconds(2))).isFalse();
        assertThat(store.hasAdminToken(T0.plusSeconds(3))).isFalse();
        assertThat(store.listTokens()).extracting(TokenRecord::id).containsExactly("tok-1", "tok-2");
    }

    @Test
    void aTokensUseIsRecordedAtMostOncePerIntervalAndOldHashesAreUpgradedByCompareAndSet() {
        store.createToken(new TokenRecord("tok-old", "0a".repeat(32), TokenRecord.SHA256, "alice", false, null, T0, null, null, null));
        assertThat(store.findTokenByHash("0a".repeat(32))).get().extracting(TokenRecord::hashScheme).isEqualTo(TokenRecord.SHA256);
        assertThat(store.rehashToken("tok-old", "ff".repeat(32), "1b".repeat(32), TokenRecord.HMAC_SHA256)).as("not the stored hash").isFalse();
        assertThat(store.rehashToken("tok-old", "0a".repeat(32), "1b".repeat(32), TokenRecord.HMAC_SHA256)).isTrue();
        assertThat(store.findTokenByHash("0a".repeat(32))).isEmpty();
        TokenRecord upgraded = store.findTokenByHash("1b".repeat(32)).orElseThrow();
        assertThat(upgraded.hashScheme()).isEqualTo(TokenRecord.HMAC_SHA256);
        assertThat(upgraded.lastUsedAt()).isNull();

        Instant used = T0.plusSeconds(10);
        assertThat(store.recordTokenUse("tok-old", used, used.minusSeconds(60))).isTrue();
        assertThat(store.recordTokenUse("tok-old", used.plusSeconds(30), used.plusSeconds(30).minusSeconds(60))).as("within a minute").isFalse();
        assertThat(store.findTokenByHash("1b".repeat(32)).orElseThrow().lastUsedAt()).isEqualTo(used);
        assertThat(store.recordTokenUse("tok-old", used.plusSeconds(61), used.plusSeconds(1))).isTrue();
        assertThat(store.listTokens()).singleElement().extracting(TokenRecord::lastUsedAt).isEqualTo(used.plusSeconds(61));
        assertThat(store.recordTokenUse("tok-none", used, used)).isFalse();
    }

    @Test
    void secretsKeepTheirSealedValuesAndChangeByCompareAndSet() {
        SecretRecord secret = new SecretRecord("team-a", "hf", "k1", Map.of("token", "c2VhbGVk", "user", "b3RoZXI="), 0, T0, T0);
        SecretRecord created = store.createSecret(secret);
        assertThat(created.version()).isEqualTo(1);
        assertThat(store.getSecret("team-a", "hf")).contains(created);
        assertThat(created.keys()).containsExactly("token", "user");
        assertThatThrownBy(() -> store.createSecret(secret)).isInstanceOf(ConflictException.class);
        store.createSecret(new SecretRecord("team-b", "hf", "k1", Map.of(), 0, T0, T0));
        store.createSecret(new SecretRecord("team-a", "db", "k1", Map.of("password", "eA=="), 0, T0, T0));

        assertThat(store.listSecrets(null)).extracting(s -> s.workspace() + "/" + s.name()).containsExactly("team-a/db", "team-a/hf", "team-b/hf");
        assertThat(store.listSecrets(Set.of("team-b"))).extracting(SecretRecord::name).containsExactly("hf");
        assertThat(store.listSecrets(Set.of())).isEmpty();

        SecretRecord changed = store.updateSecret(created.withSealed("k2", Map.of("token", "bmV3"), T0.plusSeconds(5)));
        assertThat(changed.version()).isEqualTo(2);
        assertThat(store.getSecret("team-a", "hf")).contains(changed);
        assertThat(changed.keyId()).isEqualTo("k2");
        assertThat(changed.createdAt()).isEqualTo(T0);
        assertThat(changed.updatedAt()).isEqualTo(T0.plusSeconds(5));
        assertThatThrownBy(() -> store.updateSecret(created)).as("stale version").isInstanceOf(ConflictException.class);
        assertThatThrownBy(() -> store.deleteSecret("team-a", "hf", 1)).isInstanceOf(ConflictException.class);
        store.deleteSecret("team-a", "hf", 2);
        assertThat(store.getSecret("team-a", "hf")).isEmpty();
        assertThat(store.getSecret("team-b", "hf")).isPresent();
    }

    @Test
    void aSecretIsNeverStoredAsADocument() {
        var secret = new Document<>(ObjectMeta.of("hf", "team-a"),
                new io.slipstream.api.spec.SecretSpec(Map.of("token", io.slipstream.api.spec.SecretValue.of("hf_clear"))));
        assertThatThrownBy(() -> store.createDocument(secret, T0)).isInstanceOf(IllegalArgumentException.class);
        assertThat(store.listDocuments(Kind.Secret, null)).isEmpty();
    }

    @Test
    void serverKeysAreRegisteredOnceAndMovedByCompareAndSet() {
        assertThat(store.serverKeyId("secrets")).isEmpty();
        store.registerServerKey("secrets", "k1", T0);
        assertThatThrownBy(() -> store.registerServerKey("secrets", "k9", T0)).isInstanceOf(ConflictException.class);
        store.registerServerKey("tokens", "p1", T0);
        assertThat(store.serverKeyId("secrets")).contains("k1");
        assertThatThrownBy(() -> store.replaceServerKey("secrets", "k0", "k2", T0)).isInstanceOf(ConflictException.class);
        store.replaceServerKey("secrets", "k1", "k2", T0.plusSeconds(1));
        assertThat(store.serverKeyId("secrets")).contains("k2");
        assertThat(store.serverKeyId("tokens")).contains("p1");
    }

    @Test
    void runsRoundTripExactly() {
        RunRecord run = queuedRun("train", "team-a", T0);
        RunRecord stored = createRun(run);
        assertThat(stored.version()).isEqualTo(1);
        assertThat(store.getRun(run.id())).contains(stored);
        assertThat(store.activeRuns()).containsExactly(stored);
        assertThat(store.eventsOf(run.id(), 0, 10)).singleElement().satisfies(e -> assertThat(e.reason()).isEqualTo("Submitted"));
        assertThat(store.getRun(new RunId("nope-12345678"))).isEmpty();
    }

    @Test
    void runUpdatesAreCompareAndSet() {
        RunRecord stored = createRun(queuedRun("train", "team-a", T0));
        RunRecord starting = store.updateRun(stored.moveTo(RunState.STARTING, "Admitted", T0.plusSeconds(1)));
        assertThat(starting.version()).isEqualTo(2);
        assertThatThrownBy(() -> store.updateRun(stored.moveTo(RunState.CANCELLED, "Cancelled", T0))).isInstanceOf(ConflictException.class);
        RunRecord running = store.updateRun(starting.moveTo(RunState.RUNNING, "AllInstancesRunning", T0.plusSeconds(2)));
        RunRecord done = store.updateRun(running.moveTo(RunState.SUCCEEDED, "AllInstancesSucceeded", T0.plusSeconds(3)));
        assertThat(store.getRun(stored.id())).contains(done);
        assertThat(done.startedAt()).isEqualTo(T0.plusSeconds(2));
        assertThat(done.finishedAt()).isEqualTo(T0.plusSeconds(3));
        assertThat(store.activeRuns()).isEmpty();
    }

    @Test
    void aPreemptedRunRoundTripsWithWhereItRanAndWhomItMakesRoomFor() {
        RunRecord stored = createRun(queuedRun("borrow", "team-a", T0));
        RunRecord admitted = store.updateRun(stored.admitted(io.slipstream.api.run.RealTimeResources.NotInQuota, "Admitted", T0));
        RunRecord preempting = store.updateRun(admitted.preempting(new RunId("owner-12345678"), "Reclaimed"));
        assertThat(store.getRun(stored.id())).contains(preempting);
        assertThat(preempting.outcome()).isEqualTo(RunState.QUEUED);
        RunRecord requeued = store.updateRun(preempting.requeued("Preempted", T0.plusSeconds(5)));
        assertThat(store.getRun(stored.id())).contains(requeued);
        assertThat(requeued.attempt()).isEqualTo(2);
        assertThat(requeued.preemptions()).isEqualTo(1);
        assertThat(requeued.realTimeResources()).isNull();
        assertThat(store.activeRuns()).contains(requeued);
    }

    @Test
    void aRestartedRunRoundTripsWithItsFaultRecord() {
        RunRecord stored = createRun(queuedRun("flaky", "team-a", T0));
        RunRecord admitted = store.updateRun(stored.admitted(io.slipstream.api.run.RealTimeResources.InQuota, "Admitted", T0));
        RunRecord progressed = store.updateRun(admitted.withFaults(admitted.faults().failedWith("exit code 1")
                .progressed(1200L, T0.plusSeconds(60), 1000L, T0.plusSeconds(50))));
        RunRecord restarting = store.updateRun(progressed.restarting(FaultState.RestartCause.FAILURE, "InstanceFailed: w-0"));
        assertThat(store.getRun(stored.id())).contains(restarting);
        assertThat(restarting.restartCause()).isEqualTo(FaultState.RestartCause.FAILURE);

        RunRecord requeued = store.updateRun(restarting.withFaults(restarting.faults().lost(20_000))
                .requeued("Restarted", T0.plusSeconds(70), T0.plusSeconds(80)));
        assertThat(store.getRun(stored.id())).contains(requeued);
        assertThat(requeued.faults()).isEqualTo(new FaultState(1, 0, 0, 0, "exit code 1", 1, null, T0.plusSeconds(80), 1000L,
                T0.plusSeconds(50), 1200L, T0.plusSeconds(60), 20_000));
        assertThat(requeued.preemptions()).as("a failure is not a preemption").isZero();
        assertThat(requeued.attempt()).isEqualTo(2);
    }

    @Test
    void nodesAreDeclaredDownOnceAndUpAgain() {
        assertThat(store.downNodes()).isEmpty();
        store.markNodeDown(new NodeDown("node-2", "disk failure", T0));
        store.markNodeDown(new NodeDown("node-2", "again", T0.plusSeconds(5)));
        store.markNodeDown(new NodeDown("node-1", "maintenance", T0.plusSeconds(9)));
        assertThat(store.downNodes()).containsOnlyKeys("node-1", "node-2");
        assertThat(store.downNodes().get("node-2")).isEqualTo(new NodeDown("node-2", "disk failure", T0));
        assertThat(store.markNodeUp("node-2")).isTrue();
        assertThat(store.markNodeUp("node-2")).isFalse();
        assertThat(store.downNodes()).containsOnlyKeys("node-1");
    }

    @Test
    void aRunsOriginRoundTripsAndItsIdempotencyKeyIsUniquePerWorkspace() {
        JobSpec spec = aJob("keyed").spec();
        RunOrigin origin = new RunOrigin(Map.of("nodeGroups.main.replicas", "4"), T0.minusSeconds(60), "key-1", "alice");
        RunRecord first = createRun(RunRecord.queued(RunId.newFor("keyed"), "team-a", "keyed", 1, spec, origin, T0));
        assertThat(store.getRun(first.id()).orElseThrow().origin()).isEqualTo(origin);
        assertThat(store.findRunByIdempotencyKey("team-a", "key-1")).contains(first);
        assertThat(store.findRunByIdempotencyKey("team-b", "key-1")).isEmpty();
        assertThatThrownBy(() -> createRun(RunRecord.queued(RunId.newFor("keyed"), "team-a", "keyed", 1, spec, origin, T0)))
                .isInstanceOf(ConflictException.class);
        createRun(RunRecord.queued(RunId.newFor("keyed"), "team-b", "keyed", 1, spec, origin, T0)); // another workspace: fine
        store.releaseIdempotencyKey(first.id());
        assertThat(store.findRunByIdempotencyKey("team-a", "key-1")).isEmpty();
        createRun(RunRecord.queued(RunId.newFor("keyed"), "team-a", "keyed", 1, spec, origin, T0)); // the key is free again
    }

    @Test
    void finishedRunsCanBeFoundByAgeAndDeletedButActiveOnesCannot() {
        RunRecord old = createRun(queuedRun("old", "team-a", T0));
        RunRecord done = store.updateRun(old.moveTo(RunState.CANCELLED, "Cancelled", T0.plusSeconds(10)));
        store.createInstances(List.of(InstanceRecord.pending(new InstanceId(old.id(), 1, 0), "main", 0, "node-1", List.of())));
        RunRecord active = createRun(queuedRun("active", "team-a", T0));
        assertThat(store.finishedBefore(T0.plusSeconds(11), 10)).containsExactly(done);
        assertThat(store.finishedBefore(T0.plusSeconds(10), 10)).isEmpty();
        assertThatThrownBy(() -> store.deleteRun(active.id())).isInstanceOf(ConflictException.class);
        store.deleteRun(old.id());
        assertThat(store.getRun(old.id())).isEmpty();
        assertThat(store.instancesOf(old.id())).isEmpty();
        assertThat(store.eventsOf(old.id(), 0, 10)).isEmpty();
        assertThat(store.getRun(active.id())).isPresent();
    }

    @Test
    void aScheduleMovesForwardByCompareAndSet() {
        assertThat(store.lastScheduled("team-a", "nightly")).isEmpty();
        store.recordScheduled("team-a", "nightly", null, T0);
        assertThatThrownBy(() -> store.recordScheduled("team-a", "nightly", null, T0)).isInstanceOf(ConflictException.class);
        store.recordScheduled("team-a", "nightly", T0, T0.plusSeconds(60));
        assertThatThrownBy(() -> store.recordScheduled("team-a", "nightly", T0, T0.plusSeconds(120))).isInstanceOf(ConflictException.class);
        assertThat(store.lastScheduled("team-a", "nightly")).contains(T0.plusSeconds(60));
        assertThatThrownBy(() -> store.recordScheduled("team-a", "nightly", T0.plusSeconds(60), T0)).as("never backwards")
                .isInstanceOf(ConflictException.class);
    }

    @Test
    void deletingAJobForgetsItsSchedule() {
        StoredDocument job = store.createDocument(aJob("nightly").workspace("team-a").build(), T0);
        store.recordScheduled("team-a", "nightly", null, T0);
        store.deleteDocument(Kind.Job, "team-a", "nightly", job.version());
        assertThat(store.lastScheduled("team-a", "nightly")).isEmpty();
    }

    @Test
    void runtimeCountsRunningAttemptsOnly() {
        RunRecord queued = createRun(queuedRun("timed", "team-a", T0));
        RunRecord running = store.updateRun(store.updateRun(queued.admitted(io.slipstream.api.run.RealTimeResources.NotInQuota, "Admitted", T0.plusSeconds(100)))
                .moveTo(RunState.RUNNING, "Running", T0.plusSeconds(100)));
        assertThat(running.runtime(T0.plusSeconds(130))).isEqualTo(Duration.ofSeconds(30));
        RunRecord requeued = store.updateRun(store.updateRun(running.preempting(new RunId("owner-12345678"), "Reclaimed"))
                .requeued("Preempted", T0.plusSeconds(140)));
        assertThat(requeued.runtime(T0.plusSeconds(500))).isEqualTo(Duration.ofSeconds(40));
        assertThat(store.getRun(queued.id()).orElseThrow().priorRuntimeMillis()).isEqualTo(40_000);
    }

    @Test
    void runsAreListedNewestFirstWithFiltersAndCursor() {
        List<RunRecord> runs = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            runs.add(createRun(queuedRun(i % 2 == 0 ? "even" : "odd", i < 4 ? "team-a" : "team-b", T0.plusSeconds(i))));
        }
        assertThat(store.listRuns(new RunQuery(null, null, null, null, 10, null))).extracting(RunRecord::id)
                .containsExactly(runs.get(4).id(), runs.get(3).id(), runs.get(2).id(), runs.get(1).id(), runs.get(0).id());
        assertThat(store.listRuns(new RunQuery(Set.of("team-b"), null, null, null, 10, null))).extracting(RunRecord::id)
                .containsExactly(runs.get(4).id());
        assertThat(store.listRuns(new RunQuery(Set.of(), null, null, null, 10, null))).isEmpty();
        assertThat(store.listRuns(new RunQuery(null, "team-a", "even", null, 10, null))).extracting(RunRecord::id)
                .containsExactly(runs.get(2).id(), runs.get(0).id());
        assertThat(store.listRuns(new RunQuery(null, null, null, Set.of(RunState.RUNNING), 10, null))).isEmpty();
        assertThat(store.listRuns(new RunQuery(null, null, null, null, T0.plusSeconds(1), T0.plusSeconds(3), 10, null))).extracting(RunRecord::id)
                .containsExactly(runs.get(2).id(), runs.get(1).id());

        List<RunRecord> firstPage = store.listRuns(new RunQuery(null, null, null, null, 2, null));
        RunRecord last = firstPage.get(1);
        List<RunRecord> secondPage = store.listRuns(new RunQuery(null, null, null, null, 2,
                new RunQuery.Cursor(last.createdAt().toEpochMilli(), last.id().value())));
        assertThat(secondPage).extracting(RunRecord::id).containsExactly(runs.get(2).id(), runs.get(1).id());
    }

    private RunRecord labelledRun(String job, Instant createdAt, Map<String, String> labels) {
        RunRecord run = queuedRun(job, "team-a", createdAt);
        return createRun(RunRecord.queued(run.id(), "team-a", job, 1, run.spec(), new RunOrigin(Map.of(), null, null, "alice", labels), createdAt));
    }

    private List<RunId> selected(String selector, int limit, RunQuery.Cursor before) {
        return store.listRuns(new RunQuery(null, null, null, null, null, null, io.slipstream.api.label.LabelSelector.parse(selector), limit, before))
                .stream().map(RunRecord::id).toList();
    }

    @Test
    void runsAreSelectedByLabelsInTheQuerySoPagesAndCursorsStayRight() {
        RunRecord nlp = labelledRun("a", T0, Map.of("team", "nlp", "tier", "gold"));
        RunRecord vision = labelledRun("b", T0.plusSeconds(1), Map.of("team", "vision", "example.com/owner", "ann"));
        RunRecord bare = labelledRun("c", T0.plusSeconds(2), Map.of());
        RunRecord empty = labelledRun("d", T0.plusSeconds(3), Map.of("team", ""));
        assertThat(store.getRun(nlp.id()).orElseThrow().origin().labels()).isEqualTo(Map.of("team", "nlp", "tier", "gold"));
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
        RunRecord last = store.getRun(first.get(1)).orElseThrow();
        assertThat(selected("team", 2, new RunQuery.Cursor(last.createdAt().toEpochMilli(), last.id().value()))).containsExactly(nlp.id());
        // Updates keep the labels; a deleted run takes its labels with it (the same id can be created again, once listed).
        RunRecord cancelled = store.updateRun(nlp.moveTo(RunState.CANCELLED, "Cancelled", T0.plusSeconds(10)));
        assertThat(cancelled.origin().labels()).containsEntry("tier", "gold");
        assertThat(store.getRun(nlp.id()).orElseThrow().origin().labels()).containsEntry("tier", "gold");
        store.deleteRun(nlp.id());
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
        List<InstanceRecord> created = store.createInstances(List.of(first, second));
        assertThat(store.instancesOf(run.id())).containsExactlyElementsOf(created);
        assertThat(store.activeInstances()).hasSize(2);

        InstanceRecord running = store.updateInstance(created.get(0).running(Map.of("pid", "42", "dir", "/x"), T0.plusSeconds(1)));
        running = store.updateInstance(running.ready(T0.plusSeconds(2)));
        assertThat(store.getInstance(first.id()).orElseThrow().readyAt()).isEqualTo(T0.plusSeconds(2));
        assertThat(store.getInstance(first.id()).orElseThrow().endpoint().ports()).containsExactly(41000, 41001);
        assertThatThrownBy(() -> store.updateInstance(created.get(0).running(Map.of(), T0))).isInstanceOf(ConflictException.class);
        InstanceRecord done = store.updateInstance(running.finished(InstanceState.RESOURCE_PREEMPTED, 143, "Preempted", T0.plusSeconds(2)));
        assertThat(store.getInstance(first.id())).contains(done);
        assertThat(done.handle()).containsEntry("pid", "42");
        assertThat(store.activeInstances()).extracting(InstanceRecord::id).containsExactly(second.id());
        assertThat(store.instancesOfActiveRuns()).extracting(InstanceRecord::id).containsExactly(first.id(), second.id());

        RunRecord finished = store.updateRun(store.updateRun(run.moveTo(RunState.STARTING, "Admitted", T0)).moveTo(RunState.FAILED, "x", T0));
        assertThat(finished.state()).isEqualTo(RunState.FAILED);
        assertThat(store.instancesOfActiveRuns()).isEmpty();
    }

    @Test
    void anInstanceRestartedInPlaceKeepsItsPlaceAndCountsItsRestarts() {
        RunRecord run = createRun(queuedRun("train", "team-a", T0));
        InstanceRecord placed = store.createInstances(List.of(InstanceRecord.pending(new InstanceId(run.id(), 1, 2), "worker", 1, "node-2",
                List.of(1)))).get(0);
        assertThat(placed.restarts()).isZero();
        InstanceRecord failed = store.updateInstance(store.updateInstance(placed.running(Map.of("pid", "42"), T0))
                .finished(InstanceState.FAILED, 137, "Exited with code 137", T0.plusSeconds(3)));
        InstanceRecord restarted = store.updateInstance(failed.restartedInPlace());
        assertThat(store.getInstance(placed.id())).contains(restarted);
        assertThat(restarted.restarts()).isEqualTo(1);
        assertThat(restarted.state()).isEqualTo(InstanceState.PENDING);
        assertThat(restarted.handle()).isEmpty();
        assertThat(restarted.exitCode()).isNull();
        assertThat(store.activeInstances()).extracting(InstanceRecord::id).containsExactly(placed.id());
        InstanceRecord again = store.updateInstance(store.updateInstance(restarted.running(Map.of("pid", "43"), T0.plusSeconds(4)))
                .finished(InstanceState.FAILED, 137, "Exited with code 137", T0.plusSeconds(5)).restartedInPlace());
        assertThat(store.instancesOf(run.id())).singleElement().satisfies(i -> assertThat(i.restarts()).isEqualTo(2));
        assertThat(again.node()).isEqualTo("node-2");
    }

    @Test
    void eventsKeepTheirOrder() {
        RunRecord run = createRun(queuedRun("train", "team-a", T0));
        for (int i = 0; i < 5; i++) {
            store.appendEvent(RunEvent.of(run.id(), T0.plusSeconds(i), EventType.InstanceExited, null, "Exited", "code " + i, "main-0"));
        }
        List<RunEvent> events = store.eventsOf(run.id(), 0, 100);
        assertThat(events).hasSize(6);
        assertThat(events).extracting(RunEvent::seq).isSorted().doesNotHaveDuplicates();
        assertThat(store.eventsOf(run.id(), events.get(3).seq(), 2)).extracting(RunEvent::message).containsExactly("code 3", "code 4");
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
                        store.updateRun(run.withCancelRequestedAt(T0.plusSeconds(9)));
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
            assertThat(store.getRun(run.id()).orElseThrow().version()).isEqualTo(2);
        } finally {
            pool.shutdownNow();
        }
    }

    // --- transactions: every kind of write rolls back, commits are atomic and invisible until done ---

    @Test
    void aFailedTransactionUndoesEveryKindOfWriteAndRethrowsTheFailure() {
        RunRecord kept = createRun(queuedRun("kept", "team-a", T0));
        InstanceRecord placed = store.createInstances(List.of(InstanceRecord.pending(new InstanceId(kept.id(), 1, 0), "main", 0, "node-1",
                List.of()))).get(0);
        RunRecord fresh = queuedRun("fresh", "team-a", T0);
        RuntimeException failure = new IllegalStateException("the work failed");

        assertThatThrownBy(() -> store.inTransaction(tx -> {
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
            assertThat(tx.getRun(fresh.id())).isPresent();
            assertThat(tx.getRun(kept.id()).orElseThrow().state()).isEqualTo(RunState.STARTING);
            assertThat(tx.getInstance(placed.id()).orElseThrow().version()).isEqualTo(2);
            assertThat(tx.workspacesOf("alice")).containsExactly("team-tx");
            throw failure;
        })).isSameAs(failure);

        assertThat(store.getRun(fresh.id())).isEmpty();
        assertThat(store.instancesOf(fresh.id())).isEmpty();
        assertThat(store.eventsOf(fresh.id(), 0, 10)).isEmpty();
        assertThat(store.getRun(kept.id())).contains(kept);
        assertThat(store.getInstance(placed.id())).contains(placed);
        assertThat(store.eventsOf(kept.id(), 0, 10)).hasSize(1);
        assertThat(store.activeRuns()).containsExactly(kept);
        assertThat(store.findTokenByHash("ab".repeat(32))).isEmpty();
        assertThat(store.listSecrets(null)).isEmpty();
        assertThat(store.serverKeyId("secrets")).isEmpty();
        assertThat(store.lastScheduled("team-a", "nightly")).isEmpty();
        assertThat(store.downNodes()).isEmpty();
        assertThat(store.workspacesOf("alice")).isEmpty();
        // Nothing is left locked either: the same writes succeed afterwards.
        store.updateRun(kept.moveTo(RunState.STARTING, "Admitted", T0));
        store.updateInstance(placed.running(Map.of("pid", "1"), T0));
    }

    @Test
    void aTransactionCommitsEverythingItWroteAndNestedOnesJoinIt() {
        RunRecord run = queuedRun("nightly", "team-a", T0);
        RunRecord created = store.inTransaction(tx -> {
            RunRecord stored = tx.createRun(run, RunEvent.of(run.id(), T0, EventType.StateChanged, "QUEUED", "Scheduled", null, null));
            tx.recordScheduled("team-a", "nightly", null, T0);
            tx.inTransaction(inner -> inner.appendEvent(RunEvent.of(run.id(), T0, EventType.StateChanged, null, null, "inner", null)));
            return stored;
        });
        assertThat(store.getRun(run.id())).contains(created);
        assertThat(store.lastScheduled("team-a", "nightly")).contains(T0);
        assertThat(store.eventsOf(run.id(), 0, 10)).extracting(RunEvent::message).containsExactly(null, "inner");

        // A nested transaction that fails takes the outer one down with it.
        assertThatThrownBy(() -> store.inTransaction(tx -> {
            tx.recordScheduled("team-a", "nightly", T0, T0.plusSeconds(60));
            return tx.inTransaction(inner -> {
                inner.appendEvent(RunEvent.of(run.id(), T0, EventType.StateChanged, null, null, "lost", null));
                throw new ConflictException("inner conflict");
            });
        })).isInstanceOf(ConflictException.class).hasMessage("inner conflict");
        assertThat(store.lastScheduled("team-a", "nightly")).contains(T0);
        assertThat(store.eventsOf(run.id(), 0, 10)).hasSize(2);
    }

    @Test
    void aTransactionsWritesAreInvisibleToOthersUntilItCommits() throws Exception {
        CountDownLatch written = new CountDownLatch(1);
        CountDownLatch looked = new CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<StoredDocument> writer = pool.submit(() -> store.inTransaction(tx -> {
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
            assertThat(store.getDocument(Kind.Workspace, null, "pending")).as("not committed yet").isEmpty();
            assertThat(store.listDocuments(Kind.Workspace, null)).isEmpty();
            assertThat(store.workspacesOf("alice")).isEmpty();
            looked.countDown();
            writer.get(10, TimeUnit.SECONDS);
            assertThat(store.getDocument(Kind.Workspace, null, "pending")).isPresent();
            assertThat(store.workspacesOf("alice")).containsExactly("pending");
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
        InstanceRecord created = store.createInstances(List.of(pending)).get(0);
        assertThat(created.version()).isEqualTo(1);
        assertThatThrownBy(() -> store.createInstances(List.of(pending))).isInstanceOf(ConflictException.class);
        InstanceRecord other = InstanceRecord.pending(new InstanceId(run.id(), 1, 1), "main", 1, "node-1", List.of());
        assertThatThrownBy(() -> store.createInstances(List.of(other, pending))).as("one taken id: none of the batch")
                .isInstanceOf(ConflictException.class);
        assertThat(store.getInstance(other.id())).isEmpty();
        assertThatThrownBy(() -> store.updateInstance(other.withVersion(1))).as("never created").isInstanceOf(ConflictException.class);
        assertThat(store.getInstance(other.id())).isEmpty();

        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Callable<Boolean>> attempts = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                String pid = Integer.toString(100 + i);
                attempts.add(() -> {
                    try {
                        store.updateInstance(created.running(Map.of("pid", pid), T0.plusSeconds(1)));
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
            assertThat(store.getInstance(pending.id()).orElseThrow().version()).isEqualTo(2);
        } finally {
            pool.shutdownNow();
        }
        assertThatThrownBy(() -> store.updateRun(queuedRun("never", "team-a", T0).withVersion(1))).as("a run never created")
                .isInstanceOf(ConflictException.class);
    }

    @Test
    void aReclaimedClaimIsKeptWithTheRunUntilItIsAdmitted() {
        RunRecord owner = createRun(RunRecord.queued(RunId.newFor("owner"), "team-a", "owner", 1, aJob("owner").spec(), T0));
        store.updateRun(owner.withCapacityReclaimed());
        RunRecord claimed = store.getRun(owner.id()).orElseThrow();
        assertThat(claimed.capacityReclaimed()).isTrue();
        store.updateRun(claimed.admitted(io.slipstream.api.run.RealTimeResources.InQuota, "Admitted", T0.plusSeconds(1)));
        assertThat(store.getRun(owner.id()).orElseThrow().capacityReclaimed()).isFalse();
    }

    @Test
    void anUpdateNeverChangesWhatARunIsOnlyWhereItStands() {
        RunOrigin origin = new RunOrigin(Map.of("nodeGroups.main.replicas", "2"), null, "key-fixed");
        RunRecord stored = createRun(RunRecord.queued(RunId.newFor("fixed"), "team-a", "fixed", 3, aJob("fixed").spec(), origin, T0));
        JobSpec otherSpec = aJob("other").replicas(7).spec();
        RunRecord rewritten = new RunRecord(stored.id(), "team-b", "other", 9, RunState.STARTING, "Admitted", null, 1, 99, otherSpec,
                T0.plusSeconds(5), null, null, null, io.slipstream.api.run.RealTimeResources.InQuota, null, false, RunOrigin.MANUAL, T0, 0,
                FaultState.NONE, stored.version());
        store.updateRun(rewritten);
        RunRecord read = store.getRun(stored.id()).orElseThrow();
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
        assertThat(store.findRunByIdempotencyKey("team-a", "key-fixed")).map(RunRecord::id).contains(stored.id());
    }

    @Test
    void aReleasedIdempotencyKeyLeavesItsRunAloneAndADeletedRunFreesItsKey() {
        JobSpec spec = aJob("keyed").spec();
        RunOrigin origin = new RunOrigin(Map.of("a", "1"), T0.minusSeconds(60), "key-2", "bob");
        RunRecord first = createRun(RunRecord.queued(RunId.newFor("keyed"), "team-a", "keyed", 1, spec, origin, T0));
        store.releaseIdempotencyKey(first.id());
        RunRecord released = store.getRun(first.id()).orElseThrow();
        assertThat(released.origin()).isEqualTo(new RunOrigin(Map.of("a", "1"), T0.minusSeconds(60), null, "bob"));
        assertThat(released.version()).as("a writer holding the run is not disturbed").isEqualTo(first.version());

        RunRecord second = createRun(RunRecord.queued(RunId.newFor("keyed"), "team-a", "keyed", 1, spec, origin, T0.plusSeconds(1)));
        // Writing the first run from a copy read before the release does not take the key back.
        store.updateRun(first.moveTo(RunState.CANCELLED, "Cancelled", T0.plusSeconds(2)));
        assertThat(store.findRunByIdempotencyKey("team-a", "key-2")).map(RunRecord::id).contains(second.id());
        assertThat(store.getRun(first.id()).orElseThrow().origin().idempotencyKey()).isNull();

        store.updateRun(second.moveTo(RunState.CANCELLED, "Cancelled", T0.plusSeconds(3)));
        store.deleteRun(second.id());
        assertThat(store.findRunByIdempotencyKey("team-a", "key-2")).isEmpty();
        createRun(RunRecord.queued(RunId.newFor("keyed"), "team-a", "keyed", 1, spec, origin, T0.plusSeconds(4)));
        assertThat(store.findRunByIdempotencyKey("team-a", "key-2")).isPresent();
    }

    @Test
    void aTokensIdAndHashAreEachTakenOnce() {
        store.createToken(new TokenRecord("tok-1", "ab".repeat(32), "alice", false, null, T0, null, null));
        assertThatThrownBy(() -> store.createToken(new TokenRecord("tok-1", "cd".repeat(32), "bob", false, null, T0, null, null)))
                .isInstanceOf(ConflictException.class);
        assertThatThrownBy(() -> store.createToken(new TokenRecord("tok-2", "ab".repeat(32), "bob", true, null, T0, null, null)))
                .isInstanceOf(ConflictException.class);
        assertThat(store.listTokens()).singleElement().extracting(TokenRecord::user).isEqualTo("alice");
        assertThat(store.hasAdminToken(T0)).isFalse();
    }

    // --- events, instances of attempts, what is kept ---

    @Test
    void eventsAreNumberedInTheOrderTheyWereAppendedAndKeptApartByRun() {
        RunRecord a = createRun(queuedRun("a", "team-a", T0));
        RunRecord b = createRun(queuedRun("b", "team-a", T0));
        List<RunEvent> appended = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            // Times go backwards: the order is the order of appending, not of times.
            appended.add(store.appendEvent(RunEvent.of(i % 2 == 0 ? a.id() : b.id(), T0.plusSeconds(10 - i), EventType.StateChanged, null, "Noted", "n" + i, null)));
        }
        assertThat(appended).extracting(RunEvent::seq).isSorted().doesNotHaveDuplicates().allMatch(seq -> seq > 0);
        List<RunEvent> ofA = store.eventsOf(a.id(), 0, 100);
        assertThat(ofA).hasSize(4);
        assertThat(ofA.subList(1, 4)).containsExactly(appended.get(0), appended.get(2), appended.get(4));
        assertThat(ofA.get(0).seq()).isLessThan(appended.get(0).seq());
        assertThat(store.eventsOf(b.id(), 0, 100).subList(1, 4)).containsExactly(appended.get(1), appended.get(3), appended.get(5));
        assertThat(store.eventsOf(a.id(), appended.get(0).seq(), 1)).containsExactly(appended.get(2));
        assertThat(store.eventsOf(a.id(), appended.get(4).seq(), 10)).isEmpty();
    }

    @Test
    void onlyTheCurrentAttemptsInstancesAreTheActiveRunsOnes() {
        RunRecord run = createRun(queuedRun("again", "team-a", T0));
        RunRecord admitted = store.updateRun(run.admitted(io.slipstream.api.run.RealTimeResources.NotInQuota, "Admitted", T0));
        InstanceRecord first = store.createInstances(List.of(InstanceRecord.pending(new InstanceId(run.id(), 1, 0), "main", 0, "node-1",
                List.of()))).get(0);
        store.updateInstance(first.finished(InstanceState.RESOURCE_PREEMPTED, 143, "Preempted", T0.plusSeconds(1)));
        RunRecord requeued = store.updateRun(store.updateRun(admitted.preempting(new RunId("owner-12345678"), "Reclaimed"))
                .requeued("Preempted", T0.plusSeconds(2)));
        store.updateRun(requeued.admitted(io.slipstream.api.run.RealTimeResources.InQuota, "Admitted", T0.plusSeconds(3)));
        store.createInstances(List.of(InstanceRecord.pending(new InstanceId(run.id(), 2, 1), "main", 1, "node-2", List.of()),
                InstanceRecord.pending(new InstanceId(run.id(), 2, 0), "main", 0, "node-1", List.of())));

        assertThat(store.instancesOfActiveRuns()).extracting(InstanceRecord::id)
                .containsExactly(new InstanceId(run.id(), 2, 0), new InstanceId(run.id(), 2, 1));
        assertThat(store.instancesOf(run.id())).extracting(InstanceRecord::id)
                .containsExactly(new InstanceId(run.id(), 1, 0), new InstanceId(run.id(), 2, 0), new InstanceId(run.id(), 2, 1));
        assertThat(store.activeInstances()).extracting(InstanceRecord::id)
                .containsExactly(new InstanceId(run.id(), 2, 0), new InstanceId(run.id(), 2, 1));
    }

    @Test
    void longTextIsShortenedToWhatTheStoreKeepsNotRefused() {
        RunRecord run = createRun(queuedRun("wordy", "team-a", T0));
        store.updateRun(run.moveTo(RunState.CANCELLED, "r".repeat(5000), T0));
        assertThat(store.getRun(run.id()).orElseThrow().reason()).hasSize(1024).startsWith("rrr").endsWith("…");
        store.appendEvent(RunEvent.of(run.id(), T0, EventType.StateChanged, null, "e".repeat(2000), "m".repeat(10_000), null));
        RunEvent event = store.eventsOf(run.id(), 0, 10).get(1);
        assertThat(event.reason()).hasSize(1024).endsWith("…");
        assertThat(event.message()).hasSize(4096).endsWith("…");
        store.markNodeDown(new NodeDown("node-1", "d".repeat(2000), T0));
        assertThat(store.downNodes().get("node-1").reason()).hasSize(1024);
    }

    @Test
    void timesAreKeptToTheMicrosecond() {
        Instant precise = Instant.parse("2026-03-01T10:00:00.123456789Z");
        Instant kept = Instant.parse("2026-03-01T10:00:00.123457Z");
        RunRecord run = createRun(queuedRun("precise", "team-a", precise));
        assertThat(store.getRun(run.id()).orElseThrow().createdAt()).isEqualTo(kept);
        assertThat(store.eventsOf(run.id(), 0, 10).get(0).time()).isEqualTo(kept);
        store.createDocument(workspace("team-a"), precise);
        assertThat(store.getDocument(Kind.Workspace, null, "team-a").orElseThrow().createdAt()).isEqualTo(kept);
        store.recordScheduled("team-a", "nightly", null, precise);
        assertThat(store.lastScheduled("team-a", "nightly")).contains(kept);
    }

    // --- stored data is data: one unreadable row never stops the others ---

    /** What a field renamed or retyped by a later release (or a bug, or a hand edit) looks like to this one. */
    static final String UNBINDABLE_SPEC = "{\"apiVersion\":\"slipstream/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"broken\","
            + "\"workspace\":\"team-a\"},\"spec\":{\"nodeGroups\":\"not a list\"}}";

    @Test
    void newRecordsCarryTodaysFormatVersion() throws Exception {
        RunRecord run = createRun(queuedRun("train", "team-a", T0));
        store.createDocument(workspace("team-a"), T0);
        assertThat(sqlLong("SELECT schema_version FROM runs WHERE id = '" + run.id() + "'")).isEqualTo(io.slipstream.api.spec.StoredFormat.CURRENT);
        assertThat(sqlLong("SELECT schema_version FROM documents WHERE name = 'team-a'")).isEqualTo(io.slipstream.api.spec.StoredFormat.CURRENT);
        StoredDocument stored = store.getDocument(Kind.Workspace, null, "team-a").orElseThrow();
        sql("UPDATE documents SET schema_version = 0");
        store.updateDocument(workspace("team-a", "alice"), stored.version(), T0);
        assertThat(sqlLong("SELECT schema_version FROM documents WHERE name = 'team-a'")).isEqualTo(io.slipstream.api.spec.StoredFormat.CURRENT);
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

        assertThat(store.activeRuns()).extracting(RunRecord::id).containsExactly(before.id(), after.id());
        RunQuery all = new RunQuery(null, null, null, Set.of(), 10, null);
        assertThat(store.listRuns(all)).extracting(RunRecord::id).containsExactly(after.id(), before.id());
        assertThat(store.listRunRows(all)).extracting(RunRow::id).containsExactly(after.id(), broken.id(), before.id());
        assertThat(store.listRunRows(all).get(1)).isInstanceOfSatisfying(RunRow.Unreadable.class, row -> {
            assertThat(row.workspace()).isEqualTo("team-a");
            assertThat(row.job()).isEqualTo("broken");
            assertThat(row.createdAt()).isEqualTo(T0.plusSeconds(1));
            assertThat(row.error()).contains(why);
        });
        assertThatThrownBy(() -> store.getRun(broken.id()))
                .isInstanceOfSatisfying(UnreadableRecordException.class, e -> assertThat(e.record()).isEqualTo("run " + broken.id()))
                .hasMessageContaining("cannot read").hasMessageContaining(why);
        assertThat(store.getRun(after.id())).isPresent();
        store.updateRun(after.moveTo(RunState.CANCELLED, "Cancelled", T0));
        assertThat(store.getRun(after.id()).orElseThrow().state()).isEqualTo(RunState.CANCELLED);
    }

    @Test
    void aStoredFieldThisServerDoesNotKnowIsIgnored() throws Exception {
        RunRecord run = createRun(queuedRun("later", "team-a", T0));
        sql("UPDATE runs SET faults = '{\"failures\":2,\"addedByALaterRelease\":{\"x\":1}}', spec = REPLACE(spec, '\"nodeGroups\"', "
                + "'\"addedLater\":true,\"nodeGroups\"') WHERE id = '" + run.id() + "'");
        RunRecord read = store.getRun(run.id()).orElseThrow();
        assertThat(read.faults().failures()).isEqualTo(2);
        assertThat(read.spec()).isEqualTo(run.spec());
    }

    @Test
    void anUnreadableFinishedRunIsLeftOutOfRetention() throws Exception {
        RunRecord a = createRun(queuedRun("a", "team-a", T0));
        RunRecord b = createRun(queuedRun("b", "team-a", T0));
        store.updateRun(a.moveTo(RunState.CANCELLED, "Cancelled", T0));
        store.updateRun(b.moveTo(RunState.CANCELLED, "Cancelled", T0));
        sql("UPDATE runs SET spec = '" + UNBINDABLE_SPEC + "' WHERE id = '" + b.id() + "'");
        assertThat(store.finishedBefore(T0.plusSeconds(1), 10)).extracting(RunRecord::id).containsExactly(a.id());
    }

    @Test
    void anUnreadableDocumentIsLeftOutOfListsAndNamedWhenLookedUp() throws Exception {
        store.createDocument(workspace("team-a", "alice"), T0);
        store.createDocument(workspace("team-b", "bob"), T0);
        store.createDocument(workspace("team-c", "carol"), T0);
        sql("UPDATE documents SET body = '{\"apiVersion\":\"slipstream/v1\",\"kind\":\"Workspace\",\"metadata\":{\"name\":\"team-b\"},"
                + "\"spec\":{\"members\":{\"bob\":1}}}' WHERE name = 'team-b'");
        assertThat(store.listDocuments(Kind.Workspace, null)).extracting(d -> d.document().name()).containsExactly("team-a", "team-c");
        assertThatThrownBy(() -> store.getDocument(Kind.Workspace, null, "team-b"))
                .isInstanceOfSatisfying(UnreadableRecordException.class, e -> assertThat(e.record()).isEqualTo("Workspace team-b"))
                .hasMessageContaining("members");
        sql("UPDATE documents SET schema_version = 99 WHERE name = 'team-c'");
        assertThatThrownBy(() -> store.getDocument(Kind.Workspace, null, "team-c"))
                .hasMessageContaining("Workspace team-c").hasMessageContaining("format version 99, newer than this server knows");
    }

}
