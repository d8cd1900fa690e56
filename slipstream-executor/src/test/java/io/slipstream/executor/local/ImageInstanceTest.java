package io.slipstream.executor.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.NetworkMode;
import io.slipstream.api.spec.Resources;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.LogStream;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.image.ImageCache;
import io.slipstream.executor.local.image.ImageReference;
import io.slipstream.executor.local.network.PingApi;
import io.slipstream.executor.local.network.RunNetworks;
import io.slipstream.executor.local.process.ProcFs;
import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.executor.local.uid.UidRangeClaims;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Instances in a container image on the local executor (bubblewrap, an image built from busybox as CI builds it), and
 * each run's private network: ranks of a run reach each other, nothing of another run or of the machine reaches them
 * or is reached by them, and the API is reachable through the run's forwarder. Needs root and the tools (as CI has);
 * skipped otherwise, saying why.
 */
@Timeout(180)
class ImageInstanceTest {
    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final AtomicInteger RUNS = new AtomicInteger();

    @TempDir
    static Path images;
    @TempDir
    Path dataDir;

    private Isolation isolation;
    private final List<Executor> executors = new ArrayList<>();
    private final LinkedBlockingQueue<InstanceReport> reports = new LinkedBlockingQueue<>();
    private final List<InstanceReport> seen = new ArrayList<>();
    private final List<RunId> runs = new ArrayList<>();

    @BeforeAll
    static void buildImage() throws Exception {
        String missing = io.slipstream.testing.BusyboxImage.missing();
        assumeTrue(missing == null, () -> "skipped: " + missing);
        io.slipstream.testing.BusyboxImage.build(images);
    }

    @BeforeEach
    void setUp() throws Exception {
        Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwx--x--x"));
        isolation = UidRangeClaims.claim(Path.of(UidRangeClaims.DEFAULT_DIRECTORY), dataDir, null);
    }

    @AfterEach
    void tearDown() throws Exception {
        executors.forEach(Executor::close);
        // Networks outlive the executor (as they outlive a server's restart): removed with whatever runs in them.
        RunNetworks networks = new RunNetworks(dataDir.resolve("instances"));
        runs.forEach(networks::remove);
        networks.close();
    }

    private LocalProcessExecutor newExecutor() {
        List<NodeInfo> nodes = List.of(new NodeInfo("node-1", new Resources(32000, 256L << 30, 8, "sim-gpu"), null, Map.of()));
        LocalProcessExecutor executor = new LocalProcessExecutor(dataDir.resolve("instances"), nodes, LocalProcessExecutor.DEFAULT_INHERITED_ENV,
                isolation, null, 0, 0, Clock.systemUTC(), List.of(), io.slipstream.executor.local.image.ImageSettings.DEFAULTS,
                io.slipstream.executor.local.process.SupervisorProgram.Mode.auto, io.slipstream.executor.local.cgroup.Cgroups.off(), false);
        executor.setListener(reports::add);
        executor.fence(1);
        executors.add(executor);
        return executor;
    }

    private RunId newRun() {
        RunId run = new RunId("image-" + RUNS.incrementAndGet());
        runs.add(run);
        return run;
    }

    private static String archive() {
        return "oci-archive:" + images.resolve("busybox.tar");
    }

    private static LaunchSpec spec(InstanceId id, String image, Map<String, String> env, NetworkMode network, String... command) {
        return new LaunchSpec(id, "main-" + id.rank(), "node-1", List.of(), List.of(command), env, null, image).withNetwork(network);
    }

