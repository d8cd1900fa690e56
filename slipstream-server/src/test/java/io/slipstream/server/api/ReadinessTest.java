package io.slipstream.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.slipstream.server.control.LeaderElection;
import io.slipstream.store.StoreUnavailableException;
import io.slipstream.testing.TestingClock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /readyz} answers anyone, without a token. A store check that takes long (an outage: up to the pool's
 * 1.5 s connection timeout) must neither make other readiness requests queue behind it (under a lock, each waited
 * for all before it: a probe flood held every HTTP thread), nor may a flood of them take a store connection each
 * (8 in the pool: the control loop and every API call would find none and read the store as down).
 */
class ReadinessTest {
    private final TestingClock clock = new TestingClock();
    private final CountDownLatch release = new CountDownLatch(1);
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger mostInFlight = new AtomicInteger();
    private final AtomicInteger checks = new AtomicInteger();
    private volatile boolean blocking;
    private volatile boolean down;

    private final Readiness readiness = new Readiness(() -> null,
            () -> new LeaderElection.Status(LeaderElection.Role.STANDBY, "me", null), this::storeCheck, clock);

    private void storeCheck() {
        mostInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
        checks.incrementAndGet();
        try {
            if (blocking) {
                release.await();
            }
            if (down) {
                throw new StoreUnavailableException("the store cannot be reached: connection refused", null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            inFlight.decrementAndGet();
        }
    }

    @AfterEach
    void unblock() {
        release.countDown();
    }

    @Test
    void aSlowStoreCheckHoldsUpNoOtherRequestAndIsNotRepeatedAlongside() {
        assertThat(readiness.now().ready()).isTrue();
        clock.advance(Duration.ofSeconds(5));
        blocking = true;
        down = true;
        CompletableFuture<Readiness.Status> slow = CompletableFuture.supplyAsync(readiness::now);
        await().atMost(Duration.ofSeconds(10)).until(() -> inFlight.get() == 1);
        CompletableFuture<Readiness.Status> others = CompletableFuture.supplyAsync(() -> {
            Readiness.Status last = null;
            for (int i = 0; i < 20; i++) {
                last = readiness.now();
            }
            return last;
        });
        await("readiness requests answered while a store check is slow").atMost(Duration.ofSeconds(10)).until(others::isDone);
        assertThat(mostInFlight).as("store checks at once").hasValue(1);
        assertThat(slow).isNotDone();
        release.countDown();
        assertThat(slow.join().ready()).isFalse();
        assertThat(slow.join().reason()).contains("connection refused");
    }

    @Test
    void anOutageShowsAtOnceAndTheRecoveryWithinASecond() {
        assertThat(readiness.now().ready()).isTrue();
        down = true;
        clock.advance(Duration.ofSeconds(1));
        assertThat(readiness.now().ready()).isFalse();
        down = false;
        assertThat(readiness.now().ready()).as("checked less than a second ago: the same answer").isFalse();
        clock.advance(Duration.ofSeconds(1));
        assertThat(readiness.now().ready()).isTrue();
    }
}
