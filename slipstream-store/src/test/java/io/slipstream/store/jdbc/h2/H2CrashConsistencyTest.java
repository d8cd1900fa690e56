package io.slipstream.store.jdbc.h2;

import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.model.EventType;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunOrigin;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import io.slipstream.store.jdbc.JdbcStore;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded store killed with {@code kill -9} while eight threads write to it: after every kill, each index holds
 * exactly its table's rows ({@link H2Indexes}). Before {@link OneWriterAtATime}, H2 kept a run that never committed
 * in some of its indexes (or lost one from an index) within a few kills: its idempotency key then answered with a run
 * that was not there, for ever.
 */
class H2CrashConsistencyTest {
    private static final int KILLS = Integer.getInteger("crash.kills", 12);

    @TempDir
    Path dataDir;

    @Test
    void everyIndexHoldsExactlyTheTablesRowsAfterEachKill() throws Exception {
        Random random = new Random(Long.getLong("crash.seed", 20));
        for (int kill = 1; kill <= KILLS; kill++) {
            long commits = 30 + random.nextInt(300);
            Process writers = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", // a writer killed within seconds: no C2, no concurrent collector
                    "-cp", System.getProperty("java.class.path"), Writers.class.getName(), dataDir.toString())
                    .redirectErrorStream(true).start();
            try {
                CompletableFuture<String> reached = CompletableFuture.supplyAsync(() -> readUntil(writers, commits));
                assertThat(reached.get(120, TimeUnit.SECONDS)).as("kill %d: the writers' output", kill).startsWith("committed");
            } finally {
                writers.destroyForcibly(); // SIGKILL: nothing of H2's is closed
                writers.waitFor(60, TimeUnit.SECONDS);
            }
            assertThat(inconsistentIndexes()).as("after kill %d (at %d commits)", kill, commits).isEmpty();
        }
    }

    /** Reads the writers' output until they report {@code commits} commits; returns that line, or all output on an end. */
    private static String readUntil(Process writers, long commits) {
        StringBuilder output = new StringBuilder();
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(writers.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                if (line.startsWith("committed ") && Long.parseLong(line.substring("committed ".length())) >= commits) {
                    return line;
                }
                if (!line.startsWith("committed ")) {
                    output.append(line).append('\n');
                }
            }
        } catch (java.io.IOException e) {
            output.append(e);
        }
        return output.toString();
    }

    /** What is wrong with the store's indexes ({@link H2Indexes}, whose test shows that each is read through itself). */
    private List<String> inconsistentIndexes() throws Exception {
        try (Connection connection = DriverManager.getConnection(JdbcStore.h2Url(dataDir), "sa", "")) {
            List<String> damaged = H2Indexes.damaged(connection);
            try (Statement statement = connection.createStatement(); ResultSet runs = statement.executeQuery("SELECT COUNT(*) FROM runs")) {
                runs.next();
                assertThat(runs.getLong(1)).as("runs written").isPositive();
            }
            return damaged;
        }
    }

    /**
     * Eight threads writing runs to the embedded store in {@code args[0]} until killed, as submissions and the control
     * loop do: a run with its idempotency key and first event, a run finished (its indexed columns changed), a
     * transaction rolled back half done. Prints {@code committed N} after each commit.
     */
    public static final class Writers {
        public static void main(String[] args) throws Exception {
            Store store = JdbcStore.openH2(Path.of(args[0]));
            AtomicLong committed = new AtomicLong();
            JobSpec spec = aJob("crash").spec();
            ExecutorService threads = Executors.newFixedThreadPool(8);
            for (int t = 0; t < 8; t++) {
                int thread = t;
                threads.submit(() -> {
                    Random random = new Random(thread);
                    List<RunRecord> mine = new ArrayList<>();
                    for (long i = 0; ; i++) {
                        try {
                            Instant now = Instant.now();
                            String workspace = "team-" + random.nextInt(4);
                            RunOrigin origin = new RunOrigin(Map.of(), null, thread + "-" + i + "-" + System.nanoTime(), "alice");
                            RunRecord run = RunRecord.queued(RunId.newFor("crash"), workspace, "crash", 1, spec, origin, now);
                            switch (random.nextInt(5)) {
                                case 0 -> {
                                    if (!mine.isEmpty()) {
                                        RunRecord done = mine.remove(random.nextInt(mine.size()));
                                        store.write(tx -> tx.updateRun(done.moveTo(RunState.CANCELLED, "Cancelled", now)));
                                    }
                                }
                                case 1 -> {
                                    try {
                                        store.write(tx -> {
                                            tx.createRun(run, RunEvent.of(run.id(), now, EventType.StateChanged, "QUEUED", "Submitted", null, null));
                                            throw new IllegalStateException("rolled back on purpose");
                                        });
                                    } catch (IllegalStateException expected) {
                                        // nothing of it is kept
                                    }
                                }
                                default -> mine.add(store.write(tx -> tx.createRun(run, RunEvent.of(run.id(), now, EventType.StateChanged, "QUEUED", "Submitted", null, null))));
                            }
                            System.out.println("committed " + committed.incrementAndGet());
                        } catch (RuntimeException e) {
                            System.out.println("failed: " + e);
                        }
                    }
                });
            }
            threads.awaitTermination(1, TimeUnit.DAYS);
        }
    }
}
