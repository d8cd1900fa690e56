package io.slipstream.executor.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.executor.ExecutorException;
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
}