    @Test
    void anInstanceRunsInItsImageAsTheRunsUidAndSeesNothingOfTheMachine() throws Exception {
        Path secret = Files.writeString(dataDir.resolve("admin.token"), "ss_secret\n");
        LocalProcessExecutor executor = newExecutor();
        InstanceId id = new InstanceId(newRun(), 1, 0);
        Map<String, String> handle = launch(executor, spec(id, archive(), Map.of("FROM_JOB", "yes"), NetworkMode.Private, "sh", "-c",
                "id -u; cat /etc/os-release; echo \"says=$IMAGE_SAYS job=$FROM_JOB home=$HOME tmp=$TMPDIR pwd=$(pwd)\"; "
                        + "test -e " + secret + " || echo no-server-files; test -e /etc/passwd || echo no-host-etc; "
                        + "touch /bin/x 2>/dev/null || echo read-only-image; echo kept > \"$HOME/out\" && echo wrote-home; "
                        + "echo t > /tmp/t && echo wrote-tmp; ls /proc | grep -c '^[0-9]'; exit 7"));
        InstanceReport.Exited exited = awaitReport(id, InstanceReport.Exited.class);
        String out = log(executor, id, handle);
        assertThat(exited.exitCode()).as(out).isEqualTo(7);
        List<String> lines = out.lines().toList();
        assertThat(Integer.parseInt(lines.get(0))).isBetween(isolation.firstUid(), isolation.firstUid() + isolation.uidCount() - 1);
        assertThat(out).contains("ID=slipstream-test-busybox", "says=hello job=yes home=/slipstream/instance/work tmp=/tmp pwd=/slipstream/instance/work",
                "no-server-files", "no-host-etc", "read-only-image", "wrote-home", "wrote-tmp");
        assertThat(lines.get(lines.size() - 1)).as("processes it sees: its own namespace's (init, sh, ls, grep)").isIn("3", "4");
        Path dir = dataDir.resolve("instances").resolve(handle.get("dir"));
        assertThat(Files.readString(dir.resolve("work").resolve("out"))).isEqualTo("kept\n");
        assertThat(dir.resolve("sandbox.args")).as("the environment, the token with it, is not left on disk").doesNotExist();
    }

    @Test
    void fourRanksOfARunPassATokenAroundTheirPrivateNetwork() throws Exception {
        LocalProcessExecutor executor = newExecutor();
        RunId run = newRun();
        List<Integer> ports = freePorts(4);
        // The listener hands the connection to a script that reads it to its end (busybox nc on its own may see its
        // stdin, /dev/null, end first and drop what came in); a listen that fails (a client's ephemeral port took the
        // port: all of them share the run's loopback) is tried again.
        String ring = "send() { i=0; while [ $i -lt 600 ]; do echo \"$1\" | nc 127.0.0.1 \"$2\" 2>/dev/null && return 0; i=$((i+1)); sleep 0.1; done;"
                + " return 1; }; "
                + "printf '#!/bin/sh\\nexec cat > /tmp/heard\\n' > /tmp/recv; chmod +x /tmp/recv; "
                + "hear() { i=0; heard=; while [ -z \"$heard\" ] && [ $i -lt 100 ]; do nc -l -p \"$MY_PORT\" -e /tmp/recv;"
                + " heard=$(cat /tmp/heard 2>/dev/null); echo \"try $i heard=[$heard]\" >&2; i=$((i+1)); done; }; "
                + "if [ \"$RANK\" = 0 ]; then (hear; echo \"$heard\" > /tmp/in) & l=$!; send 0 \"$NEXT_PORT\" || exit 3; wait $l; echo \"ring=$(cat /tmp/in)\";"
                + " else hear; send \"$heard$RANK\" \"$NEXT_PORT\" || exit 3; echo \"passed=$heard$RANK\"; fi";
        Map<InstanceId, Map<String, String>> handles = new HashMap<>();
        for (int rank = 0; rank < 4; rank++) {
            InstanceId id = new InstanceId(run, 1, rank);
            handles.put(id, launch(executor, spec(id, archive(), Map.of("RANK", Integer.toString(rank), "MY_PORT", ports.get(rank).toString(),
                    "NEXT_PORT", ports.get((rank + 1) % 4).toString()), NetworkMode.Private, "sh", "-c", ring)));
        }
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        for (int rank = 0; rank < 4; rank++) {
            InstanceId id = new InstanceId(run, 1, rank);
            InstanceReport.Exited exited = null;
            while (exited == null && System.nanoTime() < deadline) {
                exited = pollReport(id, InstanceReport.Exited.class);
            }
            StringBuilder all = new StringBuilder();
            handles.forEach((other, handle) -> all.append(other).append(":\n").append(log(executor, other, handle)));
            assertThat(exited).as("rank " + rank + " ended within the deadline; the ranks said:\n" + all).isNotNull();
            assertThat(exited.exitCode()).as(all.toString()).isZero();
        }
        InstanceId first = new InstanceId(run, 1, 0);
        assertThat(log(executor, first, handles.get(first))).contains("ring=0123");
        executor.forget(run);
        assertThat(Path.of("/run/netns", new RunNetworks(dataDir.resolve("instances")).nameOf(run))).as("the network goes with the run").doesNotExist();
    }

