package io.slipstream.store.jdbc.h2;

import static io.slipstream.testing.JobBuilder.aJob;

import io.slipstream.api.run.RunId;
import io.slipstream.model.EventType;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import io.slipstream.store.jdbc.JdbcStore;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Child process of {@link H2DurabilityTest}: writes to the embedded store, acknowledging on stdout what it wrote, and is
 * killed while it writes.
 */
public final class H2Writer {
    /** The server key {@link #mark} advances, as the server's store watermark does. */
    static final String MARK = "durability-mark";

    private H2Writer() {
    }

    /**
     * Args: data dir, runs to write, threads writing them at once (default 1), and a mode: {@code runs} (the default:
     * writes the runs, acknowledging each, then waits to be killed) or {@code mark} (the threads write runs without end,
     * unacknowledged, while the main thread advances a server key, acknowledging each value: a rare write among many).
     */
    public static void main(String[] args) throws Exception {
        Store store = JdbcStore.openH2(Path.of(args[0]));
        int count = Integer.parseInt(args[1]);
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        if (args.length > 3 && args[3].equals("mark")) {
            mark(store, threads);
            return;
        }
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> writes = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            writes.add(pool.submit(() -> {
                RunId id = createRun(store);
                synchronized (System.out) {
                    System.out.println("acked " + id);
                    System.out.flush();
                }
                return null;
            }));
        }
        for (Future<?> write : writes) {
            write.get();
        }
        System.out.println("done");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

    private static void mark(Store store, int threads) {
        long start = store.credentials().serverKeyId(MARK).map(Long::parseLong).orElse(0L);
        if (start == 0) {
            store.commit(tx -> tx.registerServerKey(MARK, "0", Instant.now()));
        }
        for (int t = 0; t < threads; t++) {
            Thread writer = new Thread(() -> {
                while (true) {
                    createRun(store);
                }
            });
            writer.setDaemon(true);
            writer.start();
        }
        for (long value = start + 1; ; value++) {
            long mark = value;
            store.commit(tx -> tx.replaceServerKey(MARK, Long.toString(mark - 1), Long.toString(mark), Instant.now()));
            System.out.println("mark " + value);
            System.out.flush();
        }
    }

    static RunId createRun(Store store) {
        RunRecord run = RunRecord.queued(RunId.newFor("durable"), "team-a", "durable", 1, aJob("durable").spec(), Instant.now());
        store.write(tx -> tx.createRun(run, RunEvent.of(run.id(), run.createdAt(), EventType.StateChanged, "QUEUED", "Submitted", null, null)));
        return run.id();
    }
}
