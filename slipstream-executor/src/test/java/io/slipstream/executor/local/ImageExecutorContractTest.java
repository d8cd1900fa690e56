package io.slipstream.executor.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.BaseExecutorContractTest;
import io.slipstream.executor.Executor;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.image.ImageCache;
import io.slipstream.executor.local.image.ImageReference;
import io.slipstream.executor.local.image.ImageSettings;
import io.slipstream.executor.local.process.SupervisorProgram;
import io.slipstream.executor.local.process.ProcFs;
import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.executor.local.uid.UidRangeClaims;
import io.slipstream.testing.BusyboxImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * The contract again with every instance in a container image (busybox, as CI builds it) and every run under a uid
 * of its own. The tests' gates are FIFOs in the unpacked image (read-only to instances, but a FIFO on a read-only
 * mount can still be opened): the test unpacks the image into the executor's cache before the executor does, as the
 * executor would, and makes them there. Needs root and the image tools (as CI has); skipped otherwise, saying why.
 */
class ImageExecutorContractTest extends BaseExecutorContractTest {
    @TempDir
    static Path images;
    @TempDir
    Path dataDir;

    private Isolation isolation;
    private Path gates;

    @BeforeAll
    static void buildImage() throws Exception {
        String missing = BusyboxImage.missing();
        assumeTrue(missing == null, () -> "skipped: " + missing);
        BusyboxImage.build(images);
    }

    @BeforeEach
    void setUp() throws Exception {
        Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwx--x--x"));
        isolation = UidRangeClaims.claim(Path.of(UidRangeClaims.DEFAULT_DIRECTORY), dataDir, null);
        ImageCache cache = new ImageCache(dataDir.resolve("images"), ImageCache.DEFAULT_PULL_TIMEOUT, Clock.systemUTC());
        Path rootfs = cache.prepare("contract", ImageReference.parse(image()), null, null).rootfs();
        gates = Files.createDirectories(rootfs.resolve("gates"));
        Files.setPosixFilePermissions(gates, PosixFilePermissions.fromString("rwxrwxrwx"));
    }

    @Override
    protected String image() {
        return "oci-archive:" + images.resolve("busybox.tar");
    }

    @Override
    protected boolean refusesMissingCommandsAtLaunch() {
        return true;
    }

    @Override
    protected Executor createExecutor() {
        List<NodeInfo> nodes = List.of(new NodeInfo("node-1", new Resources(32000, 256L << 30, 8, "sim-gpu"), null, Map.of()));
        return new LocalProcessExecutor(dataDir.resolve("instances"), nodes, LocalProcessExecutor.DEFAULT_INHERITED_ENV, isolation, null,
                LocalProcessExecutor.DEFAULT_LOG_LIMIT_BYTES, 0, ImageSettings.DEFAULTS, launcher(), Clock.systemUTC());
    }

    /** What starts the instances: the launcher binary where the build made one (ShellLaunchedImageExecutorTest: the shell). */
    protected SupervisorProgram.Mode launcher() {
        return BuiltProgram.mode();
    }

    @Override
    protected String nodeName() {
        return "node-1";
    }

    @Override
    protected void assertNothingRuns(Map<String, String> handle) {
        assertThat(ProcFs.treeOf(Long.parseLong(handle.get("pid")))).isEmpty();
    }

    @Override
    protected String gate(InstanceId id) {
        try {
            Path fifo = gates.resolve(id.runId().value());
            assertThat(new ProcessBuilder("mkfifo", "-m", "666", fifo.toString()).start().waitFor()).isZero();
            return "/gates/" + id.runId().value();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Override
    protected void openGate(InstanceId id) throws Exception {
        Files.writeString(gates.resolve(id.runId().value()), "go\n");
    }
}