    @Test
    void nothingOutsideARunReachesItsInstancesNorDoTheyReachOut() throws Exception {
        LocalProcessExecutor executor = newExecutor();
        List<Integer> ports = freePorts(2);
        InstanceId a = new InstanceId(newRun(), 1, 0);
        InstanceId b = new InstanceId(newRun(), 1, 0);
        Map<String, String> aHandle = launch(executor, spec(a, archive(), Map.of(), NetworkMode.Private, "nc", "-l", "-p", ports.get(0).toString()));
        Map<String, String> bHandle = launch(executor, spec(b, archive(), Map.of(), NetworkMode.Private, "nc", "-l", "-p", ports.get(1).toString()));
        awaitListening(aHandle, ports.get(0));
        awaitListening(bHandle, ports.get(1));
        try (ServerSocket host = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread acceptor = new Thread(() -> {
                while (!host.isClosed()) {
                    try {
                        host.accept().close(); // reached, and let go at once
                    } catch (java.io.IOException e) {
                        return;
                    }
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            String probe = "for p in $PORTS; do if nc 127.0.0.1 $p </dev/null 2>/dev/null; then echo \"reached $p\"; else echo \"refused $p\"; fi; done";
            String ports2 = ports.get(0) + " " + ports.get(1) + " " + host.getLocalPort();
            InstanceId fromA = new InstanceId(a.runId(), 1, 1);
            InstanceId fromB = new InstanceId(b.runId(), 1, 1);
            InstanceId fromHost = new InstanceId(newRun(), 1, 0);
            Map<String, String> fromAHandle = launch(executor, spec(fromA, archive(), Map.of("PORTS", ports2), NetworkMode.Private, "sh", "-c", probe));
            Map<String, String> fromBHandle = launch(executor, spec(fromB, archive(), Map.of("PORTS", ports2), NetworkMode.Private, "sh", "-c", probe));
            Map<String, String> fromHostHandle = launch(executor, spec(fromHost, archive(), Map.of("PORTS", ports2), NetworkMode.Host, "sh", "-c", probe));
            awaitReport(fromA, InstanceReport.Exited.class);
            awaitReport(fromB, InstanceReport.Exited.class);
            awaitReport(fromHost, InstanceReport.Exited.class);
            assertThat(log(executor, fromA, fromAHandle)).as("a run reaches its own instance, not another run's, not the machine")
                    .contains("reached " + ports.get(0), "refused " + ports.get(1), "refused " + host.getLocalPort());
            assertThat(log(executor, fromB, fromBHandle)).contains("refused " + ports.get(0), "reached " + ports.get(1), "refused " + host.getLocalPort());
            assertThat(log(executor, fromHost, fromHostHandle)).as("network: Host is the machine's")
                    .contains("refused " + ports.get(0), "refused " + ports.get(1), "reached " + host.getLocalPort());
        }
        for (int port : ports.subList(0, 1)) {
            assertThatThrownBy(() -> new Socket().connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2000))
                    .as("the machine does not reach a run's instance").isInstanceOf(java.io.IOException.class);
        }
    }

    @Test
    void theApiIsReachedThroughTheRunsForwarder() throws Exception {
        try (PingApi api = new PingApi()) {
            LocalProcessExecutor executor = newExecutor();
            InstanceId id = new InstanceId(newRun(), 1, 0);
            Map<String, String> handle = launch(executor, spec(id, archive(), Map.of("SLIPSTREAM_SERVER", api.url()),
                    NetworkMode.Private, "sh", "-c", "echo \"server=$SLIPSTREAM_SERVER\"; wget -q -O - \"$SLIPSTREAM_SERVER/ping\"; echo"));
            assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
            assertThat(log(executor, id, handle)).contains("server=http://127.0.0.1:80", "pong");
        }
    }

    @Test
    void aRestartedServerAdoptsAnInstanceInItsImageWhichStillReachesThePeersAndTheApi() throws Exception {
        try (PingApi api = new PingApi()) {
            LocalProcessExecutor before = newExecutor();
            InstanceId id = new InstanceId(newRun(), 1, 0);
            Map<String, String> handle = launch(before, spec(id, archive(), Map.of("SLIPSTREAM_SERVER", api.url()),
                    NetworkMode.Private, "sh", "-c", "echo up; while [ ! -e \"$HOME/go\" ]; do sleep 0.1; done; wget -q -O - \"$SLIPSTREAM_SERVER/ping\"; echo; exit 5"));
            awaitOutput(before, id, handle, "up");
            before.close(); // the server dies: its relay with it

            LocalProcessExecutor after = newExecutor();
            after.adopt(Map.of(id, handle));
            assertThat(awaitReport(id, InstanceReport.Running.class)).isNotNull();
            Files.writeString(dataDir.resolve("instances").resolve(handle.get("dir")).resolve("work").resolve("go"), "");
            InstanceReport.Exited exited = awaitReport(id, InstanceReport.Exited.class);
            assertThat(exited.exitCode()).as(log(after, id, handle)).isEqualTo(5);
            assertThat(log(after, id, handle)).contains("pong");
        }
    }

    @Test
    void cancelKillsEverythingTheInstanceStartedInItsImage() throws Exception {
        LocalProcessExecutor executor = newExecutor();
        InstanceId id = new InstanceId(newRun(), 1, 0);
        Map<String, String> handle = launch(executor, spec(id, archive(), Map.of(), NetworkMode.Private, "sh", "-c",
                "sleep 600 & (setsid sleep 600 &) ; echo \"up $(id -u)\"; wait"));
        awaitOutput(executor, id, handle, "up ");
        int uid = Integer.parseInt(log(executor, id, handle).lines().filter(line -> line.startsWith("up ")).findFirst().orElseThrow().substring(3).trim());
        assertThat(ProcFs.ownedBy(uid)).as("the instance's processes run as its uid").hasSizeGreaterThanOrEqualTo(3);
        executor.terminate(id, handle, Duration.ZERO, "cancelled");
        assertThat(awaitReport(id, InstanceReport.Exited.class).terminated()).isTrue();
        assertThat(ProcFs.ownedBy(uid)).as("nothing of the run is left, not even what left its session").isEmpty();
    }

    @Test
    void threeTransportsGiveOneImageUnpackedOnce() throws Exception {
        LocalProcessExecutor executor = newExecutor();
        RunId run = newRun();
        List<String> references = List.of(archive(), "oci:" + images.resolve("layout") + ":latest", "docker-archive:" + images.resolve("busybox-docker.tar"));
        for (int rank = 0; rank < references.size(); rank++) {
            InstanceId id = new InstanceId(run, 1, rank);
            Map<String, String> handle = launch(executor, spec(id, references.get(rank), Map.of(), NetworkMode.Host, "cat", "/etc/os-release"));
            assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
            assertThat(log(executor, id, handle)).contains("ID=slipstream-test-busybox");
        }
        try (var unpacked = Files.list(dataDir.resolve("images").resolve("rootfs"))) {
            // The Docker archive's config differs from the OCI one's (its format), so it may be a second image; never a third.
            assertThat(unpacked.count()).isBetween(1L, 2L);
        }
    }

    @Test
    void aBadImageFailsTheLaunchWithTheReason() throws Exception {
        LocalProcessExecutor executor = newExecutor();
        Path corrupt = Files.write(images.resolve("corrupt-" + RUNS.incrementAndGet() + ".tar"), "not an archive".getBytes(StandardCharsets.UTF_8));
        Files.setPosixFilePermissions(corrupt, PosixFilePermissions.fromString("rw-r--r--"));
        Path unreadable = Files.copy(images.resolve("busybox.tar"), images.resolve("private-" + RUNS.incrementAndGet() + ".tar"));
        Files.setPosixFilePermissions(unreadable, PosixFilePermissions.fromString("rw-------"));
        Map<String, String> expected = Map.of(
                "oci-archive:/no/such/image.tar", "/no/such/image.tar does not exist or cannot be read by the run's user",
                "oci-archive:" + corrupt, "cannot pull oci-archive:" + corrupt,
                "oci-archive:" + unreadable, "cannot be read by the run's user",
                "dir:/some/where", "transport 'dir' is not supported");
        for (var bad : expected.entrySet()) {
            InstanceId id = new InstanceId(newRun(), 1, 0);
            assertThatThrownBy(() -> launch(executor, spec(id, bad.getKey(), Map.of(), NetworkMode.Host, "true")))
                    .as(bad.getKey()).isInstanceOf(ExecutorException.class).hasMessageContaining(bad.getValue());
        }
        InstanceId id = new InstanceId(newRun(), 1, 0);
        assertThatThrownBy(() -> launch(executor, spec(id, archive(), Map.of(), NetworkMode.Host, "python3", "-c", "print(1)")))
                .isInstanceOf(ExecutorException.class).hasMessageContaining("the image has no command 'python3'");
        assertThat(reports).as("nothing started, so nothing is reported").isEmpty();
    }

    @Test
    void aLaunchNeverWaitsForAPullAndHearsHowItEndedOnce() throws Exception {
        ImageCache cache = new ImageCache(dataDir.resolve("images"), ImageCache.DEFAULT_PULL_TIMEOUT, Clock.systemUTC());
        List<Runnable> background = new ArrayList<>();
        ImageReference image = ImageReference.parse(archive());
        assertThatThrownBy(() -> cache.prepareInBackground("tenant", image, null, null, background::add))
                .isInstanceOf(io.slipstream.executor.LaunchNotReadyException.class).hasMessageContaining("is being pulled");
        assertThatThrownBy(() -> cache.prepareInBackground("tenant", image, null, null, background::add))
                .as("asked again while it is pulled").isInstanceOf(io.slipstream.executor.LaunchNotReadyException.class);
        assertThat(background).as("one pull, however often it is asked for").hasSize(1);
        background.remove(0).run();
        assertThat(cache.prepareInBackground("tenant", image, null, null, background::add).rootfs().resolve("etc/os-release")).exists();

        Path corrupt = Files.write(images.resolve("corrupt-" + RUNS.incrementAndGet() + ".tar"), "not an archive".getBytes(StandardCharsets.UTF_8));
        ImageReference bad = ImageReference.parse("oci-archive:" + corrupt);
        assertThatThrownBy(() -> cache.prepareInBackground("tenant", bad, null, null, background::add))
                .isInstanceOf(io.slipstream.executor.LaunchNotReadyException.class);
        background.remove(0).run();
        assertThatThrownBy(() -> cache.prepareInBackground("tenant", bad, null, null, background::add)).as("how the pull failed, once")
                .isInstanceOf(java.io.IOException.class).hasMessageContaining("cannot pull oci-archive:" + corrupt);
        assertThatThrownBy(() -> cache.prepareInBackground("tenant", bad, null, null, background::add)).as("then pulled again")
                .isInstanceOf(io.slipstream.executor.LaunchNotReadyException.class);
        assertThat(background).hasSize(1);
    }

    /**
     * A tenant's image with a node of this machine's disk, a set-uid root shell and a directory anyone may write: the
     * unpacked image (which every uid may pass through to, as instances must) serves none of that to anyone.
     */
    @Test
    void anUnpackedImageHoldsNoDeviceNodesSetIdFilesOrWhatOthersMayWrite() throws Exception {
        Path hostile = Files.createDirectories(images.resolve("hostile-" + RUNS.incrementAndGet()));
        io.slipstream.testing.BusyboxImage.build(hostile, rootfs -> {
            Path dev = Files.createDirectories(rootfs.resolve("opt/dev"));
            io.slipstream.testing.BusyboxImage.run("mknod", "-m", "666", dev.resolve("disk").toString(), "b", "8", "0");
            io.slipstream.testing.BusyboxImage.run("mknod", "-m", "666", dev.resolve("mem").toString(), "c", "1", "1");
            Path shell = Files.copy(rootfs.resolve("bin/busybox"), rootfs.resolve("opt/rootshell"));
            io.slipstream.testing.BusyboxImage.run("chmod", "4755", shell.toString());
            Path open = Files.createDirectories(rootfs.resolve("opt/drop"));
            io.slipstream.testing.BusyboxImage.run("chmod", "1777", open.toString());
        });
        LocalProcessExecutor executor = newExecutor();
        InstanceId id = new InstanceId(newRun(), 1, 0);
        Map<String, String> handle = launch(executor, spec(id, "oci-archive:" + hostile.resolve("busybox.tar"), Map.of(), NetworkMode.Host, "sh", "-c",
                "ls /opt; test -e /opt/dev/disk && echo has-disk; /opt/rootshell id -u; touch /opt/drop/x 2>/dev/null && echo dropped; true"));
        assertThat(awaitReport(id, InstanceReport.Exited.class).exitCode()).isZero();
        String out = log(executor, id, handle);
        assertThat(out).contains("rootshell").doesNotContain("has-disk", "dropped").doesNotContainPattern("(?m)^0$");
        try (var unpacked = Files.walk(dataDir.resolve("images").resolve("rootfs"))) {
            for (Path path : unpacked.toList()) {
                if (Files.isSymbolicLink(path)) {
                    continue;
                }
                assertThat(Files.isRegularFile(path, java.nio.file.LinkOption.NOFOLLOW_LINKS) || Files.isDirectory(path, java.nio.file.LinkOption.NOFOLLOW_LINKS))
                        .as(path + " is a file or a directory").isTrue();
                int mode = (Integer) Files.getAttribute(path, "unix:mode", java.nio.file.LinkOption.NOFOLLOW_LINKS);
                assertThat(mode & 06022).as(path + ": no set-id bits, nothing others may write").isZero();
            }
        }
    }

    @Test
    void imagesNoInstanceUsedForTheRetentionAreCollected() throws Exception {
        LocalProcessExecutor executor = newExecutor();
        InstanceId id = new InstanceId(newRun(), 1, 0);
        launch(executor, spec(id, archive(), Map.of(), NetworkMode.Host, "true"));
        awaitReport(id, InstanceReport.Exited.class);
        ImageCache cache = new ImageCache(dataDir.resolve("images"), ImageCache.DEFAULT_PULL_TIMEOUT, Clock.systemUTC());
        assertThat(cache.collect(java.util.Set.of(), Duration.ofDays(1))).as("used a moment ago").isZero();
        assertThat(cache.collect(java.util.Set.of(), Duration.ZERO)).isEqualTo(1);
        try (var unpacked = Files.list(dataDir.resolve("images").resolve("rootfs"))) {
            assertThat(unpacked.count()).isZero();
        }
        InstanceId again = new InstanceId(newRun(), 1, 0);
        Map<String, String> handle = launch(executor, spec(again, archive(), Map.of(), NetworkMode.Host, "cat", "/etc/os-release"));
        assertThat(awaitReport(again, InstanceReport.Exited.class).exitCode()).as("unpacked again when needed").isZero();
        assertThat(log(executor, again, handle)).contains("ID=slipstream-test-busybox");
    }

    // --- helpers ---

    private static Map<String, String> launch(Executor executor, LaunchSpec spec) {
        return io.slipstream.executor.BaseExecutorContractTest.launchWhenReady(executor, spec);
    }

    private static List<Integer> freePorts(int count) throws Exception {
        List<Integer> ports = new ArrayList<>();
        while (ports.size() < count) {
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                if (!ports.contains(socket.getLocalPort())) {
                    ports.add(socket.getLocalPort());
                }
            }
        }
        return ports;
    }

    private static void awaitListening(Map<String, String> handle, int port) throws InterruptedException {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (!RunNetworks.listening(Long.parseLong(handle.get("pid")), port)) {
            assertThat(System.nanoTime()).as("listening on " + port + " within the deadline").isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(20);
        }
    }

    private String log(Executor executor, InstanceId id, Map<String, String> handle) {
        return new String(executor.readLogTail(id, handle, LogStream.STDOUT, 1 << 20).data(), StandardCharsets.UTF_8)
                + new String(executor.readLogTail(id, handle, LogStream.STDERR, 1 << 20).data(), StandardCharsets.UTF_8);
    }

    private void awaitOutput(Executor executor, InstanceId id, Map<String, String> handle, String text) throws InterruptedException {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (!log(executor, id, handle).contains(text)) {
            assertThat(System.nanoTime()).as("'" + text + "' within the deadline").isLessThan(deadline);
            TimeUnit.MILLISECONDS.sleep(20);
        }
    }

    /** The next report of {@code type} about {@code id} within a second, or {@code null}. */
    private <R extends InstanceReport> R pollReport(InstanceId id, Class<R> type) throws InterruptedException {
        for (InstanceReport report : seen) {
            if (report.id().equals(id) && type.isInstance(report)) {
                seen.remove(report);
                return type.cast(report);
            }
        }
        InstanceReport report = reports.poll(1, TimeUnit.SECONDS);
        if (report == null) {
            return null;
        }
        if (report.id().equals(id) && type.isInstance(report)) {
            return type.cast(report);
        }
        seen.add(report);
        return null;
    }

    private <R extends InstanceReport> R awaitReport(InstanceId id, Class<R> type) throws InterruptedException {
        for (InstanceReport report : seen) {
            if (report.id().equals(id) && type.isInstance(report)) {
                seen.remove(report);
                return type.cast(report);
            }
        }
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (true) {
            InstanceReport report = reports.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            assertThat(report).as("a " + type.getSimpleName() + " report of " + id + " within the deadline").isNotNull();
            if (report.id().equals(id) && type.isInstance(report)) {
                return type.cast(report);
            }
            seen.add(report);
        }
    }
}
