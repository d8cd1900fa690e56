package io.slipstream.executor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A leader frozen (SIGSTOP, a stalled VM) while it held the fence's lock, in the middle of a launch, kept it held:
 * the replica taking over waited in {@code fence} for good, inside its election's tick (so its election, and its
 * shutdown, waited too). The wait is bounded now; the takeover is tried again at the next claim.
 */
class EpochFenceTest {
    @TempDir
    Path root;

    @Test
    void aLockHeldByAFrozenProcessDelaysATakeoverButNeverFreezesIt() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "python3 takes the POSIX lock of another process");
        EpochFence frozen = new EpochFence(root, Duration.ofMillis(300));
        frozen.fence(1);
        // Another process takes the same kind of lock (fcntl) as the JVM, and keeps it, as a frozen replica would.
        Process holder = new ProcessBuilder("/usr/bin/python3", "-c",
                "import fcntl, sys, time\nf = open(sys.argv[1], 'r+')\nfcntl.lockf(f, fcntl.LOCK_EX)\nprint('locked', flush=True)\ntime.sleep(600)\n",
                root.resolve(".fence").toString()).redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
            assertThat(out.readLine()).isEqualTo("locked");
            EpochFence successor = new EpochFence(root, Duration.ofMillis(300));
            CompletableFuture<Void> takeover = CompletableFuture.runAsync(() -> successor.fence(2));
            await("the fence answers while another process holds the lock").atMost(Duration.ofSeconds(30)).until(takeover::isDone);
            assertThatThrownBy(takeover::join).hasCauseInstanceOf(ExecutorException.class).hasMessageContaining("locked by another process");

            holder.destroyForcibly().waitFor();
            successor.fence(2);
            assertThatThrownBy(frozen::check).isInstanceOf(ExecutorException.class).hasMessageContaining("fenced");
        } finally {
            holder.destroyForcibly().waitFor();
        }
    }

    /**
     * Side effects of one leader share the lock (many launches at once do not wait for one another), and a fence waits
     * for those under way, so that none of them acts for an epoch that was superseded while it ran.
     */
    @Test
    void sideEffectsRunTogetherAndAFenceWaitsForThoseUnderWay() throws Exception {
        EpochFence leader = new EpochFence(root, Duration.ofSeconds(30));
        leader.fence(1);
        java.util.concurrent.CountDownLatch holding = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean firstDone = new java.util.concurrent.atomic.AtomicBoolean();
        CompletableFuture<Void> first = CompletableFuture.runAsync(() -> leader.guarded(() -> {
            holding.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            firstDone.set(true);
        }));
        holding.await();
        // a second side effect runs while the first one holds the lock
        CompletableFuture<Void> second = CompletableFuture.runAsync(() -> leader.guarded(() -> {
        }));
        await("a second side effect, while the first is under way").atMost(Duration.ofSeconds(30)).until(second::isDone);
        second.join();

        EpochFence successor = new EpochFence(root, Duration.ofSeconds(30));
        java.util.concurrent.atomic.AtomicReference<Thread> fencing = new java.util.concurrent.atomic.AtomicReference<>();
        CompletableFuture<Boolean> takeover = CompletableFuture.supplyAsync(() -> {
            fencing.set(Thread.currentThread());
            successor.fence(2);
            return firstDone.get();
        });
        await("the fence waits").atMost(Duration.ofSeconds(30)).until(() -> fencing.get() != null
                && fencing.get().getState() == Thread.State.TIMED_WAITING);
        release.countDown();
        assertThat(takeover.get()).as("the side effect under way ended before the fence").isTrue();
        first.join();
        assertThatThrownBy(leader::check).isInstanceOf(ExecutorException.class).hasMessageContaining("fenced");
    }
}
