package io.slipstream.executor.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.Activity;
import io.slipstream.executor.Executor;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.LogChunk;
import io.slipstream.executor.LogStream;
import io.slipstream.executor.NodeInfo;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Instances that attack the executor that runs them as root, with a uid of their own: every file the server reads or
 * writes for an instance is tried as a symbolic link, a FIFO and a hard link to a file of the server's, and the file
 * the server keeps must come out of it unchanged. Needs root (as CI has); skipped otherwise.
 */
@Timeout(120) // a read that blocks on a FIFO would hang the test instead of failing it
class HostileInstanceTest {
    private static final Duration DEADLINE = Duration.ofSeconds(30);
    private static final AtomicInteger RUNS = new AtomicInteger();
    /** Every name the server reads or writes in an instance's directory. */
    private static final List<String> CONTROL_FILES = List.of("pid", "exit_code", "stdout.log", "stderr.log", "supervisor.log", "metadata.json",
            "metadata.json.tmp", "preemption_notice.json", "preemption_notice.json.tmp", "terminate_requested", "probe.json", "probe.json.tmp",
            "ready", "ready.tmp", "stdout.log.start", "stdout.log.start.tmp", "report", "work", "tmp");

    @TempDir
    Path dataDir;

    private Path target;
    private Isolation isolation;
    private String targetSum;
    private final List<Executor> executors = new ArrayList<>();
    private final LinkedBlockingQueue<InstanceReport> reports = new LinkedBlockingQueue<>();

    @BeforeEach
    void setUp() throws Exception {
        assumeTrue(Isolation.runningAsRoot(), "switching users needs root");
        Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwx--x--x"));
        // A file of the server's that instances must neither read nor change: the admin token, the store, /etc/shadow.
        target = Files.writeString(dataDir.resolve("admin.token"), "{\"step\": 99}\n");
        Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-------"));
        targetSum = checksum(target);
        // Claimed like a server claims its uids, so that no other test or server on this machine shares them.
        isolation = UidRangeClaims.claim(Path.of(UidRangeClaims.DEFAULT_DIRECTORY), dataDir, null);
    }

