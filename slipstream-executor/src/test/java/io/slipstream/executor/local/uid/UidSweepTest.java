package io.slipstream.executor.local.uid;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.executor.local.process.ProcFs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Sweeps of several runs' uids asked for at once: every process of each is killed, in passes they share. */
class UidSweepTest {
    @TempDir
    Path dataDir;

    private final List<Process> started = new ArrayList<>();

    @AfterEach
    void killLeftovers() {
        started.forEach(Process::destroyForcibly);
    }

    @Test
    void sweepsAskedForWhileOneIsUnderWayShareTheNextAndKillEverythingOfEachUid() throws Exception {
        assumeTrue(Isolation.runningAsRoot(), "switching users needs root");
        Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwx--x--x"));
        Isolation isolation = UidRangeClaims.claim(Path.of(UidRangeClaims.DEFAULT_DIRECTORY), dataDir, null);
        List<Integer> uids = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            int uid = isolation.firstUid() + i;
            uids.add(uid);
            for (int copies = 0; copies <= i; copies++) { // uid i has i + 1 processes
                started.add(new ProcessBuilder("setpriv", "--reuid=" + uid, "--regid=" + uid, "--clear-groups", "sleep", "600").start());
            }
        }
        int idle = isolation.firstUid() + 4; // nothing runs as it
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> uids.stream().allMatch(uid -> ProcFs.ownedBy(uid).size() == uids.indexOf(uid) + 1));

        UidSweep sweep = new UidSweep();
        ExecutorService askers = Executors.newFixedThreadPool(5);
        List<Future<Integer>> answers = new ArrayList<>();
        sweep.sweeping.lock(); // a sweep under way: the five asks wait for the next
        try {
            for (int uid : uids) {
                answers.add(askers.submit(() -> sweep.killAll(uid)));
            }
            answers.add(askers.submit(() -> sweep.killAll(idle)));
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> sweep.asked.size() == 5);
        } finally {
            sweep.sweeping.unlock();
        }
        for (int i = 0; i < uids.size(); i++) {
            assertThat(answers.get(i).get()).as("killed of uid %d", uids.get(i)).isEqualTo(i + 1);
            assertThat(ProcFs.ownedBy(uids.get(i))).isEmpty();
        }
        assertThat(answers.get(4).get()).isZero();
        assertThat(sweep.sweeps).as("one sweep for the five asks").isEqualTo(1);
        askers.shutdown();
    }
}
