package io.slipstream.executor.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.Resources;
import io.slipstream.api.spec.SecretValue;
import io.slipstream.executor.IdentityToken;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.NodeInfo;
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
 * A hostile workload with its own uid attacks the files of its identity tokens: it cannot replace one with a link, plant
 * a FIFO where a refresh writes, or remove one; the refresh replaces the tokens it reads; they are the run's group's to
 * read only, and gone once it ended.
 */
class InstanceIdentityTest {
    private static final String NONCE = Long.toString(System.nanoTime());

    @TempDir
    Path dataDir;

    private final LinkedBlockingQueue<InstanceReport> reports = new LinkedBlockingQueue<>();

    private static List<IdentityToken> tokens(String which) {
        return List.of(new IdentityToken("vault", IdentityToken.fileOf(0), SecretValue.of(which + "-vault-" + NONCE)));
    }

    @Test
    void aWorkloadCannotReplaceItsTokensAndARefreshReplacesThemWhereItReads() throws Exception {
        assumeTrue(io.slipstream.executor.local.uid.Isolation.runningAsRoot(), "switching users needs root");
        Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwx--x--x"));
        Path precious = Files.writeString(dataDir.resolve("precious"), "precious");
        Path gate = dataDir.resolve("gate");
        List<NodeInfo> nodes = List.of(new NodeInfo("node-1", new Resources(32000, 256L << 30, 0, null), null, Map.of()));
        try (LocalProcessExecutor executor = new LocalProcessExecutor(dataDir.resolve("instances"), nodes, LocalProcessExecutor.DEFAULT_INHERITED_ENV,
                UidRangeClaims.claim(Path.of(UidRangeClaims.DEFAULT_DIRECTORY), dataDir, null), Clock.systemUTC())) {
            executor.setListener(reports::add);
            InstanceId id = new InstanceId(new RunId("identity-" + NONCE), 1, 0);
            String script = "f=\"$SLIPSTREAM_IDENTITY_TOKEN_FILE\"; d=$(dirname \"$f\"); out=\"$TMPDIR/attempts\"; "
                    + "stat -c '%a %U' \"$d\" \"$f\" > \"$TMPDIR/modes\"; "
                    + "ln -sf " + precious + " \"$f\" 2>/dev/null && echo linked >> $out; "
                    + "ln -s " + precious + " \"$d/.token-0.jwt.new\" 2>/dev/null && echo planted-link >> $out; "
                    + "mkfifo \"$d/.token-0.jwt.new\" 2>/dev/null && echo planted-fifo >> $out; "
                    + "rm -f \"$f\" 2>/dev/null; [ -e \"$f\" ] || echo removed >> $out; "
                    + "chmod 777 \"$d\" 2>/dev/null && echo chmod >> $out; "
                    + "echo done >> $out; while [ ! -e " + gate + " ]; do sleep 0.05; done; cat \"$f\"";
            LaunchSpec spec = new LaunchSpec(id, "main-0", "node-1", List.of(), List.of("sh", "-c", script), Map.of(), null, null)
                    .withIdentity(tokens("first"));
            Map<String, String> handle = executor.launch(spec);
            Path dir = dataDir.resolve("instances").resolve(handle.get("dir"));
            Path attempts = dir.resolve("tmp/attempts");
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!Files.exists(attempts) || !Files.readString(attempts).contains("done")) {
                assertThat(System.nanoTime()).as("the workload tried everything").isLessThan(deadline);
                TimeUnit.MILLISECONDS.sleep(20);
            }
            assertThat(Files.readAllLines(attempts)).containsExactly("done");
            assertThat(Files.readAllLines(dir.resolve("tmp/modes"))).containsExactly("750 root", "440 root");

            // Launched again (a control plane that crashed before recording the launch): adopted, with the new server's tokens.
            assertThat(executor.launch(spec.withIdentity(tokens("adopted")))).isEqualTo(handle);
            assertThat(Files.readString(dir.resolve("identity/token-0.jwt"))).isEqualTo("adopted-vault-" + NONCE);
            assertThat(executor.refreshIdentity(id, handle, tokens("second"))).isTrue();
            assertThat(Files.readString(precious)).isEqualTo("precious");
            Files.writeString(gate, "");
            InstanceReport.Exited exited = awaitExit(id);
            assertThat(exited.exitCode()).isZero();
            assertThat(executor.readLog(id, handle, io.slipstream.executor.LogStream.STDOUT, 0, 4096).data())
                    .asString(StandardCharsets.UTF_8).isEqualTo("second-vault-" + NONCE);
            assertThat(dir.resolve("identity")).as("gone once it ended").doesNotExist();
            assertThat(executor.refreshIdentity(id, handle, tokens("third"))).isFalse();
            assertThat(dir.resolve("identity")).doesNotExist();
            try (var files = Files.walk(dir)) {
                for (Path file : files.filter(Files::isRegularFile).filter(f -> !f.getFileName().toString().equals("stdout.log")).toList()) {
                    assertThat(Files.readString(file, StandardCharsets.ISO_8859_1)).as(file.toString()).doesNotContain(NONCE);
                }
            }
        }
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
}
