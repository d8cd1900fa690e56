package io.slipstream.executor.local.uid;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UidRangeClaimsTest {
    @TempDir
    Path temp;

    /** A file lock excludes other processes, not other threads: two servers starting in one JVM must not collide. */
    @Test
    void serversStartingAtOnceInOneJvmEachGetARangeOfTheirOwn() throws Exception {
        Path claims = temp.resolve("uid-ranges");
        int servers = 6;
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(servers);
        try {
            List<Future<Isolation>> claimed = new ArrayList<>();
            for (int i = 0; i < servers; i++) {
                Path data = Files.createDirectories(temp.resolve("data-" + i));
                Callable<Isolation> claim = () -> {
                    go.await();
                    return UidRangeClaims.claim(claims, data, null);
                };
                claimed.add(pool.submit(claim));
            }
            go.countDown();
            List<Integer> firsts = new ArrayList<>();
            for (Future<Isolation> isolation : claimed) {
                firsts.add(isolation.get(30, TimeUnit.SECONDS).firstUid());
            }
            assertThat(firsts).doesNotHaveDuplicates().hasSize(servers);
        } finally {
            pool.shutdownNow();
        }
    }
}
