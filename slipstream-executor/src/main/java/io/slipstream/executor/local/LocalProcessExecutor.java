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
 * <p>Each instance has a directory {@code <root>/<run>/<attempt>/<rank>/} (see {@link InstanceDirectory}). A small
 * fixed shell script (never built from input: the command travels as its arguments) supervises the instance: it
 * starts the command in a session of its own with {@code setsid}, waits for it, and records its exit code. Both the
 * supervisor and the instance run in sessions apart from the server, so neither a {@code kill -9} of the server nor a
 * Ctrl-C in its terminal reaches them, and a restarted server finds them again from the files they leave.
 *
 * <p>With {@link Isolation} on, the supervisor and the instance run under the run's own uid ({@code setpriv}).
 *
 * <p>Linux only: process trees are found through {@code /proc}.
 */
public final class LocalProcessExecutor implements Executor {
    private static final Logger LOG = LoggerFactory.getLogger(LocalProcessExecutor.class);

    /**
     * $1 is the instance directory, the rest is the command ({@code --}: a command may start with a dash). The pid
     * and exit code are written by the shell's own printf, one short write each, instead of a temporary file and an
     * {@code mv} (two fewer processes per instance); readers take a line only once its newline is there.
     */
    static final String SUPERVISOR = String.join("\n",
            "dir=$1; shift",
            "umask 002",
            "setsid -- \"$@\" </dev/null >>\"$dir/stdout.log\" 2>>\"$dir/stderr.log\" &",
            "child=$!",
            "printf '%s %s\\n' \"$$\" \"$child\" >\"$dir/pid\"",
            "wait \"$child\"",
            "code=$?",
            "printf '%s\\n' \"$code\" >\"$dir/exit_code\"",
            "");

    /** Variables of the server's environment that instances see too; everything else comes from the spec. */
    public static final List<String> DEFAULT_INHERITED_ENV = List.of("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ", "JAVA_HOME");

    private static final Duration PID_FILE_TIMEOUT = Duration.ofSeconds(10);

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
    private final Map<InstanceId, Boolean> watched = new ConcurrentHashMap<>();
    /** Launches of one instance are serialized (so that it starts once); striped to bound memory. */
    private final Object[] launchLocks = newLocks(64);
    private volatile Consumer<InstanceReport> listener = report -> {
    };
    private volatile boolean closed;

    public LocalProcessExecutor(Path root, List<NodeInfo> nodes, List<String> inheritedEnv, Clock clock) {
        this(root, nodes, inheritedEnv, Isolation.off(), clock);
    }

    public LocalProcessExecutor(Path root, List<NodeInfo> nodes, List<String> inheritedEnv, Isolation isolation, Clock clock) {
        this(root, nodes, inheritedEnv, isolation, null, clock);
    }