    @AfterEach
    void tearDown() throws Exception {
        executors.forEach(Executor::close);
        if (target != null) {
            assertThat(checksum(target)).as("the server's file is unchanged").isEqualTo(targetSum);
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(target))).isEqualTo("rw-------");
        }
    }

    private LocalProcessExecutor newExecutor(long logLimit) {
        List<NodeInfo> nodes = List.of(new NodeInfo("node-1", new Resources(32000, 256L << 30, 8, "sim-gpu"), null, Map.of()));
        LocalProcessExecutor executor = new LocalProcessExecutor(dataDir.resolve("instances"), nodes, LocalProcessExecutor.DEFAULT_INHERITED_ENV,
                isolation, null, logLimit, Clock.systemUTC());
        executor.setListener(reports::add);
        executors.add(executor);
        return executor;
    }

    private static InstanceId newInstanceId() {
        return new InstanceId(new RunId("hostile-" + RUNS.incrementAndGet()), 1, 0);
    }

    private static LaunchSpec spec(InstanceId id, String script) {
        return new LaunchSpec(id, "main-0", "node-1", List.of(), List.of("sh", "-c", script), Map.of(), null, null);
    }

    @Test
    void theWorkloadCanPlantNothingInTheDirectoryTheServerWritesAndReads() throws Exception {
        LocalProcessExecutor executor = newExecutor(0);
        InstanceId id = newInstanceId();
        StringBuilder script = new StringBuilder("cd ..; ");
        for (String name : CONTROL_FILES) {
            script.append(attempt("ln -sfT " + target + " " + name, "symlink " + name))
                    .append(attempt("rm -rf " + name + " && mkfifo " + name, "fifo " + name))
                    .append(attempt("ln -fT " + target + " " + name, "hardlink " + name))
                    .append(attempt("mv " + name + " moved-" + name, "rename " + name));
        }
        script.append("echo attacks done; exec sleep 600");
        Map<String, String> handle = executor.launch(spec(id, script.toString()));
        String out = awaitOutput(executor, id, handle, "attacks done");

        // Now the server writes there (the notice, the stop marker) and reads there (exit code, logs).
        executor.terminate(id, handle, Duration.ofSeconds(5), "preempted by an attacker's test");
        InstanceReport.Exited exited = awaitReport(id, InstanceReport.Exited.class);
        assertThat(exited.terminated()).isTrue();
        assertThat(out).doesNotContain("ALLOWED").contains("refused symlink stdout.log", "refused fifo exit_code", "refused hardlink ready");
        assertThat(new String(executor.readLogTail(id, handle, LogStream.STDOUT, 1 << 20).data(), StandardCharsets.UTF_8)).doesNotContain("99");
        Path dir = Path.of(handle.get("dir"));
        assertThat(Files.isRegularFile(dir.resolve("preemption_notice.json"), LinkOption.NOFOLLOW_LINKS)).isTrue();
    }

    private static String attempt(String command, String what) {
        return "if " + command + " 2>/dev/null; then echo 'ALLOWED " + what + "'; else echo 'refused " + what + "'; fi; ";
    }

    @Test
    void aReportFileThatIsALinkAFifoOrAnotherFilesHardLinkIsNeverFollowedNorBlockedOn() throws Exception {
        LocalProcessExecutor executor = newExecutor(0);
        InstanceId id = newInstanceId();
        Map<String, String> handle = executor.launch(spec(id,
                "ln -s " + target + " \"$SLIPSTREAM_PROGRESS_FILE\" && echo linked; exec sleep 600"));
        awaitOutput(executor, id, handle, "linked");
        assertThat(executor.activity(id, handle).progress()).as("a link to the server's file").isNull();

        Path progress = Path.of(handle.get("dir")).resolve("report/progress.json");
        Files.delete(progress);
        assertThat(new ProcessBuilder("mkfifo", progress.toString()).start().waitFor()).isZero();
        assertThat(executor.activity(id, handle).progress()).as("a FIFO, never opened").isNull();

        // What protected_hardlinks keeps a workload from doing, done here as root: the file's owner gives it away.
        Files.delete(progress);
        Files.createLink(progress, target);
        assertThat(executor.activity(id, handle).progress()).as("a hard link to a file of the server's").isNull();

        Files.delete(progress);
        Files.createDirectory(progress);
        assertThat(executor.activity(id, handle).progress()).as("a directory").isNull();

        // A FIFO as the acknowledgement counts as one: it is only looked at, never opened.
        Path ack = progress.resolveSibling("preemption_ack");
        assertThat(new ProcessBuilder("mkfifo", ack.toString()).start().waitFor()).isZero();
        executor.terminate(id, handle, Duration.ofSeconds(60), "test");
        assertThat(awaitReport(id, InstanceReport.Exited.class).terminated()).isTrue();
    }

    @Test
    void aProgressFileTheWorkloadWritesIsStillRead() throws Exception {
        LocalProcessExecutor executor = newExecutor(0);
        InstanceId id = newInstanceId();
        Map<String, String> handle = executor.launch(spec(id,
                "echo '{\"step\": 12}' > \"$SLIPSTREAM_PROGRESS_FILE.tmp\" && mv \"$SLIPSTREAM_PROGRESS_FILE.tmp\" \"$SLIPSTREAM_PROGRESS_FILE\" "
                        + "&& echo reported; exec sleep 600"));
        awaitOutput(executor, id, handle, "reported");
        Activity activity = executor.activity(id, handle);
        assertThat(activity.progress()).isNotNull();
        assertThat(activity.progress().step()).isEqualTo(12);
        assertThat(Files.list(dataDir.resolve("instances/.pins"))).as("pins are removed").isEmpty();
        executor.terminate(id, handle, Duration.ZERO, "test");
        awaitReport(id, InstanceReport.Exited.class);
    }

    @Test
    void logsAreKeptToTheirLimitAndReadFromWhereTheKeptPartBegins() throws Exception {
        long limit = 1 << 20;
        LocalProcessExecutor executor = newExecutor(limit);
        InstanceId id = newInstanceId();
        // 8 MB of lines, then a last line; then it waits to be looked at.
        Map<String, String> handle = executor.launch(spec(id, "yes \"$(printf '%099d' 0)\" | head -n 80000; echo the-end; exec sleep 600"));
        awaitOutput(executor, id, handle, "the-end");
        Path log = Path.of(handle.get("dir")).resolve("stdout.log");
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (allocatedBytes(log) > limit + limit / 4) {
            assertThat(System.nanoTime()).as("the log is trimmed within the deadline").isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(100);
        }
        assertThat(Files.size(log)).as("offsets stay valid: the size does not shrink").isGreaterThan(8_000_000L);
        LogChunk first = executor.readLog(id, handle, LogStream.STDOUT, 0, 4096);
        assertThat(first.nextOffset()).as("a read from 0 starts where the kept part begins").isGreaterThan(6_000_000L);
        assertThat(new String(first.data(), StandardCharsets.UTF_8)).doesNotContain("\0");
        assertThat(new String(executor.readLogTail(id, handle, LogStream.STDOUT, 100).data(), StandardCharsets.UTF_8)).endsWith("the-end\n");
        executor.terminate(id, handle, Duration.ZERO, "test");
        awaitReport(id, InstanceReport.Exited.class);
    }

    private static long allocatedBytes(Path file) throws Exception {
        Process stat = new ProcessBuilder("stat", "-c", "%b %B", file.toString()).start();
        String[] fields = new String(stat.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim().split(" ");
        stat.waitFor();
        return Long.parseLong(fields[0]) * Long.parseLong(fields[1]);
    }

    private String awaitOutput(Executor executor, InstanceId id, Map<String, String> handle, String text) throws InterruptedException {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (System.nanoTime() < deadline) {
            String out = new String(executor.readLogTail(id, handle, LogStream.STDOUT, 1 << 20).data(), StandardCharsets.UTF_8);
            if (out.contains(text)) {
                return out;
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
        throw new AssertionError("no '" + text + "' from " + id + " within " + DEADLINE);
    }

    private <R extends InstanceReport> R awaitReport(InstanceId id, Class<R> type) throws InterruptedException {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (System.nanoTime() < deadline) {
            InstanceReport report = reports.poll(100, TimeUnit.MILLISECONDS);
            if (report != null && report.id().equals(id) && type.isInstance(report)) {
                return type.cast(report);
            }
        }
        throw new AssertionError("no " + type.getSimpleName() + " for " + id + " within " + DEADLINE);
    }

    private static String checksum(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }
}
