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
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
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

    /** What is kept of each log of an instance unless said otherwise. */
    public static final long DEFAULT_LOG_LIMIT_BYTES = 1L << 30;
    /** How often logs are held to their limit. */
    private static final Duration LOG_LIMIT_EVERY = Duration.ofSeconds(2);

    private final Path root;
    private final Path toolsDir;
    private final SharedStorage storage;
    private final StartupProber prober;
    private final Stopper stopper;
    private final Map<String, NodeInfo> nodes;
    private final List<String> inheritedEnv;
    private final Isolation isolation;
    /** What starts instances' supervisors. */
    private final Launcher launcher;
    /** Forks the supervisors where the launcher is the binary; {@code null} with the shell. */
    private final LaunchHelper launchHelper;
    /** Kills what runs left under their uids; concurrent sweeps share their passes over /proc. */
    private final UidSweep sweeps = new UidSweep();
    private final UidAllocator uids;
    private final Clock clock;
    private final InstanceHandles handles;
    private final EpochFence fence;
    private final ScheduledExecutorService timers;
    private final ExecutorService workers;
    private final ExitPoller exits;
    /** The instances being watched, with their directories. */
    private final Map<InstanceId, InstanceDirectory> watched = new ConcurrentHashMap<>();
    /**
     * Per run: launches are serialized (so that an instance starts once), and so are a launch (or a probe starting) and
     * the sweep of the run's uid when its last instance ended. One lock per run, so that nothing a run does can make
     * another run's launch wait.
     */
    private final Map<RunId, java.util.concurrent.locks.ReentrantLock> runLocks = new ConcurrentHashMap<>();
    /**
     * A launch waits this long for a sweep of the run's uid that is under way (milliseconds, normally); one that takes
     * longer (processes stuck in the kernel) fails the launch, rather than hold up the control loop.
     */
    private static final Duration LAUNCH_LOCK_WAIT = Duration.ofSeconds(2);
    private final Path pins;
    private final Trash trash;
    private final Trash storageTrash;
    private final RunFiles runFiles;
    private final LogLimit logLimit;
    private final int maxProcessesPerRun;
    private final java.util.concurrent.atomic.AtomicBoolean limitingLogs = new java.util.concurrent.atomic.AtomicBoolean();
    /** Instances with an image, and runs with a network of their own. */
    private final Containers containers;
    private static final Duration IMAGE_COLLECTION_EVERY = Duration.ofHours(1);
    private volatile Consumer<InstanceReport> listener = report -> {
    };
    private volatile boolean closed;

    public LocalProcessExecutor(Path root, List<NodeInfo> nodes, List<String> inheritedEnv, Clock clock) {
        this(root, nodes, inheritedEnv, Isolation.off(), clock);
    }

    public LocalProcessExecutor(Path root, List<NodeInfo> nodes, List<String> inheritedEnv, Isolation isolation, Clock clock) {
        this(root, nodes, inheritedEnv, isolation, null, DEFAULT_LOG_LIMIT_BYTES, 0, clock);
    }

    /**
     * @param root         directory under which instance directories are made (created if missing); shared storage
     *                     lives next to it, in {@code storage/}
     * @param nodes        the nodes to run on; their names must be unique
     * @param inheritedEnv names of the server's environment variables passed on to instances
     * @param toolsDir     put first on the instances' PATH (the {@code slipstream} command), or {@code null}
     * @param logLimit     bytes kept of each log of an instance (older output is let go of); 0 keeps everything
     * @param maxProcessesPerRun with isolation, how many processes (threads count) a run may have at once; 0: an eighth
     *                     of the machine's {@code pid_max}, at least 1,024 and at most 65,536
     */
    public LocalProcessExecutor(Path root, List<NodeInfo> nodes, List<String> inheritedEnv, Isolation isolation, Path toolsDir, long logLimit,
                                int maxProcessesPerRun, Clock clock) {
        this(root, nodes, inheritedEnv, isolation, toolsDir, logLimit, maxProcessesPerRun, ImageSettings.DEFAULTS, clock);
    }

    /** @param images how long unused images are kept and a pull may take */
    public LocalProcessExecutor(Path root, List<NodeInfo> nodes, List<String> inheritedEnv, Isolation isolation, Path toolsDir, long logLimit,
                                int maxProcessesPerRun, ImageSettings images, Clock clock) {
        this(root, nodes, inheritedEnv, isolation, toolsDir, logLimit, maxProcessesPerRun, images, Launcher.Mode.auto, clock);
    }

    /** @param launcher what starts instances: the launcher binary or the shell ({@link Launcher}) */
    public LocalProcessExecutor(Path root, List<NodeInfo> nodes, List<String> inheritedEnv, Isolation isolation, Path toolsDir, long logLimit,
                                int maxProcessesPerRun, ImageSettings images, Launcher.Mode launcher, Clock clock) {
        this(root, nodes, inheritedEnv, isolation, toolsDir, logLimit, maxProcessesPerRun, clock, UidLeftovers.SHARED_PLACES, images, launcher);
    }

    LocalProcessExecutor(Path root, List<NodeInfo> nodes, List<String> inheritedEnv, Isolation isolation, Path toolsDir, long logLimit,
                         int maxProcessesPerRun, Clock clock, List<Path> sharedPlaces) {
        this(root, nodes, inheritedEnv, isolation, toolsDir, logLimit, maxProcessesPerRun, clock, sharedPlaces, ImageSettings.DEFAULTS,
                Launcher.Mode.auto);
    }

    /**
     * @param sharedPlaces the directories every user may write, cleared of what a run's uid left there before the uid
     *                     is given again: {@link UidLeftovers#SHARED_PLACES}; a test gives one of its own, whose files it
     *                     alone makes and removes
     */
    LocalProcessExecutor(Path root, List<NodeInfo> nodes, List<String> inheritedEnv, Isolation isolation, Path toolsDir, long logLimit,
                         int maxProcessesPerRun, Clock clock, List<Path> sharedPlaces, ImageSettings imageSettings, Launcher.Mode launcherMode) {
        this.root = root.toAbsolutePath().normalize();
        this.handles = new InstanceHandles(this.root, isolation.enabled());
        this.fence = new EpochFence(this.root);
        this.maxProcessesPerRun = maxProcessesPerRun > 0 ? maxProcessesPerRun : defaultMaxProcessesPerRun();
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
            this.storageTrash = new Trash(storageRoot.resolve(".trash"));
        } catch (IOException e) {
            throw new ExecutorException("cannot create " + this.root, e);
        }
        this.launcher = Launcher.of(requireNonNull(launcherMode, "launcherMode is null"), this.root);
        this.launchHelper = launcher.isBinary() ? new LaunchHelper(launcher.binary(), this.root, Supervisor.PID_FILE_TIMEOUT) : null;
        this.uids = isolation.enabled() ? new UidAllocator(this.root, storageRoot, isolation, trash) : null;
        this.storage = new SharedStorage(storageRoot, uids);
        this.runFiles = new RunFiles(this.root, storage, trash, storageTrash, uids, new UidLeftovers(sharedPlaces));
        this.timers = Executors.newSingleThreadScheduledExecutor(daemon("slipstream-local-timer"));
        this.workers = Executors.newCachedThreadPool(daemon("slipstream-local-watch"));
        this.prober = new StartupProber(timers, workers, clock, this::report, this::whileWatched);
        this.exits = new ExitPoller(timers, workers);
        this.stopper = new Stopper(timers, workers, clock, id -> !closed && watched.containsKey(id));
        this.containers = new Containers(this.root, uids != null, requireNonNull(imageSettings, "imageSettings is null"), clock, workers);
        workers.execute(runFiles::emptyTrash); // what a previous life left there
        timers.scheduleWithFixedDelay(() -> workers.execute(() -> containers.collectImages(List.copyOf(watched.values()))), IMAGE_COLLECTION_EVERY.toMillis(), IMAGE_COLLECTION_EVERY.toMillis(),
                TimeUnit.MILLISECONDS);
        if (logLimit > 0) {
            // On a worker, not the timer thread, which also sends every stop's SIGKILLs; one round at a time.
            timers.scheduleWithFixedDelay(() -> workers.execute(this::limitLogs), LOG_LIMIT_EVERY.toMillis(), LOG_LIMIT_EVERY.toMillis(),
                    TimeUnit.MILLISECONDS);
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
        return new Endpoint("localhost", "localhost", "127.0.0.1", freeLoopbackPorts(ports, taken));
    }

    /** An ended instance's directory is set aside and the rank starts again in a new one, on the same node and GPUs. */
    @Override
    public boolean restartsInPlace() {
        return true;
    }

    /** With a uid per run, every process of a run is killed before its end is reported; without, only its process trees. */
    @Override
    public Containment containment() {
        return uids == null ? Containment.PROCESS_TREE : Containment.EVERY_PROCESS;
    }

    /** See {@link Containers#refusals}. */
    @Override
    public Map<String, String> refusals(io.slipstream.api.spec.JobSpec job) {
        return containers.refusals(job);
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
        java.util.concurrent.locks.ReentrantLock lock = runLock(spec.id().runId());
        try {
            if (!lock.tryLock(LAUNCH_LOCK_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new ExecutorException("instance " + spec.id() + " cannot start: processes of the run's last attempt are still being killed");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ExecutorException("interrupted while launching " + spec.id(), e);
        }
        try {
            InstanceDirectory dir = directoryOf(spec.id());
            Optional<Map<String, String>> existing;
            try {
                existing = handles.read(dir);
            } catch (IOException e) {
                throw new ExecutorException("cannot read the state of instance " + spec.id() + ": " + e.getMessage(), e);
            }
            if (existing.isPresent() && io.slipstream.executor.Executor.restartOf(existing.get()) >= spec.restart()) {
                // Launched before (the control plane crashed between launch and recording it): adopt, never twice.
                watch(spec.id(), existing.get(), dir, null);
                return existing.get();
            }
            if (existing.isPresent()) {
                setAside(spec, existing.get(), dir);
            }
            return fence.guarded(() -> start(spec, node, dir));
        } finally {
            lock.unlock();
        }
    }

    /**
     * A restart in place: the rank's last process must be over (its end reported), and its directory goes aside, so that
     * nothing it left (pid, exit code, notice, readiness) is read as the new process's.
     */
    private void setAside(LaunchSpec spec, Map<String, String> last, InstanceDirectory dir) {
        if (watched.containsKey(spec.id()) || handles.supervisorAlive(last)) {
            throw new ExecutorException("instance " + spec.id() + " cannot restart: its last process (restart "
                    + io.slipstream.executor.Executor.restartOf(last) + ") is still running");
        }
        try {
            Path aside = dir.setAside(io.slipstream.executor.Executor.restartOf(last));
            LOG.info("instance {} restarts in place (restart {}); its last launch is kept in {}", spec.id(), spec.restart(), aside);
        } catch (IOException e) {
            throw new ExecutorException("cannot restart instance " + spec.id() + ": " + e.getMessage(), e);
        }
    }

    private Map<String, String> start(LaunchSpec spec, NodeInfo node, InstanceDirectory dir) {
        try {
            Integer uid = uids == null ? null : uids.uidFor(spec.id().runId());
            for (Path path = dir.path().getParent(); path.startsWith(root) && !path.equals(root); path = path.getParent()) {
                Files.createDirectories(path);
                if (uid != null) {
                    InstanceDirectory.passableByGroup(path, uid);
                }
            }
            Path workingDir = dir.create(uid, spec.workingDir());
            if (spec.restart() > 0) {
                dir.recordRestart(spec.restart()); // before the pid file: every handle read of this launch names it
            }
            dir.recordEpoch("launch", fence.epoch()); // under the fence's lock: launch is called in fence.guarded
            SharedStorage.Prepared shared = spec.metadata() == null ? null : storage.prepare(spec.metadata());
            Integer gid = shared == null ? null : shared.gid();
            return startSupervisor(spec, node, dir, uid, gid, workingDir, shared, containers.networkOf(spec));
        } catch (IOException e) {
            throw new ExecutorException("cannot start instance " + spec.id() + ": " + e.getMessage(), e);
        }
    }

    /** Writes the secrets and the environment last, and takes them away again if the instance does not start. */
    private Map<String, String> startSupervisor(LaunchSpec spec, NodeInfo node, InstanceDirectory dir, Integer uid, Integer gid, Path workingDir,
                                                SharedStorage.Prepared shared, Path network) throws IOException {
        try {
            Path secretsDir = spec.secretFiles().isEmpty() ? null : SecretFiles.write(dir.path(), spec.secretFiles(), uid);
            Path sandboxArguments = null;
            if (spec.image() != null) {
                sandboxArguments = containers.prepareSandbox(spec, node, dir, uid, gid, workingDir, shared, secretsDir, network);
            } else {
                Map<String, String> environment = Containers.onNetwork(InstanceEnvironment.of(spec, node, dir, uid, shared, secretsDir, inheritedEnv, toolsDir),
                        network);
                if (uid != null && !spec.env().containsKey("PATH") && !spec.command().isEmpty()) {
                    // Only the server's own PATH is judged: a job's PATH is its own, and looking through it as root would
                    // tell a tenant what exists in directories it may not read.
                    java.util.Optional<String> unreachable = CommandReach.problem(spec.command().get(0), environment.get("PATH"), uid);
                    if (unreachable.isPresent()) {
                        throw new ExecutorException("cannot start instance " + spec.id() + ": " + unreachable.get());
                    }
                }
                dir.writeEnvironment(environment);
            }
            List<String> argv = Supervisor.argv(launcher, dir.path(), workingDir, uid, gid, maxProcessesPerRun, network, sandboxArguments,
                    spec.command());
            CompletableFuture<Void> supervisorEnded = Supervisor.start(launchHelper, argv, dir);
            if (dir.pids() == null) {
                throw new IOException("the supervisor exited before starting the command: " + dir.supervisorOutput());
            }
            Map<String, String> handle = handles.read(dir).orElseThrow();
            watch(spec.id(), handle, dir, supervisorEnded);
            if (spec.probe() != null) {
                // It runs in the instance's environment, from the same file.
                StartupProber.Probe probe = new StartupProber.Probe(spec.probe().command(), spec.probe().periodSeconds(),
                        spec.probe().failureThreshold(), spec.probe().initialDelaySeconds(), workingDir.toString(), uid, gid,
                        uid == null ? null : maxProcessesPerRun, network == null ? null : network.toString(),
                        sandboxArguments == null ? null : sandboxArguments.toString());
                StartupProber.save(dir.path(), probe);
                prober.start(spec.id(), dir.path(), probe, probe.initialDelaySeconds());
            }
            return handle;
        } catch (IOException | RuntimeException e) {
            if (!watched.containsKey(spec.id())) {
                removeSecretFiles(spec.id(), dir);
            }
            throw e;
        }
    }

    @Override
    public Optional<Map<String, String>> find(InstanceId id) {
        try {
            return handles.read(directoryOf(id));
        } catch (IOException e) {
            throw new ExecutorException("cannot read the state of instance " + id + ": " + e.getMessage(), e);
        }
    }

    // --- watching and reporting ---

    @Override
    public void adopt(Map<InstanceId, Map<String, String>> adopted) {
        fence.check(); // watching kills what an adopted instance left behind: not for a replica that lost its lease
        adopted.forEach((id, stored) -> {
            InstanceLocation location = handles.locate(id, stored);
            if (location instanceof InstanceLocation.Missing missing) {
                lose(id, stored, missing.reason());
                return;
            }
            InstanceLocation.Found found = (InstanceLocation.Found) location;
            if (found.moved()) {
                LOG.info("instance {} is adopted from {}, where its id puts it: its handle named {}", id, found.dir(), stored.get("dir"));
            }
            if (!Files.isDirectory(found.dir(), LinkOption.NOFOLLOW_LINKS)) {
                // The store knows an instance this data directory does not have: the store came from elsewhere (a
                // backup). Its processes, if any, belong to that other data directory: not ours to kill.
                report(new InstanceReport.Lost(id, "its instance directory " + found.dir() + " is not in this data"
                        + " directory (the store was restored from a backup, or the directory was removed)", clock.instant()));
                return;
            }
            InstanceDirectory dir = new InstanceDirectory(found.dir());
            Map<String, String> handle = handles.relative(stored, dir);
            if (!handles.sameBoot(handle) && dir.exitCode() == null) {
                report(new InstanceReport.Lost(id, "the machine restarted since the instance was launched", clock.instant()));
                return;
            }
            watch(id, handle, dir, null);
            if (handles.supervisorAlive(handle)) {
                // With the handle as it is now (a relative directory): the store records it in place of the old one.
                report(new InstanceReport.Running(id, handle, clock.instant()));
                resumeProbe(id, dir.path());
            }
        });
    }

    /**
     * An instance whose directory cannot be found cannot record how it ends: it is reported lost (its run then restarts
     * or fails, as for any lost instance), after whatever still runs of it is killed, on a worker thread, so that it
     * does not run on beside its replacement. Its processes are known by pid, start time and boot, never by directory.
     */
    private void lose(InstanceId id, Map<String, String> handle, String reason) {
        LOG.warn("instance {} is lost: {}", id, reason);
        workers.execute(() -> {
            try {
                if (handles.sameBoot(handle)) {
                    InstanceHandles.processes(handle).killUntilGone();
                }
            } catch (RuntimeException e) {
                LOG.warn("cannot kill what is left of lost instance {}: {}", id, e.toString());
            }
            report(new InstanceReport.Lost(id, reason, clock.instant()));
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
            prober.start(id, dir, probe, 0);
        }
    }

    /** Watches an instance's supervisor (once per instance) and reports when it ends. */
    private void watch(InstanceId id, Map<String, String> handle, InstanceDirectory dir, CompletableFuture<Void> supervisorEnded) {
        if (closed || watched.putIfAbsent(id, dir) != null) {
            return;
        }
        CompletableFuture<?> ended;
        java.util.function.Supplier<CompletableFuture<Void>> byPid = () -> exits.onExit(Long.parseLong(handle.get("supervisorPid")),
                Long.parseLong(handle.get("supervisorStart")));
        if (supervisorEnded != null) {
            // Heard from the launch helper, unless it ends first: then followed by pid, as after a restart.
            ended = supervisorEnded.exceptionallyCompose(gone -> byPid.get());
        } else if (handles.sameBoot(handle)) {
            ended = byPid.get();
        } else {
            ended = CompletableFuture.completedFuture(null);
        }
        ended.whenCompleteAsync((ignored, error) -> finish(id, handle, dir), workers);
    }

    /** Runs on a worker thread: may wait for stubborn processes to die. */
    private void finish(InstanceId id, Map<String, String> handle, InstanceDirectory dir) {
        if (closed) {
            return;
        }
        long pid = Long.parseLong(handle.get("pid"));
        Integer exitCode = dir.exitCode();
        if (exitCode == null && handles.sameBoot(handle) && ProcFs.isAlive(pid, Long.parseLong(handle.get("pidStart")))) {
            // The supervisor was killed but the instance still runs: follow the instance itself.
            exits.onExit(pid, Long.parseLong(handle.get("pidStart"))).whenCompleteAsync((ignored, error) -> finish(id, handle, dir), workers);
            return;
        }
        if (handles.sameBoot(handle)) {
            InstanceHandles.processes(handle).killUntilGone(); // whatever the main process left behind goes with it
        }
        endWatching(id, handles.sameBoot(handle));
        removeSecretFiles(id, dir);
        if (exitCode == null) {
            report(new InstanceReport.Lost(id, "the instance's supervisor ended without recording an exit code", clock.instant()));
        } else {
            report(new InstanceReport.Exited(id, exitCode, dir.terminationRequested(), clock.instant()));
        }
    }

    /** An instance's secrets (and its environment, which may hold some) stay on disk while it runs, no longer. */
    private static void removeSecretFiles(InstanceId id, InstanceDirectory dir) {
        try {
            SecretFiles.remove(dir.path());
            dir.removeEnvironment();
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot remove the secret files of instance {}: {}", id, e.toString());
        }
    }

    /**
     * Stops watching the instance; when it was the run's last one, kills whatever else runs under the run's uid (daemons
     * that left the instance's session, a probe), before its end is reported: so a run is over only once nothing of it
     * runs. Under the run's lock, so that no instance or probe of the run is being started meanwhile.
     */
    private void endWatching(InstanceId id, boolean sameBoot) {
        java.util.concurrent.locks.ReentrantLock lock = runLock(id.runId());
        lock.lock();
        try {
            watched.remove(id);
            prober.stop(id); // a probe try still due is of this launch: never of the rank's restart in place
            boolean last = watched.keySet().stream().noneMatch(other -> other.runId().equals(id.runId()));
            Integer uid = last && sameBoot && uids != null ? uids.uidOf(id.runId()) : null;
            if (uid != null) {
                sweep(id, uid);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Kills what the run left under its uid, unless a newer epoch fenced this executor: then another replica leads,
     * and it may have launched instances of the run this one does not know of (it adopted this one too, and sweeps).
     */
    private void sweep(InstanceId id, int uid) {
        int killed;
        try {
            killed = fence.guarded(() -> sweeps.killAll(uid));
        } catch (ExecutorException fenced) {
            LOG.info("not killing what run {} left under uid {}: {}", id.runId(), uid, fenced.getMessage());
            return;
        }
        if (killed > 0) {
            LOG.info("killed the processes run {} left behind outside its instances (uid {})", id.runId(), uid);
        }
    }

    /** Runs {@code start} under the run's lock if the instance is still watched; {@code null} if it is not. */
    private <T> T whileWatched(InstanceId id, java.util.function.Supplier<T> start) {
        java.util.concurrent.locks.ReentrantLock lock = runLock(id.runId());
        lock.lock();
        try {
            return !closed && watched.containsKey(id) ? start.get() : null;
        } finally {
            lock.unlock();
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
        fence.check(); // the notice alone makes an instance save its work and leave
        InstanceLocation location = handles.locate(id, handle);
        if (location instanceof InstanceLocation.Missing missing) {
            if (!watched.containsKey(id)) {
                lose(id, handle, missing.reason()); // nothing can record its end: it is lost, not waited for
            }
            return;
        }
        InstanceDirectory dir = new InstanceDirectory(((InstanceLocation.Found) location).dir());
        if (dir.exitCode() == null) {
            dir.markTerminationRequested();
            if (!gracePeriod.isZero()) {
                dir.writeNotice(reason, clock.instant().plus(gracePeriod));
            }
        }
        watch(id, handle, dir, null);
        if (!handles.sameBoot(handle)) {
            return; // launched before a reboot: nothing of it runs, and its pid may now be someone else's
        }
        fence.guarded(() -> {
            dir.recordEpoch("stop", fence.epoch());
            stopper.stop(id, InstanceHandles.processes(handle), dir, gracePeriod);
        });
    }

    @Override
    public void fence(long epoch) {
        fence.fence(epoch);
    }

    @Override
    public io.slipstream.executor.Activity activity(InstanceId id, Map<String, String> handle) {
        InstanceDirectory dir = directoryOf(id, handle);
        Integer owner = uids == null ? null : uids.uidOf(id.runId());
        return new io.slipstream.executor.Activity(dir.lastOutputAt(), ProgressFile.read(dir.progressFile(), pins, owner));
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
        return handle.containsKey("dir") ? handles.directoryOf(id, handle) : directoryOf(id);
    }

    @Override
    public void forget(RunId runId) {
        if (watched.keySet().stream().anyMatch(id -> id.runId().equals(runId))) {
            throw new ExecutorException("run " + runId + " still has instances running");
        }
        runFiles.remove(runId);
        containers.forget(runId);
        runLocks.remove(runId);
        workers.execute(runFiles::emptyTrash);
    }

    /** Holds every watched instance's logs to the limit. */
    private void limitLogs() {
        if (!limitingLogs.compareAndSet(false, true)) {
            return; // the last round is still going
        }
        try {
            logLimit.enforce(List.copyOf(watched.values()));
        } catch (RuntimeException e) {
            LOG.warn("cannot hold instance logs to their limit: {}", e.toString());
        } finally {
            limitingLogs.set(false);
        }
    }

    @Override
    public void close() {
        closed = true;
        if (launchHelper != null) {
            launchHelper.close();
        }
        containers.close();
        timers.shutdownNow();
        workers.shutdownNow();
    }

    /** The launch helper's pid, or -1 when none runs (for tests). */
    long launchHelperPid() {
        return launchHelper == null ? -1 : launchHelper.pid();
    }

    // --- handles and files ---

    InstanceDirectory directoryOf(InstanceId id) {
        return handles.directoryOf(id);
    }

    /** Ports free on the loopback address now, none of them in {@code taken}. */
    private static List<Integer> freeLoopbackPorts(int ports, java.util.Set<Integer> taken) {
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
        return List.copyOf(chosen);
    }

    /** So that no run can take every pid of the machine (the server then could not start a thread). */
    static int defaultMaxProcessesPerRun() {
        try {
            long pidMax = Long.parseLong(Files.readString(Path.of("/proc/sys/kernel/pid_max")).trim());
            return (int) Math.max(1024, Math.min(65_536, pidMax / 8));
        } catch (IOException | RuntimeException e) {
            return 4096;
        }
    }

    private java.util.concurrent.locks.ReentrantLock runLock(RunId run) {
        return runLocks.computeIfAbsent(run, r -> new java.util.concurrent.locks.ReentrantLock());
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