    /**
     * @param root         directory under which instance directories are made (created if missing); shared storage
     *                     lives next to it, in {@code storage/}
     * @param nodes        the nodes to run on; their names must be unique
     * @param inheritedEnv names of the server's environment variables passed on to instances
     * @param toolsDir     put first on the instances' PATH (the {@code slipstream} command), or {@code null}
     */
    public LocalProcessExecutor(Path root, List<NodeInfo> nodes, List<String> inheritedEnv, Isolation isolation, Path toolsDir, Clock clock) {
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
        Path storageRoot = this.root.resolveSibling("storage");
        try {
            for (Path dir : List.of(this.root, storageRoot)) {
                Files.createDirectories(dir);
                if (isolation.enabled()) {
                    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
                }
            }
        } catch (IOException e) {
            throw new ExecutorException("cannot create " + this.root, e);
        }
        this.uids = isolation.enabled() ? new UidAllocator(this.root, storageRoot, isolation) : null;
        this.storage = new SharedStorage(storageRoot, uids);
        this.timers = Executors.newSingleThreadScheduledExecutor(daemon("slipstream-local-timer"));
        this.workers = Executors.newCachedThreadPool(daemon("slipstream-local-watch"));
        this.prober = new StartupProber(timers, workers, clock, this::report);
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
        synchronized (launchLocks[Math.floorMod(spec.id().hashCode(), launchLocks.length)]) {
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
            if (uid != null) {
                for (Path path = dir.path().getParent(); path.startsWith(root); path = path.getParent()) {
                    Files.createDirectories(path);
                    Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rwx--x--x"));
                }
            }
            dir.create(uid);
            Path secretsDir = spec.secretFiles().isEmpty() ? null : SecretFiles.write(dir.path(), spec.secretFiles(), uid);
            SharedStorage.Prepared shared = spec.metadata() == null ? null : storage.prepare(spec.metadata());
            Integer gid = shared == null ? null : shared.gid();
            List<String> argv = new ArrayList<>(List.of("setsid"));
            if (uid != null) {
                argv.addAll(List.of("setpriv", "--reuid=" + uid, "--regid=" + uid, gid == null ? "--clear-groups" : "--groups=" + gid,
                        "--no-new-privs"));
            }
            argv.addAll(List.of("sh", "-c", SUPERVISOR, "slipstream-supervisor", dir.path().toString()));
            argv.addAll(spec.command());
            Path workingDir = dir.workingDir(spec.workingDir(), uid);
            ProcessBuilder builder = new ProcessBuilder(argv)
                    .directory(workingDir.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.supervisorLog().toFile()))
                    .redirectErrorStream(true);
            Map<String, String> env = builder.environment();
            env.clear();
            env.putAll(environment(spec, node, dir, uid, shared, secretsDir));
            Process supervisor = builder.start();
            awaitPidFile(dir, supervisor);
            Map<String, String> handle = readHandle(dir).orElseThrow();
            watch(spec.id(), handle, supervisor);
            if (spec.probe() != null) {
                StartupProber.Probe probe = new StartupProber.Probe(spec.probe().command(), spec.probe().periodSeconds(),
                        spec.probe().failureThreshold(), spec.probe().initialDelaySeconds(), Map.copyOf(env), workingDir.toString(), uid, gid);
                // Kept on disk without the secret variables (a probe resumed after a restart runs without them).
                Map<String, String> saved = new LinkedHashMap<>(env);
                saved.keySet().removeAll(spec.secretEnv().keySet());
                StartupProber.save(dir.path(), new StartupProber.Probe(probe.command(), probe.periodSeconds(), probe.failureThreshold(),
                        probe.initialDelaySeconds(), saved, probe.workingDir(), uid, gid));
                prober.start(spec.id(), dir.path(), probe, probe.initialDelaySeconds(), watched::containsKey);
            }
            return handle;
        } catch (IOException e) {
            throw new ExecutorException("cannot start instance " + spec.id() + ": " + e.getMessage(), e);
        }
    }

    /** What the instance sees: inherited variables, the spec's (its secrets too), then what only this executor knows. */
    private Map<String, String> environment(LaunchSpec spec, NodeInfo node, InstanceDirectory dir, Integer uid, SharedStorage.Prepared shared,
                                            Path secretsDir) throws IOException {
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
            env.put("HOME", dir.workingDir(null, null).toString()); // the server's home is not the instance's to read
        }
        env.putAll(spec.env());
        spec.secretEnv().forEach((name, secret) -> env.put(name, secret.value().reveal()));
        if (secretsDir != null) {
            env.put(LaunchSpec.SECRETS_DIR_ENV, secretsDir.toString());
        }
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
        if (closed || watched.putIfAbsent(id, Boolean.TRUE) != null) {
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
        }
        removeSecretFiles(id, dir);
        watched.remove(id);
        if (exitCode == null) {
            report(new InstanceReport.Lost(id, "the instance's supervisor ended without recording an exit code", clock.instant()));
        } else {
            report(new InstanceReport.Exited(id, exitCode, dir.terminationRequested(), clock.instant()));
        }
    }

    /** An instance's secrets stay on disk while it runs, no longer. */
    private static void removeSecretFiles(InstanceId id, InstanceDirectory dir) {
        try {
            SecretFiles.remove(dir.path());
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot remove the secret files of instance {}: {}", id, e.toString());
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
        if (Files.exists(dir.ackFile())) {
            LOG.debug("instance {} acknowledged its notice: stopping it now", id);
            forceKill(id, tree, 5);
            return;
        }
        timers.schedule(() -> releaseOnAck(id, tree, dir, deadline), ACK_POLL.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public io.slipstream.executor.Activity activity(InstanceId id, Map<String, String> handle) {
        InstanceDirectory dir = directoryOf(id, handle);
        // The workload owns the file: if it swapped in a FIFO after the checks, the read would block, so it gets a second.
        io.slipstream.executor.Activity.Progress progress;
        try {
            progress = CompletableFuture.supplyAsync(() -> ProgressFile.read(dir.progressFile()), workers).get(1, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            progress = null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            progress = null;
        }
        return new io.slipstream.executor.Activity(dir.lastOutputAt(), progress);
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
            if (Files.exists(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                Path uidFile = dir.resolve("uid");
                // Links are removed, never followed; the uid file goes last, so a half-done removal keeps the uid taken.
                try (java.util.stream.Stream<Path> paths = Files.walk(dir)) {
                    for (Path path : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                        if (!path.equals(uidFile) && !path.equals(dir)) {
                            Files.deleteIfExists(path);
                        }
                    }
                }
                Files.deleteIfExists(uidFile);
                Files.deleteIfExists(dir);
            }
            storage.forgetRun(runId);
        } catch (IOException | java.io.UncheckedIOException e) {
            throw new ExecutorException("cannot remove the files of run " + runId + ": " + e.getMessage(), e);
        }
        if (uids != null) {
            uids.release(runId);
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
