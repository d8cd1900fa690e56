package io.slipstream.executor.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.SecretValue;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.executor.local.uid.UidRangeClaims;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The local executor's secret files: private to the instance while it runs, gone once it ended, never kept in what the
 * server writes for itself (written and removed without following any link planted in their place: files.SecretFilesTest).
 */
class InstanceSecretsTest {
    private static final String VALUE = "hf_value-" + System.nanoTime();

    @TempDir
    Path dataDir;

    private final LinkedBlockingQueue<InstanceReport> reports = new LinkedBlockingQueue<>();

    private LocalProcessExecutor executor(Isolation isolation) {
        List<NodeInfo> nodes = List.of(new NodeInfo("node-1", new Resources(32000, 256L << 30, 0, null), null, Map.of()));
        LocalProcessExecutor executor = new LocalProcessExecutor(dataDir.resolve("instances"), nodes, LocalProcessExecutor.DEFAULT_INHERITED_ENV,
                isolation, Clock.systemUTC());
        executor.setListener(reports::add);
        return executor;
    }

    private static LaunchSpec spec(InstanceId id, String script) {
        SecretValue secret = SecretValue.of(VALUE);
        return new LaunchSpec(id, "main-0", "node-1", List.of(), List.of("sh", "-c", script), Map.of(), null, null, null,
                new io.slipstream.api.spec.StartupProbe(List.of("sh", "-c", "test -n \"$API_KEY\""), 1, 30, 0), null,
                Map.of("API_KEY", new LaunchSpec.SecretEnv("hf", "token", secret)),
                List.of(new LaunchSpec.SecretFiles("hf", null, Map.of("token", secret))));
    }

    private InstanceReport.Exited awaitExit(InstanceId id) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            InstanceReport report = reports.poll(100, TimeUnit.MILLISECONDS);
            if (report instanceof InstanceReport.Exited exited && exited.id().equals(id)) {
                return exited;
            }
        }
        throw new AssertionError("no exit of " + id);
    }

    private void checkFilesWhileRunningAndAfter(Isolation isolation, List<String> expectedModes) throws Exception {
        try (LocalProcessExecutor executor = executor(isolation)) {
            InstanceId id = new InstanceId(new RunId("secrets-" + System.nanoTime()), 1, 0);
            Path gate = dataDir.resolve("gate");
            Map<String, String> handle = executor.launch(spec(id, "stat -c '%a %U' \"$SLIPSTREAM_SECRETS_DIR\" \"$SLIPSTREAM_SECRETS_DIR/hf\" "
                    + "\"$SLIPSTREAM_SECRETS_DIR/hf/token\" > \"$TMPDIR/modes\"; touch \"$TMPDIR/seen\"; while [ ! -e " + gate + " ]; do sleep 0.05; done"));
            Path dir = dataDir.resolve("instances").resolve(handle.get("dir"));
            Path modes = dir.resolve("tmp/modes");
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!Files.exists(dir.resolve("tmp/seen"))) {
                assertThat(System.nanoTime()).isLessThan(deadline);
                TimeUnit.MILLISECONDS.sleep(20);
            }
            assertThat(Files.readAllLines(modes)).isEqualTo(expectedModes);
            assertThat(Files.readString(dir.resolve("secrets/hf/token"))).isEqualTo(VALUE);
            // What the server keeps for itself (the probe, to resume it after a restart) holds no secret.
            assertThat(Files.readString(dir.resolve("probe.json"))).doesNotContain(VALUE).isNotEmpty();
            Files.writeString(gate, "");
            assertThat(awaitExit(id).exitCode()).isZero();
            assertThat(dir.resolve("secrets")).doesNotExist();
            try (var files = Files.walk(dir)) {
                for (Path file : files.filter(Files::isRegularFile).toList()) {
                    assertThat(Files.readString(file, StandardCharsets.ISO_8859_1)).as(file.toString()).doesNotContain(VALUE);
                }
            }
        }
    }

    @Test
    void filesAreTheInstancesOnlyWhileItRuns() throws Exception {
        String me = System.getProperty("user.name");
        checkFilesWhileRunningAndAfter(Isolation.off(), List.of("500 " + me, "500 " + me, "400 " + me));
    }

    @Test
    void withIsolationOnlyTheRunsGroupMayReadThem() throws Exception {
        assumeTrue(Isolation.runningAsRoot(), "switching users needs root");
        Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwx--x--x"));
        // The server's files, readable by the run's group alone: the workload can neither change nor rearrange them.
        checkFilesWhileRunningAndAfter(UidRangeClaims.claim(Path.of(UidRangeClaims.DEFAULT_DIRECTORY), dataDir, null),
                List.of("550 root", "550 root", "440 root"));
    }
}
