package io.slipstream.store.jdbc;

import static io.slipstream.testing.JobBuilder.aJob;

import io.slipstream.api.run.RunId;
import io.slipstream.model.EventType;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.store.Store;
import java.nio.file.Path;
import java.time.Instant;

/** Child process of {@link H2DurabilityTest}: writes runs (one by one, or from several threads at once), acknowledging each on stdout, then waits to be killed. */
public final class H2Writer {
    private H2Writer() {
    }

    /** Args: data dir, runs to write, threads writing them at once (default 1). */
    public static void main(String[] args) throws Exception {
        Store store = JdbcStore.openH2(Path.of(args[0]));
        int count = Integer.parseInt(args[1]);
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
        java.util.List<java.util.concurrent.Future<?>> writes = new java.util.ArrayList<>();
        for (int i = 0; i < count; i++) {
            writes.add(pool.submit(() -> {
                RunRecord run = RunRecord.queued(RunId.newFor("durable"), "team-a", "durable", 1, aJob("durable").spec(), Instant.now());
                store.createRun(run, RunEvent.of(run.id(), run.createdAt(), EventType.StateChanged, "QUEUED", "Submitted", null, null));
                synchronized (System.out) {
                    System.out.println("acked " + run.id());
                    System.out.flush();
                }
                return null;
            }));
        }
        for (java.util.concurrent.Future<?> write : writes) {
            write.get();
        }
        System.out.println("done");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
