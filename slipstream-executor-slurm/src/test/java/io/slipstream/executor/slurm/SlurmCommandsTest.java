package io.slipstream.executor.slurm;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.executor.ExecutorException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A Slurm that does not answer, or is not there, fails a call at once and says why: nothing waits on it for long. */
class SlurmCommandsTest {
    @TempDir
    Path tmp;

    /** A slurm.conf whose controller is a port nothing listens on. */
    private Path deadController() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        Path conf = tmp.resolve("slurm.conf");
        Files.writeString(conf, "ClusterName=gone\nSlurmctldHost=localhost\nSlurmctldPort=" + port + "\nAuthType=auth/none\n"
                + "NodeName=node01 CPUs=1 State=UNKNOWN\nPartitionName=slipstream Nodes=node01\n");
        return conf;
    }

    private static void assumeSlurmClient() {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/sinfo")) || Files.isExecutable(Path.of("/usr/local/bin/sinfo")),
                "skipped: Slurm's client is not installed (apt-get install slurm-wlm)");
    }

    @Test
    void aControllerThatDoesNotAnswerFailsTheCommandWhenItsTimeIsUp() throws Exception {
        assumeSlurmClient();
        SlurmCommands commands = new SlurmCommands(null, deadController(), Duration.ofSeconds(2));
        assertThatThrownBy(() -> commands.run("squeue", "--noheader")).isInstanceOf(ExecutorException.class)
                .hasMessageContaining("Slurm did not answer: squeue took longer than 2 s (slurm.commandTimeout)");
    }

    @Test
    void anExecutorCannotStartWithoutAController() throws Exception {
        assumeSlurmClient();
        SlurmSettings settings = SlurmSettings.defaults(tmp.resolve("shared")).withTrustedTenants(true).withAllowRootJobs(true)
                .withSlurmConf(deadController()).withCommandTimeout(Duration.ofSeconds(2));
        assertThatThrownBy(() -> new SlurmExecutor(settings, tmp.resolve("state"), Clock.systemUTC())).isInstanceOf(ExecutorException.class)
                .hasMessageContaining("sinfo took longer than 2 s");
    }

    @Test
    void aMissingCommandSaysSo() {
        SlurmCommands commands = new SlurmCommands(tmp.resolve("no-slurm-here"), null, Duration.ofSeconds(2));
        assertThatThrownBy(() -> commands.run("sbatch", "--parsable")).isInstanceOf(ExecutorException.class)
                .hasMessageContaining("cannot run sbatch").hasMessageContaining("slurm.commands");
    }
}
