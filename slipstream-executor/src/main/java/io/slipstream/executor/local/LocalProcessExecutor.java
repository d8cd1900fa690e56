package io.slipstream.executor.local;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.run.Endpoint;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.LogChunk;
import io.slipstream.executor.LogStream;
import io.slipstream.executor.NodeInfo;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs each instance as an OS process on this machine, over a declared set of (virtual) nodes.
 *
 * <p>Each instance has a directory {@code <root>/<run>/<attempt>/<rank>/} (see {@link InstanceDirectory}) that belongs
 * to the server, with the workload's own directories below it. A {@link Supervisor} starts the command in a session of
 * its own, waits for it and records its exit code. Both run in sessions apart from the server, so neither a
 * {@code kill -9} of the server nor a Ctrl-C in its terminal reaches them, and a restarted server finds them again
 * from the files they leave.
 *
 * <p>With {@link Isolation} on, the instance runs under the run's own uid ({@code setpriv}); the supervisor stays the
 * server's. When the last instance of a run ends, every process of the run's uid is killed before that end is
 * reported ({@link UidSweep}): a daemon cannot outlive its run.
 *
 * <p>Linux only: process trees are found through {@code /proc}.
 */
public final class LocalProcessExecutor implements Executor {
    private static final Logger LOG = LoggerFactory.getLogger(LocalProcessExecutor.class);

