package io.slipstream.server.service;

import static io.slipstream.testing.JobBuilder.aJob;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.RunState;
import io.slipstream.api.spec.Document;
import io.slipstream.api.spec.ObjectMeta;
import io.slipstream.api.spec.WorkspaceSpec;
import io.slipstream.executor.LogStream;
import io.slipstream.executor.testing.FakeExecutor;
import io.slipstream.model.EventType;
import io.slipstream.model.RunEvent;
import io.slipstream.model.RunRecord;
import io.slipstream.server.control.ControlLoop;
import io.slipstream.server.control.LoopParts;
import io.slipstream.store.memory.InMemoryStore;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * {@code logs -f} while the store goes away and comes back: the follow re-reads the run and its instances between
 * polls, and an outage then ended the stream with an error written into the log text (the answer had begun, so no
 * 503 could be given). It rides the outage out, as the control loop does, and goes on with what comes after.
 */
class LogFollowOutageTest {
    @Test
    void aFollowedLogOutlastsAStoreOutage() throws Exception {
        Clock clock = Clock.systemUTC();
        InMemoryStore store = new InMemoryStore();
        FakeExecutor executor = new FakeExecutor(new FakeExecutor.Cluster(1, 0), clock, FakeExecutor.Mode.LIFELIKE);
        store.write(tx -> tx.createDocument(new Document<>(ObjectMeta.of("team-a", null), new WorkspaceSpec(List.of())), clock.instant()));
        try (ControlLoop loop = new ControlLoop(LoopParts.of(store, executor, clock).withTick(Duration.ofMillis(50)))) {
            loop.start();
            RunRecord queued = RunRecord.queued(RunId.newFor("job"), "team-a", "job", 1, aJob("job").workspace("team-a").spec(), clock.instant());
            store.write(tx -> tx.createRun(queued, RunEvent.of(queued.id(), queued.createdAt(), EventType.StateChanged, "QUEUED", "Submitted", null, null)));
            await().atMost(Duration.ofSeconds(30)).until(() -> store.runs().get(queued.id()).orElseThrow().state() == RunState.RUNNING);
            InstanceId instance = store.runs().instancesOf(queued.id()).get(0).id();
            executor.print(instance, LogStream.STDOUT, "before\n");

            LogService logs = new LogService(store, executor);
            ByteArrayOutputStream text = new ByteArrayOutputStream();
            OutputStream out = new OutputStream() { // written by the stream's thread, read by the test's
                @Override
                public synchronized void write(int b) {
                    text.write(b);
                }

                @Override
                public synchronized void write(byte[] b, int off, int len) {
                    text.write(b, off, len);
                }
            };
            RunRecord run = store.runs().get(queued.id()).orElseThrow();
            CompletableFuture<Void> follow = CompletableFuture.runAsync(() -> {
                try {
                    logs.stream(run, new LogService.Request(null, null, EnumSet.of(LogStream.STDOUT), true, false, false, LogService.Request.NO_NODES), out);
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            await().atMost(Duration.ofSeconds(30)).until(() -> read(text, out).contains("before"));

            store.simulateOutage(true);
            executor.print(instance, LogStream.STDOUT, "during\n");
            await().atMost(Duration.ofSeconds(30)).until(() -> read(text, out).contains("during")); // what needs no store still comes
            // a few polls of the follow (each re-reads the run and its instances) while the store is down
            await("the follow goes on through the outage").during(Duration.ofMillis(600)).atMost(Duration.ofSeconds(5)).until(() -> !follow.isDone());
            store.simulateOutage(false);
            executor.print(instance, LogStream.STDOUT, "after\n");
            executor.exit(instance, 0);
            await().atMost(Duration.ofSeconds(30)).until(follow::isDone);
            follow.join();
            assertThat(read(text, out)).isEqualTo("before\nduring\nafter\n");
        }
    }

    private static String read(ByteArrayOutputStream text, OutputStream lock) {
        synchronized (lock) {
            return text.toString(StandardCharsets.UTF_8);
        }
    }
}
