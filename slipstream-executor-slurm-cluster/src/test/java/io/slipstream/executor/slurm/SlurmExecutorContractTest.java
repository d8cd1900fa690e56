package io.slipstream.executor.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.BaseExecutorContractTest;
import io.slipstream.executor.Executor;
import io.slipstream.testing.SlurmCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Slurm executor held to the Executor contract against a real Slurm cluster on this machine ({@link SlurmCluster}):
 * every instance a job of it. Its GPUs are Slurm's choice (GRES), so an instance sees as many as it asked for, not the
 * indices the control plane chose. Skipped, saying why, where Slurm or root is missing.
 */
class SlurmExecutorContractTest extends BaseExecutorContractTest {
    @RegisterExtension
    static final SlurmCluster CLUSTER = new SlurmCluster();

    /** The shared file system of the test's executors (all of one test share it) and their state. */
    @TempDir
    Path dataDir;

    @Override
    protected Executor createExecutor() {
        return new SlurmExecutor(settings(dataDir.resolve("shared")), dataDir.resolve("state"), Clock.systemUTC());
    }

    /** The executor's settings: every job as the server's account (root, allowed here). */
    SlurmSettings settings(Path shared) {
        return ClusterSettings.of(CLUSTER, shared);
    }

    @Override
    protected String nodeName() {
        return SlurmCluster.node(1);
    }

    /** Slurm ended its job and no process of it is left on this machine (where every node is). */
    @Override
    protected void assertNothingRuns(Map<String, String> handle) {
        try {
            CLUSTER.assertJobGone(handle.get(SlurmHandles.JOB));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Override
    protected String identityKey() {
        return SlurmHandles.JOB;
    }

    @Override
    protected boolean exposesTheChosenGpus() {
        return false;
    }

    @Override
    protected String gate(InstanceId id) {
        Path fifo = dataDir.resolve("gate-" + id.runId());
        try {
            assertThat(new ProcessBuilder(List.of("mkfifo", fifo.toString())).start().waitFor()).isZero();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        return fifo.toString();
    }

    @Override
    protected void openGate(InstanceId id) throws Exception {
        Files.writeString(dataDir.resolve("gate-" + id.runId()), "go\n");
    }
}