    /** Variables of the server's environment that instances see too; everything else comes from the spec. */
    public static final List<String> DEFAULT_INHERITED_ENV = List.of("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "JAVA_HOME");

    private static final Duration PID_FILE_TIMEOUT = Duration.ofSeconds(10);
    /** What is kept of each log of an instance unless said otherwise. */
    public static final long DEFAULT_LOG_LIMIT_BYTES = 1L << 30;
    /** How often logs are held to their limit. */
    private static final Duration LOG_LIMIT_EVERY = Duration.ofSeconds(5);

    static {
        // Every instance is a few processes, and the JDK's default launch (posix_spawn of a helper that then execs
        // the command) adds an exec to each: vfork, the default on Linux before JDK 12 and supported through 21,
        // launches directly and takes about a third less CPU per run. An explicit setting always wins.
        String mechanism = "jdk.lang.Process.launchMechanism";
        if (System.getProperty(mechanism) == null && Runtime.version().feature() <= 21) {
            System.setProperty(mechanism, "VFORK");
        }
    }

    private final Path root;
    private final Path toolsDir;
    private final SharedStorage storage;
    private final StartupProber prober;
    private final Map<String, NodeInfo> nodes;
    private final List<String> inheritedEnv;
    private final Isolation isolation;
    private final UidAllocator uids;
    private final Clock clock;
    private final String bootId = ProcFs.bootId();
    /** How often a stopping instance's acknowledgement is looked for. */
    private static final Duration ACK_POLL = Duration.ofMillis(100);
    private final ScheduledExecutorService timers;
    private final ExecutorService workers;
    /** The instances being watched, with their directories. */
    private final Map<InstanceId, InstanceDirectory> watched = new ConcurrentHashMap<>();
    /**
     * Launches of one run are serialized (so that an instance starts once), and so are a launch and the sweep of the
     * run's uid when its last instance ended; striped by run to bound memory.
     */
    private final Object[] runLocks = newLocks(64);
    private final Path pins;
    private final Trash trash;
    private final LogLimit logLimit;
    private volatile Consumer<InstanceReport> listener = report -> {
    };
    private volatile boolean closed;

    public LocalProcessExecutor(Path root, List<NodeInfo> nodes, List<String> inheritedEnv, Clock clock) {
        this(root, nodes, inheritedEnv, Isolation.off(), clock);
    }

    public LocalProcessExecutor(Path root, List<NodeInfo> nodes, List<String> inheritedEnv, Isolation isolation, Clock clock) {
        this(root, nodes, inheritedEnv, isolation, null, DEFAULT_LOG_LIMIT_BYTES, clock);
    }

    /**
     * @param root         directory under which instance directories are made (created if missing); shared storage
     *                     lives next to it, in {@code storage/}
     * @param nodes        the nodes to run on; their names must be unique
     * @param inheritedEnv names of the server's environment variables passed on to instances
     * @param toolsDir     put first on the instances' PATH (the {@code slipstream} command), or {@code null}
     * @param logLimit     bytes kept of each log of an instance (older output is let go of); 0 keeps everything
     */
    public LocalProcessExecutor(Path root, List<NodeInfo> nodes, List<String> inheritedEnv, Isolation isolation, Path toolsDir, long logLimit,
                                Clock clock) {
        this.root = root.toAbsolutePath().normalize();
        this.toolsDir = toolsDir == null ? null : toolsDir.toAbsolutePath().normalize();
        this.nodes = new LinkedHashMap<>();
        for (NodeInfo node : nodes) {
            if (this.nodes.put(node.name(), node) != null) {
                throw new IllegalArgumentException("two nodes are named " + node.name());
            }
        }
        this.inheritedEnv = List.copyOf(inheritedEnv);
        this.isolation = requireNonNull(isolation, "isolation is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.logLimit = new LogLimit(logLimit);
        Path storageRoot = this.root.resolveSibling("storage");
        try {
            for (Path dir : List.of(this.root, storageRoot)) {
                Files.createDirectories(dir);
                if (isolation.enabled()) {
                    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
                }
            }
            // Both on the root's file system: pins are hard links, and taking out the trash is a rename.
            this.pins = Files.createDirectories(this.root.resolve(".pins"));
            Files.setPosixFilePermissions(pins, PosixFilePermissions.fromString("rwx------"));
            try (java.nio.file.DirectoryStream<Path> stale = Files.newDirectoryStream(pins)) {
                for (Path pin : stale) {
                    Files.deleteIfExists(pin); // a pin a crash left behind
                }
            }
            this.trash = new Trash(this.root.resolve(".trash"));
        } catch (IOException e) {
            throw new ExecutorException("cannot create " + this.root, e);
        }
        this.uids = isolation.enabled() ? new UidAllocator(this.root, storageRoot, isolation, trash) : null;
        this.storage = new SharedStorage(storageRoot, uids);
        this.timers = Executors.newSingleThreadScheduledExecutor(daemon("slipstream-local-timer"));
        this.workers = Executors.newCachedThreadPool(daemon("slipstream-local-watch"));
        this.prober = new StartupProber(timers, workers, clock, this::report);
        workers.execute(this::emptyTrash); // what a previous life left there
        if (logLimit > 0) {
            timers.scheduleWithFixedDelay(this::limitLogs, LOG_LIMIT_EVERY.toMillis(), LOG_LIMIT_EVERY.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    @Override
    public List<NodeInfo> nodes() {
        return List.copyOf(nodes.values());
    }

    /** Every node is this machine: instances reach each other on the loopback address, each on ports of its own. */
    @Override
    public Endpoint endpoint(io.slipstream.api.run.InstanceId id, String workspace, String name, String node, int ports,
                             java.util.Set<Integer> taken) {
        if (!nodes.containsKey(node)) {
            throw new ExecutorException("no node named " + node);
        }
        java.util.Set<Integer> chosen = new java.util.LinkedHashSet<>();
        for (int tries = 0; chosen.size() < ports; tries++) {
            if (tries > 1000) {
                throw new ExecutorException("cannot find " + ports + " free port(s)");
            }
            try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
                int port = socket.getLocalPort();
                if (!taken.contains(port)) {
                    chosen.add(port);
                }
            } catch (IOException e) {
                throw new ExecutorException("cannot find a free port: " + e.getMessage(), e);
            }
        }
        return new Endpoint("localhost", "localhost", "127.0.0.1", List.copyOf(chosen));
    }

    /** With a uid per run, every process of a run is killed before its end is reported; without, only its process trees. */
    @Override
    public Containment containment() {
        return uids == null ? Containment.PROCESS_TREE : Containment.EVERY_PROCESS;
    }

    @Override
    public void setListener(Consumer<InstanceReport> listener) {
        this.listener = requireNonNull(listener, "listener is null");
    }

    // --- launch ---

    @Override
    public Map<String, String> launch(LaunchSpec spec) {
        NodeInfo node = nodes.get(spec.node());
        if (node == null) {
            throw new ExecutorException("no node named " + spec.node());
        }
        for (int gpu : spec.gpus()) {
            if (gpu < 0 || gpu >= node.capacity().gpu()) {
                throw new ExecutorException("node " + node.name() + " has no GPU " + gpu);
            }
        }
        synchronized (runLock(spec.id().runId())) {
            InstanceDirectory dir = directoryOf(spec.id());
            Optional<Map<String, String>> existing;
            try {
                existing = readHandle(dir);
            } catch (IOException e) {
                throw new ExecutorException("cannot read the state of instance " + spec.id() + ": " + e.getMessage(), e);
            }
            if (existing.isPresent()) {
                // Launched before (the control plane crashed between launch and recording it): adopt, never twice.
                watch(spec.id(), existing.get(), null);
                return existing.get();
            }
            return start(spec, node, dir);
        }
    }

    private Map<String, String> start(LaunchSpec spec, NodeInfo node, InstanceDirectory dir) {
        try {
            Integer uid = uids == null ? null : uids.uidFor(spec.id().runId());
            for (Path path = dir.path().getParent(); path.startsWith(root) && !path.equals(root); path = path.getParent()) {
                Files.createDirectories(path);
                if (uid != null) {
                    Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rwx--x--x"));
                }
            }
            Path workingDir = dir.create(uid, spec.workingDir());
            SharedStorage.Prepared shared = spec.metadata() == null ? null : storage.prepare(spec.metadata(), uid);
            Integer gid = shared == null ? null : shared.gid();
            ProcessBuilder builder = new ProcessBuilder(Supervisor.argv(dir.path(), workingDir, uid, gid, spec.command()))
                    .directory(dir.path().toFile()) // the server's directory: it never enters the workload's
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.supervisorLog().toFile()))
                    .redirectErrorStream(true);
            Map<String, String> env = builder.environment();
            env.clear();
            env.putAll(environment(spec, node, dir, uid, shared));
            Process supervisor = builder.start();
            awaitPidFile(dir, supervisor);
            Map<String, String> handle = readHandle(dir).orElseThrow();
            watch(spec.id(), handle, supervisor);
            if (spec.probe() != null) {
                StartupProber.Probe probe = new StartupProber.Probe(spec.probe().command(), spec.probe().periodSeconds(),
                        spec.probe().failureThreshold(), spec.probe().initialDelaySeconds(), Map.copyOf(env), workingDir.toString(), uid, gid);
                StartupProber.save(dir.path(), probe);
                prober.start(spec.id(), dir.path(), probe, probe.initialDelaySeconds(), watched::containsKey);
            }
            return handle;
        } catch (IOException e) {
            throw new ExecutorException("cannot start instance " + spec.id() + ": " + e.getMessage(), e);
        }
    }

    /** What the instance sees: inherited variables, the spec's, then what only this executor knows. */
    private Map<String, String> environment(LaunchSpec spec, NodeInfo node, InstanceDirectory dir, Integer uid, SharedStorage.Prepared shared)
            throws IOException {
        Map<String, String> env = new LinkedHashMap<>();
        for (String name : inheritedEnv) {
            String value = System.getenv(name);
            if (value != null) {
                env.put(name, value);
            }
        }
        if (toolsDir != null) {
            env.put("PATH", toolsDir + (env.containsKey("PATH") ? ":" + env.get("PATH") : ""));
        }
        if (uid != null) {
            env.put("HOME", dir.sandbox().toString()); // the server's home is not the instance's to read
        }
        env.putAll(spec.env());
        env.put("TMPDIR", dir.tmp().toString());
        env.put("SLIPSTREAM_PREEMPTION_NOTICE_FILE", dir.noticeFile().toString());
        env.put("SLIPSTREAM_PREEMPTION_ACK_FILE", dir.ackFile().toString());
        env.put("SLIPSTREAM_PROGRESS_FILE", dir.progressFile().toString());
        String devices = spec.gpus().stream().map(node::gpuId).collect(Collectors.joining(","));
        env.put("CUDA_VISIBLE_DEVICES", devices);
        env.put("NVIDIA_VISIBLE_DEVICES", devices.isEmpty() ? "none" : devices);
        env.put("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
        if (shared != null) {
            env.put("SLIPSTREAM_SHARED_DIR", shared.shared().toString());
            env.put("SLIPSTREAM_CHECKPOINT_DIR", shared.checkpoints().toString());
            for (var storageEntry : shared.storage()) {
                env.put(io.slipstream.api.spec.StorageSpec.envNameOf(storageEntry.name()), storageEntry.path());
            }
            env.put("SLIPSTREAM_METADATA_FILE", dir.writeMetadata(spec.metadata().withStorage(shared.storage())).toString());
        }
        return env;
    }

    /** The supervisor writes the pid of the instance's main process within milliseconds of starting. */
    private static void awaitPidFile(InstanceDirectory dir, Process supervisor) throws IOException {
        long deadline = System.nanoTime() + PID_FILE_TIMEOUT.toNanos();
        long pause = 1;
        while (dir.pids() == null) {
            if (!supervisor.isAlive() && dir.pids() == null) {
                throw new IOException("the supervisor exited before starting the command: " + dir.supervisorOutput());
            }
            if (System.nanoTime() > deadline) {
                supervisor.destroyForcibly();
                throw new IOException("the supervisor did not start the command within " + PID_FILE_TIMEOUT.toSeconds() + "s");
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while starting the instance", e);
            }
            pause = Math.min(pause * 2, 20);
        }
    }

    @Override
    public Optional<Map<String, String>> find(InstanceId id) {
        try {
            return readHandle(directoryOf(id));
        } catch (IOException e) {
            throw new ExecutorException("cannot read the state of instance " + id + ": " + e.getMessage(), e);
        }
    }

    // --- watching and reporting ---

    @Override
    public void adopt(Map<InstanceId, Map<String, String>> handles) {
        handles.forEach((id, handle) -> {
            if (!sameBoot(handle) && directoryOf(handle).exitCode() == null) {
                report(new InstanceReport.Lost(id, "the machine restarted since the instance was launched", clock.instant()));
                return;
            }
            watch(id, handle, null);
            if (supervisorAlive(handle)) {
                report(new InstanceReport.Running(id, handle, clock.instant()));
                resumeProbe(id, directoryOf(handle).path());
            }
        });
    }

    /** After a restart: an instance that was ready is reported ready again; one that was being probed is probed again. */
    private void resumeProbe(InstanceId id, Path dir) {
        StartupProber.Probe probe = StartupProber.load(dir);
        if (probe == null) {
            return;
        }
        if (StartupProber.isReady(dir)) {
            report(new InstanceReport.Ready(id, clock.instant()));
        } else {
            prober.start(id, dir, probe, 0, watched::containsKey);
        }
    }

    /** Watches an instance's supervisor (once per instance) and reports when it ends. */
    private void watch(InstanceId id, Map<String, String> handle, Process supervisor) {
        if (closed || watched.putIfAbsent(id, directoryOf(handle)) != null) {
            return;
        }
        CompletableFuture<?> ended;
        if (supervisor != null) {
            ended = supervisor.onExit();
        } else if (supervisorAlive(handle)) {
            ended = ProcessHandle.of(Long.parseLong(handle.get("supervisorPid")))
                    .map(ProcessHandle::onExit)
                    .orElse(CompletableFuture.completedFuture(null));
        } else {
            ended = CompletableFuture.completedFuture(null);
        }
        ended.whenCompleteAsync((ignored, error) -> finish(id, handle), workers);
    }

    /** Runs on a worker thread: may wait for stubborn processes to die. */
    private void finish(InstanceId id, Map<String, String> handle) {
        if (closed) {
            return;
        }
        InstanceDirectory dir = directoryOf(handle);
        long pid = Long.parseLong(handle.get("pid"));
        Integer exitCode = dir.exitCode();
        if (exitCode == null && sameBoot(handle) && ProcFs.isAlive(pid, Long.parseLong(handle.get("pidStart")))) {
            // The supervisor was killed but the instance still runs: follow the instance itself.
            ProcessHandle.of(pid).map(ProcessHandle::onExit).orElse(CompletableFuture.completedFuture(null))
                    .whenCompleteAsync((ignored, error) -> finish(id, handle), workers);
            return;
        }
        if (sameBoot(handle)) {
            killUntilGone(tree(handle)); // whatever the main process left behind goes with it
            sweepIfLast(id);
        }
        watched.remove(id);
        if (exitCode == null) {
            report(new InstanceReport.Lost(id, "the instance's supervisor ended without recording an exit code", clock.instant()));
        } else {
            report(new InstanceReport.Exited(id, exitCode, dir.terminationRequested(), clock.instant()));
        }
    }

    /**
     * When this is the run's last watched instance, kills whatever else runs under the run's uid (daemons that left
     * the instance's session), before the end is reported: so a run is over only once nothing of it runs. Under the
     * run's lock, so that no instance of the run is being launched meanwhile.
     */
    private void sweepIfLast(InstanceId id) {
        if (uids == null) {
            return;
        }
        synchronized (runLock(id.runId())) {
            boolean last = watched.keySet().stream().noneMatch(other -> !other.equals(id) && other.runId().equals(id.runId()));
            Integer uid = last ? uids.uidOf(id.runId()) : null;
            if (uid != null && UidSweep.killAll(uid) > 0) {
                LOG.info("killed the processes run {} left behind outside its instances (uid {})", id.runId(), uid);
            }
        }
    }

    private static void killUntilGone(ProcessTree tree) {
        long pause = 5;
        long warnAt = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (tree.killOnce() > 0) {
            if (System.nanoTime() > warnAt) {
                LOG.warn("processes of an instance survive SIGKILL (stuck in the kernel?); still trying");
                warnAt = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            pause = Math.min(pause * 2, 500);
        }
    }

    private void report(InstanceReport report) {
        try {
            listener.accept(report);
        } catch (RuntimeException e) {
            LOG.error("listener failed on {}", report, e);
        }
    }

    // --- termination ---

    /** Returns at once: the signals go out from the executor's own threads. */
    @Override
    public void terminate(InstanceId id, Map<String, String> handle, Duration gracePeriod, String reason) {
        InstanceDirectory dir = directoryOf(handle);
        if (dir.exitCode() == null) {
            dir.markTerminationRequested();
            if (!gracePeriod.isZero()) {
                dir.writeNotice(reason, clock.instant().plus(gracePeriod));
            }
        }
        watch(id, handle, null);
        if (!sameBoot(handle)) {
            return; // launched before a reboot: nothing of it runs, and its pid may now be someone else's
        }
        ProcessTree tree = tree(handle);
        if (gracePeriod.isZero()) {
            workers.execute(() -> forceKill(id, tree, 5)); // no grace (a lost node): no notice, no SIGTERM
            return;
        }
        workers.execute(tree::terminate);
        timers.schedule(() -> forceKill(id, tree, 5), gracePeriod.toMillis(), TimeUnit.MILLISECONDS);
        if (gracePeriod.compareTo(ACK_POLL) > 0) {
            timers.schedule(() -> releaseOnAck(id, tree, dir, clock.instant().plus(gracePeriod)), ACK_POLL.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** An instance that acknowledged the notice has saved what it wanted to: it need not wait for the grace period. */
    private void releaseOnAck(InstanceId id, ProcessTree tree, InstanceDirectory dir, java.time.Instant deadline) {
        if (closed || !watched.containsKey(id) || clock.instant().isAfter(deadline)) {
            return;
        }
        if (dir.acknowledged()) {
            LOG.debug("instance {} acknowledged its notice: stopping it now", id);
            forceKill(id, tree, 5);
            return;
        }
        timers.schedule(() -> releaseOnAck(id, tree, dir, deadline), ACK_POLL.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public io.slipstream.executor.Activity activity(InstanceId id, Map<String, String> handle) {
        InstanceDirectory dir = directoryOf(id, handle);
        Integer owner = uids == null ? null : uids.uidOf(id.runId());
        return new io.slipstream.executor.Activity(dir.lastOutputAt(), ProgressFile.read(dir.progressFile(), pins, owner));
    }

    /** One round of SIGKILL, repeated from the timer until the instance is gone: a stuck process blocks nothing else. */
    private void forceKill(InstanceId id, ProcessTree tree, long pauseMillis) {
        if (closed || !watched.containsKey(id) || tree.killOnce() == 0) {
            return;
        }
        long next = Math.min(pauseMillis * 2, 1000);
        timers.schedule(() -> forceKill(id, tree, next), pauseMillis, TimeUnit.MILLISECONDS);
    }

    // --- logs ---

    @Override
    public LogChunk readLog(InstanceId id, Map<String, String> handle, LogStream stream, long offset, int maxBytes) {
        return directoryOf(id, handle).read(stream, offset, maxBytes);
    }

    @Override
    public LogChunk readLogTail(InstanceId id, Map<String, String> handle, LogStream stream, int maxBytes) {
        return directoryOf(id, handle).tail(stream, maxBytes);
    }

    /** The instance's directory: from its handle when it has one, else where its id puts it. */
    private InstanceDirectory directoryOf(InstanceId id, Map<String, String> handle) {
        return handle.containsKey("dir") ? directoryOf(handle) : directoryOf(id);
    }

    @Override
    public void forget(RunId runId) {
        Path dir = root.resolve(runId.value()).normalize();
        if (!dir.startsWith(root) || dir.equals(root)) {
            throw new ExecutorException("run directory " + dir + " is outside " + root);
        }
        if (watched.keySet().stream().anyMatch(id -> id.runId().equals(runId))) {
            throw new ExecutorException("run " + runId + " still has instances running");
        }
        Integer uid = uids == null ? null : uids.uidOf(runId);
        if (uid != null) {
            // Only this run ever ran as this uid: a process of it now escaped the instance's process tree (a daemon).
            List<Long> escaped = ProcFs.ownedBy(uid);
            if (!escaped.isEmpty()) {
                escaped.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
                throw new ExecutorException(escaped.size() + " process(es) of run " + runId + " (uid " + uid
                        + ") outlived it and were killed; its files go once they are gone");
            }
        }
        try {
            // Taken out of the way at once (a rename each); deleted from the trash on a thread of the executor's.
            if (Files.exists(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                trash.take(dir, runId.value());
            }
            storage.forgetRun(runId, trash);
        } catch (IOException e) {
            throw new ExecutorException("cannot remove the files of run " + runId + ": " + e.getMessage(), e);
        }
        if (uids != null) {
            uids.release(runId); // its uid stays taken until its files are gone from the trash
        }
        workers.execute(this::emptyTrash);
    }

    /** Deletes what waits in the trash; a run's uid is free once its files are gone. */
    private synchronized void emptyTrash() {
        try {
            for (Path entry : trash.entries()) {
                Integer uid = UidAllocator.read(entry.resolve("uid"));
                trash.delete(entry);
                if (uid != null && uids != null) {
                    uids.free(uid);
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot empty {}: {}", trash.dir(), e.getMessage());
        }
    }

    /** Holds every watched instance's logs to the limit. */
    private void limitLogs() {
        try {
            watched.values().forEach(logLimit::enforce);
        } catch (RuntimeException e) {
            LOG.warn("cannot hold instance logs to their limit: {}", e.toString());
        }
    }

    @Override
    public void close() {
        closed = true;
        timers.shutdownNow();
        workers.shutdownNow();
    }

    // --- handles and files ---

    InstanceDirectory directoryOf(InstanceId id) {
        return new InstanceDirectory(root.resolve(id.runId().value()).resolve(Integer.toString(id.attempt()))
                .resolve(Integer.toString(id.rank())));
    }

    /** The directory a stored handle names, refused if it is not under this executor's root. */
    private InstanceDirectory directoryOf(Map<String, String> handle) {
        Path dir = Path.of(handle.get("dir")).toAbsolutePath().normalize();
        if (!dir.startsWith(root)) {
            throw new ExecutorException("instance directory " + dir + " is outside " + root);
        }
        return new InstanceDirectory(dir);
    }

    private static ProcessTree tree(Map<String, String> handle) {
        return new ProcessTree(Long.parseLong(handle.get("pid")), Long.parseLong(handle.get("pidStart")));
    }

    private boolean sameBoot(Map<String, String> handle) {
        return bootId.equals(handle.get("bootId"));
    }

    private boolean supervisorAlive(Map<String, String> handle) {
        return sameBoot(handle)
                && ProcFs.isAlive(Long.parseLong(handle.get("supervisorPid")), Long.parseLong(handle.get("supervisorStart")));
    }

    /**
     * The handle of an instance launched before, from the pid file its supervisor wrote (so that it can be derived
     * even if the control plane crashed right after the launch); empty if it was never launched.
     */
    private Optional<Map<String, String>> readHandle(InstanceDirectory dir) throws IOException {
        long[] pids = dir.pids();
        if (pids == null) {
            return Optional.empty();
        }
        Map<String, String> handle = new LinkedHashMap<>();
        handle.put("dir", dir.path().toString());
        handle.put("supervisorPid", Long.toString(pids[0]));
        handle.put("supervisorStart", Long.toString(ProcFs.stat(pids[0]).map(ProcFs.Stat::startTime).orElse(-1L)));
        handle.put("pid", Long.toString(pids[1]));
        handle.put("pidStart", Long.toString(ProcFs.stat(pids[1]).map(ProcFs.Stat::startTime).orElse(-1L)));
        handle.put("bootId", bootId);
        return Optional.of(handle);
    }

    private Object runLock(RunId run) {
        return runLocks[Math.floorMod(run.hashCode(), runLocks.length)];
    }

    private static Object[] newLocks(int count) {
        Object[] locks = new Object[count];
        for (int i = 0; i < count; i++) {
            locks[i] = new Object();
        }
        return locks;
    }

    private static ThreadFactory daemon(String name) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, name + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
