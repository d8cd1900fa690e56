package io.slipstream.executor.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.Executor;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.testing.SlurmCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The admin's guard of the partition (docs/slurm.md's {@code job_submit.lua}, which {@link SlurmCluster} installs
 * here): a tenant's account cannot submit jobs of its own into it, with or without naming it, nor move a job there,
 * while the server's jobs, submitted as that account ({@code sbatch --uid} from root), still run.
 */
class SlurmSubmitGuardTest {
    @RegisterExtension
    static final SlurmCluster CLUSTER = new SlurmCluster(SlurmCluster.NODES - 1, true);
    private static final String TENANT = "slipstream-sg-a";

    @TempDir
    static Path dataDir;

    @BeforeAll
    static void addAccount() throws Exception {
        if (SlurmAccountsContractTest.run("id", "-u", TENANT) != 0) {
            assertThat(SlurmAccountsContractTest.run("useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin",
                    TENANT)).isZero();
        }
        Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @AfterAll
    static void removeAccount() throws Exception {
        SlurmAccountsContractTest.run("userdel", TENANT);
    }

    /** What a Slurm command run as the tenant printed, and how it exited. */
    private static String asTenant(String... argv) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("runuser", "-u", TENANT, "--", "env", "SLURM_CONF=" + CLUSTER.conf()));
        command.addAll(List.of(argv));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).directory(dataDir.toFile()).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return "exit " + process.exitValue() + ": " + out;
    }

    @Test
    void aTenantsOwnJobsAreRefusedAndTheServersJobsForItRun() throws Exception {
        assertThat(asTenant("sbatch", "--partition=" + SlurmCluster.PARTITION, "--nodelist=" + SlurmCluster.node(1), "--wrap=sleep 600"))
                .startsWith("exit 1").contains("takes Slipstream's jobs only");
        assertThat(asTenant("sbatch", "--wrap=sleep 600")).as("the default partition, which is Slipstream's here").startsWith("exit 1")
                .contains("takes Slipstream's jobs only");
        assertThat(CLUSTER.slurm("squeue", "--noheader", "--format=%i")).isBlank();

        SlurmSettings settings = ClusterSettings.of(CLUSTER, dataDir.resolve("shared")).withTrustedTenants(false).withAllowRootJobs(false)
                .withUsers(Map.of("team-a", TENANT));
        LinkedBlockingQueue<InstanceReport> reports = new LinkedBlockingQueue<>();
        try (Executor executor = new SlurmExecutor(settings, dataDir.resolve("state"), Clock.systemUTC())) {
            executor.setListener(reports::add);
            InstanceId id = new InstanceId(new RunId("guarded"), 1, 0);
            io.slipstream.api.run.ClusterMetadata metadata = new io.slipstream.api.run.ClusterMetadata(
                    io.slipstream.api.run.ClusterMetadata.FORMAT_VERSION, "guarded", "team-a", "job", 1, 1, "InParallel",
                    new io.slipstream.api.run.ClusterMetadata.Address("127.0.0.1", 40000), List.of(), List.of());
            executor.launch(new LaunchSpec(id, "main-0", SlurmCluster.node(1), List.of(), List.of("sh", "-c", "exit 3"), Map.of(), null, null,
                    metadata, null));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            InstanceReport end = null;
            while (end == null && System.nanoTime() < deadline) {
                InstanceReport report = reports.poll(100, TimeUnit.MILLISECONDS);
                end = report instanceof InstanceReport.Exited ? report : null;
            }
            assertThat(end).as("the server's job for the tenant ran").isInstanceOfSatisfying(InstanceReport.Exited.class,
                    exited -> assertThat(exited.exitCode()).isEqualTo(3));
        }
    }
}
