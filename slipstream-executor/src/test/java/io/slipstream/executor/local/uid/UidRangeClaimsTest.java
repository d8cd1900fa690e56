package io.slipstream.executor.local.uid;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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

    /**
     * A data directory about to be removed (a demo's) gives up its claim; another's stays. The ranges are far from the
     * first free block: a claim is kept while any process runs under one of its uids, and other tests of this build run
     * instances under the machine's first blocks meanwhile.
     */
    @Test
    void aReleasedClaimIsGoneAndTheOthersStay() throws Exception {
        Path claims = temp.resolve("uid-ranges");
        Path demo = Files.createDirectories(temp.resolve("demo"));
        Path server = Files.createDirectories(temp.resolve("server"));
        UidRangeClaims.Range demoRange = new UidRangeClaims.Range(2_000_000_000, UidRangeClaims.BLOCK);
        UidRangeClaims.Range serverRange = new UidRangeClaims.Range(2_000_000_000 + UidRangeClaims.BLOCK, UidRangeClaims.BLOCK);
        UidRangeClaims.claim(claims, demo, demoRange);
        UidRangeClaims.claim(claims, server, serverRange);
        assertThat(claimFiles(claims)).hasSize(2);
        UidRangeClaims.release(claims, demo);
        assertThat(claimFiles(claims)).containsExactly(serverRange.toString());
        assertThat(UidRangeClaims.claim(claims, Files.createDirectories(temp.resolve("next")), demoRange).firstUid())
                .as("the demo's range is free again").isEqualTo(demoRange.first());
    }

    private static List<String> claimFiles(Path claims) throws Exception {
        try (var files = Files.list(claims)) {
            return files.map(f -> f.getFileName().toString()).filter(n -> n.matches("\\d+-\\d+")).sorted().toList();
        }
    }

    /**
     * Servers before the lock went through {@code files.LockFile} made the claims' lock 0644, in a directory every uid
     * may enter: a run's uid could open it and hold a shared lock for as long as the run lived, and no server on the
     * machine could start meanwhile (a claim waits for the lock). A server of this version makes it its own (0600).
     */
    @Test
    void aRunsUidCannotHoldTheClaimsLockThatAnEarlierVersionLeftReadable() throws Exception {
        assumeTrue(Isolation.runningAsRoot(), "switching users needs root");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "needs python3 to take a lock as another uid");
        Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rwx--x--x"));
        Path claims = Files.createDirectories(temp.resolve("uid-ranges"));
        Files.setPosixFilePermissions(claims, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path lock = Files.createFile(claims.resolve(".lock"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--")));
        UidRangeClaims.claim(claims, Files.createDirectories(temp.resolve("data-1")), null);

        // A run's uid, from a range the machine's own claims give (one in this test's directory alone could be a uid
        // that another test, in another JVM, is sweeping meanwhile).
        int uid = UidRangeClaims.claim(Path.of(UidRangeClaims.DEFAULT_DIRECTORY), Files.createDirectories(temp.resolve("data-tenant")), null).firstUid();
        String hold = "import fcntl, sys, time\n"
                + "try:\n"
                + "    f = open(sys.argv[1], 'rb')\n"
                + "    fcntl.lockf(f, fcntl.LOCK_SH | fcntl.LOCK_NB)\n"
                + "except OSError as e:\n"
                + "    print('refused', e, flush=True)\n"
                + "    sys.exit(0)\n"
                + "print('held', flush=True)\n"
                + "time.sleep(600)\n";
        Process tenant = new ProcessBuilder("setpriv", "--reuid=" + uid, "--regid=" + uid, "--clear-groups", "/usr/bin/python3", "-c", hold, lock.toString())
                .redirectErrorStream(true).start();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            String said = new String(tenant.getInputStream().readNBytes(4), java.nio.charset.StandardCharsets.UTF_8);
            Future<Isolation> second = pool.submit(() -> UidRangeClaims.claim(claims, Files.createDirectories(temp.resolve("data-2")), null));
            try {
                second.get(20, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                throw new AssertionError("a server's claim waits for a lock the run's uid " + uid + " holds (it said: " + said + ")");
            }
            assertThat(said).as("what the run's uid could do with the lock").isEqualTo("refu");
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(lock))).isEqualTo("rw-------");
        } finally {
            tenant.destroyForcibly().waitFor();
            pool.shutdownNow();
        }
    }
}
