package io.slipstream.store.jdbc.h2;

import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.RunId;
import io.slipstream.model.EventType;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import io.slipstream.store.jdbc.JdbcStore;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every write the embedded store acknowledged survives a {@code kill -9} of its process. Two things make it so:
 * no background writer (H2's default background commit lost whole tables): each commit is acknowledged once a
 * blocking {@code MVStore.commit()} has written it ({@link H2GroupCommit}: one write for the commits made meanwhile,
 * by the first of them to wait); and
 * {@link H2NewestChunk}: H2 names the chunk before the newest in its file header, and a reopen after a crash did not
 * find a newest chunk that H2 had put in reused space, silently opening an older state (the last acknowledged write
 * missing: a watermark of 15 in the store, 16 recorded). The copy test shows that without a process and at once; the
 * kill tests show it across the process boundary.
 */
class H2DurabilityTest {
    @TempDir
    Path dataDir;

    /**
     * A commit survives a crash right after it, in one thread, at once and without a process: a copy of the file taken
     * after an acknowledged write is what a {@code kill -9} at that moment leaves (nothing of H2 is written meanwhile).
     * Without {@link H2NewestChunk}, H2 opened such a copy without the last commit for 30 to 50% of the copies here
     * (its header named an older chunk, whose guess of the next one's place was wrong).
     */
    @Test
    void aCopyTakenRightAfterACommitHoldsIt() throws Exception {
        Path copy = dataDir.resolve("copy");
        Files.createDirectories(copy);
        List<String> lost = new ArrayList<>();
        int value = 0;
        for (int open = 0; open < 6; open++) { // each close compacts the file: the next writes reuse its space
            try (Store store = JdbcStore.openH2(dataDir)) {
                if (open == 0) {
                    store.commit(tx -> tx.registerServerKey(H2Writer.MARK, "0", Instant.now()));
                }
                // H2 reuses the space of dead chunks once they are 45 s old: at once here, as in a store open for a while
                try (Connection connection = DriverManager.getConnection(JdbcStore.h2Url(dataDir), "sa", "")) {
                    connection.createStatement().execute("SET RETENTION_TIME 0");
                }
                for (int write = 0; write < 40; write++) {
                    value++;
                    for (int run = 0; run < 1 + value % 4; run++) {
                        H2Writer.createRun(store); // chunks of several sizes
                    }
                    int mark = value;
                    store.commit(tx -> tx.replaceServerKey(H2Writer.MARK, Integer.toString(mark - 1), Integer.toString(mark), Instant.now()));
                    if (value % 4 == 0) {
                        Files.copy(EmbeddedH2.file(dataDir.resolve(EmbeddedH2.DIRECTORY)), copy.resolve(EmbeddedH2.FILE), StandardCopyOption.REPLACE_EXISTING);
                        String stored = markIn(copy);
                        if (!stored.equals(Integer.toString(value))) {
                            lost.add(value + " (the copy holds " + stored + ")");
                        }
                    }
                }
            }
        }
        System.out.println("H2DurabilityTest: " + lost.size() + " of 60 copies lost the last commit " + lost);
        assertThat(lost).as("acknowledged values missing from a copy taken right after them").isEmpty();
    }

    /**
     * A write in a {@link Store#deferDurability} scope is seen by every reader at once and is in the file once awaited,
     * or once another thread's commit, waited for, is (commits are written in the order they were made); a deferred
     * write alone is not written as it returns (what saves the control loop a chunk per step). Each copy is what a
     * {@code kill -9} at that moment leaves.
     */
    @Test
    void aDeferredWriteIsSeenAtOnceAndInTheFileOnceAwaited() throws Exception {
        Path copy = dataDir.resolve("copy");
        Files.createDirectories(copy);
        Path file = EmbeddedH2.file(dataDir.resolve(EmbeddedH2.DIRECTORY));
        try (Store store = JdbcStore.openH2(dataDir)) {
            store.commit(tx -> tx.registerServerKey(H2Writer.MARK, "0", Instant.now()));
            try (Store.Deferral ignored = store.deferDurability()) {
                store.commit(tx -> tx.replaceServerKey(H2Writer.MARK, "0", "1", Instant.now()));
                Files.copy(file, copy.resolve(EmbeddedH2.FILE), StandardCopyOption.REPLACE_EXISTING);
                assertThat(markIn(copy)).as("not written as it returned").isEqualTo("0");
                Thread reader = new Thread(() -> assertThat(store.credentials().serverKeyId(H2Writer.MARK)).hasValue("1"));
                List<Throwable> failed = new ArrayList<>();
                reader.setUncaughtExceptionHandler((thread, e) -> failed.add(e));
                reader.start();
                reader.join();
                assertThat(failed).as("another thread reads it at once").isEmpty();

                store.awaitDurable();
                Files.copy(file, copy.resolve(EmbeddedH2.FILE), StandardCopyOption.REPLACE_EXISTING);
                assertThat(markIn(copy)).as("in the file once awaited").isEqualTo("1");

                store.commit(tx -> tx.replaceServerKey(H2Writer.MARK, "1", "2", Instant.now()));
                Thread writer = new Thread(() -> H2Writer.createRun(store)); // waited for, as every write outside the scope
                writer.start();
                writer.join();
                Files.copy(file, copy.resolve(EmbeddedH2.FILE), StandardCopyOption.REPLACE_EXISTING);
                assertThat(markIn(copy)).as("in the file with a later commit waited for").isEqualTo("2");

                store.commit(tx -> tx.replaceServerKey(H2Writer.MARK, "2", "3", Instant.now()));
            }
            Files.copy(file, copy.resolve(EmbeddedH2.FILE), StandardCopyOption.REPLACE_EXISTING);
            assertThat(markIn(copy)).as("in the file once the scope closed").isEqualTo("3");
            store.commit(tx -> tx.replaceServerKey(H2Writer.MARK, "3", "4", Instant.now()));
            Files.copy(file, copy.resolve(EmbeddedH2.FILE), StandardCopyOption.REPLACE_EXISTING);
            assertThat(markIn(copy)).as("after the scope, each write waited for again").isEqualTo("4");
        }
    }

    /**
     * A commit whose caller waits, left unwritten because a deferring writer queued behind it, is written by that
     * deferring writer as it leaves (no writer after it may come): its caller does not wait for the 50 ms fallback.
     */
    @Test
    void aDeferringWriterWritesTheCommitsOthersWaitFor() throws Exception {
        Path copy = dataDir.resolve("copy");
        Files.createDirectories(copy);
        try (Store store = JdbcStore.openH2(dataDir)) {
            store.commit(tx -> tx.registerServerKey(H2Writer.MARK, "0", Instant.now()));
            for (int i = 0; i < 200; i++) { // statements of the size below, compiled
                String key = "warm-" + i;
                store.commit(tx -> tx.registerServerKey(key, "1", Instant.now()));
            }
            java.util.concurrent.CountDownLatch written = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch finish = new java.util.concurrent.CountDownLatch(1);
            Thread waited = new Thread(() -> store.commit(tx -> {
                tx.replaceServerKey(H2Writer.MARK, "0", "1", Instant.now());
                written.countDown();
                try {
                    finish.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
            waited.start();
            assertThat(written.await(30, TimeUnit.SECONDS)).isTrue();
            Thread deferring = new Thread(() -> {
                try (Store.Deferral ignored = store.deferDurability()) {
                    store.commit(tx -> tx.registerServerKey("deferred", "1", Instant.now())); // small: within the 3 ms of a group
                    try {
                        Files.copy(EmbeddedH2.file(dataDir.resolve(EmbeddedH2.DIRECTORY)), copy.resolve(EmbeddedH2.FILE), StandardCopyOption.REPLACE_EXISTING);
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }
            });
            deferring.start();
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> deferring.getState() == Thread.State.TIMED_WAITING);
            finish.countDown(); // the first leaves with the deferring one waiting: it leaves its commit to it
            deferring.join(30_000);
            waited.join(30_000);
            assertThat(markIn(copy)).as("the waited-for commit, in the file as the deferring write returned").isEqualTo("1");
        }
    }

    private static String markIn(Path storeDir) throws Exception {
        String url = "jdbc:h2:file:" + storeDir.toAbsolutePath().resolve(EmbeddedH2.NAME) + ";IFEXISTS=TRUE;ACCESS_MODE_DATA=r;DATABASE_TO_LOWER=TRUE";
        try (Connection connection = DriverManager.getConnection(url, "sa", "");
             ResultSet rows = connection.createStatement().executeQuery("SELECT key_id FROM server_keys WHERE purpose = '" + H2Writer.MARK + "'")) {
            return rows.next() ? rows.getString(1) : "nothing";
        }
    }

    /**
     * What the kill tests rest on, checked in process and at once: the open store's H2 writes no chunk by time and has
     * no background writer (no thread of it, none of its serialization threads), also after a backup (H2's own
     * {@code BACKUP TO} changed the delay while it copied, and the backup's connection sets the URL's delay of 0). Then
     * chunks are written by commits only ({@link H2GroupCommit}, or H2 itself at each commit), each before its commit is
     * acknowledged: what lets the backup copy the file without writing a chunk first.
     */
    @Test
    void theOpenStoreHasNoBackgroundWriterSoEachCommitIsWrittenBeforeItReturns() throws Exception {
        try (Store store = JdbcStore.openH2(dataDir)) {
            RunRecord run = RunRecord.queued(RunId.newFor("durable"), "team-a", "durable", 1, aJob("durable").spec(), Instant.now());
            store.write(tx -> tx.createRun(run, RunEvent.of(run.id(), run.createdAt(), EventType.StateChanged, "QUEUED", "Submitted", null, null)));
            H2Backup.backup(dataDir.resolve(EmbeddedH2.DIRECTORY), dataDir.resolve("backup.zip"));
            // a URL without our settings: it reads the open database's, and sets none
            String plain = "jdbc:h2:file:" + dataDir.resolve(EmbeddedH2.DIRECTORY).toAbsolutePath().resolve(EmbeddedH2.NAME) + ";IFEXISTS=TRUE";
            try (Connection connection = DriverManager.getConnection(plain, "sa", "");
                 ResultSet rows = connection.createStatement().executeQuery(
                         "SELECT SETTING_VALUE FROM INFORMATION_SCHEMA.SETTINGS WHERE SETTING_NAME = 'WRITE_DELAY'")) {
                assertThat(rows.next()).isTrue();
                assertThat(rows.getString(1)).isIn("0", "-1"); // -1: written by group commits; 0: at each commit
            }
            assertThat(Thread.getAllStackTraces().keySet()).extracting(Thread::getName)
                    .noneMatch(name -> name.startsWith("MVStore background writer") || name.startsWith("H2-serialization") || name.startsWith("H2-save"));
        }
    }

    @Test
    void acknowledgedWritesSurviveKillMinus9() throws Exception {
        killAfter("1", 200);
    }

    /**
     * Commits of several threads at once, killed while they go on: each acknowledged one is there (a commit that meets
     * another thread's store write waits for it; see the class comment).
     */
    @Test
    void acknowledgedConcurrentWritesSurviveKillMinus9WhileOthersAreWritten() throws Exception {
        for (int round = 0; round < 5; round++) {
            killAfter("8", 50 + 40 * round);
        }
    }

    /**
     * A rare acknowledged write (a server key, advanced as the server's watermark is) among constant commits of 8 other
     * threads, killed at once after its acknowledgement, round after round on the same store (as a crash loop restarts
     * a server on the store its kill left): the value acknowledged last (or a later one) is in the store, each time.
     * {@code -Dh2.durability.rounds=N} runs N rounds (the build runs one: seconds; the copy test is the quick and certain one).
     */
    @Test
    void aRareAcknowledgedWriteAmongConstantCommitsSurvivesRepeatedKillMinus9() throws Exception {
        int rounds = Integer.getInteger("h2.durability.rounds", 1);
        List<String> losses = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            long acked = killAfterMarks(dataDir, 8, 1 + round % 5);
            try (Store store = JdbcStore.openH2(dataDir)) {
                long stored = Long.parseLong(store.credentials().serverKeyId(H2Writer.MARK).orElse("0"));
                if (stored < acked) {
                    losses.add("round " + round + ": acknowledged " + acked + ", stored " + stored);
                }
            }
        }
        System.out.println("H2DurabilityTest: " + losses.size() + " of " + rounds + " kills lost an acknowledged mark " + losses);
        assertThat(losses).as("kills that lost an acknowledged write").isEmpty();
    }

    /**
     * Starts a writer in mark mode on the store in {@code dir} and kills it as soon as it acknowledged {@code marks}
     * values; returns the last value it acknowledged.
     */
    private static long killAfterMarks(Path dir, int threads, int marks) throws Exception {
        Process writer = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", // a writer killed within seconds: no C2, no concurrent collector
                "-cp", System.getProperty("java.class.path"), H2Writer.class.getName(), dir.toString(), "0", Integer.toString(threads), "mark")
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        long acked = 0;
        int seen = 0;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(writer.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while (seen < marks && (line = out.readLine()) != null) {
                acked = Long.parseLong(line.substring("mark ".length()));
                seen++;
            }
        } finally {
            writer.destroyForcibly(); // SIGKILL, at once: no shutdown hook, no close
            writer.waitFor(30, TimeUnit.SECONDS);
        }
        assertThat(seen).as("marks the writer acknowledged").isEqualTo(marks);
        return acked;
    }

    /** Kills the writer once it acknowledged {@code acks} runs (of 10,000: it is still writing), then checks them. */
    private void killAfter(String threads, int acks) throws Exception {
        Process writer = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-cp", System.getProperty("java.class.path"), H2Writer.class.getName(), dataDir.toString(), acks == 200 && threads.equals("1") ? "200" : "10000", threads)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        List<RunId> acknowledged = new ArrayList<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(writer.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while (acknowledged.size() < acks && (line = out.readLine()) != null && !line.equals("done")) {
                acknowledged.add(new RunId(line.substring("acked ".length())));
            }
        } finally {
            writer.destroyForcibly(); // SIGKILL, at once: no shutdown hook, no close
            writer.waitFor(30, TimeUnit.SECONDS);
        }
        assertThat(acknowledged).hasSize(acks);
        try (Store store = JdbcStore.openH2(dataDir)) {
            for (RunId id : acknowledged) {
                assertThat(store.runs().get(id)).as("acknowledged run %s", id).isPresent();
            }
        }
    }
}
