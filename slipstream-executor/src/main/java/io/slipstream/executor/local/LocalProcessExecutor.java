package io.slipstream.executor.local;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.Endpoint;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.executor.EpochFence;
import io.slipstream.executor.Activity;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.LogChunk;
import io.slipstream.executor.LogStream;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.ResourceEnforcement;
import io.slipstream.executor.local.cgroup.Cgroups;
import io.slipstream.executor.local.files.InstanceDirectory;
import io.slipstream.executor.local.files.LogLimit;
import io.slipstream.executor.local.files.PinnedFile;
import io.slipstream.executor.local.files.Trash;
import io.slipstream.executor.local.image.ImageSettings;
import io.slipstream.executor.local.network.LoopbackPorts;
import io.slipstream.executor.local.process.LaunchHelper;
import io.slipstream.executor.local.process.ProcFs;
import io.slipstream.executor.local.process.Supervisor;
import io.slipstream.executor.local.process.SupervisorProgram;
import io.slipstream.executor.local.storage.SharedStorage;
import io.slipstream.executor.local.uid.Isolation;
import io.slipstream.executor.local.uid.UidAllocator;
import io.slipstream.executor.local.uid.UidLeftovers;
import io.slipstream.executor.local.uid.UidSweep;
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
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
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
 * <p>This class answers the {@link Executor} SPI and serializes each run's launches; an instance's start is
 * {@link InstanceStart}'s, following it until it ended {@link InstanceWatch}'s, and every file a workload can reach is
 * read and written by the {@code files} package.
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
    private static final Duration IMAGE_COLLECTION_EVERY = Duration.ofHours(1);

    private final Path root;
    private final Cgroups cgroups;
    private final Map<String, NodeInfo> nodes;
    private final Clock clock;
    private final UidAllocator uids;
    private final InstanceHandles handles;
    private final EpochFence fence;
    private final RunLocks runLocks = new RunLocks();
    /** A directory of the server's that workloads' files are pinned into to be read ({@code files.PinnedFile}). */
    private final Path pins;
    /** Forks the supervisors where the supervisor program is the launcher binary; {@code null} with the shell. */
    private final LaunchHelper launchHelper;
    private final InstanceStart starter;
    private final InstanceWatch instances;
    private final RunFiles runFiles;
    private final LogLimit logLimit;
    private final java.util.concurrent.atomic.AtomicBoolean limitingLogs = new java.util.concurrent.atomic.AtomicBoolean();
    /** Instances with an image, and runs with a network of their own. */
    private final Containers containers;
    /** Whether instances may use more memory than they asked for. */
    private final MemoryBursts memoryBursts;
    private final ScheduledExecutorService timers;
    private final ExecutorService workers;
    private volatile Consumer<InstanceReport> listener = report -> {
    };

    public LocalProcessExecutor(Path root, List<NodeInfo> nodes, List<String> inheritedEnv, Clock clock) {
        this(root, nodes, inheritedEnv, Isolation.off(), clock);
    }

    public LocalProcessExecutor(Path root, List<NodeInfo> nodes, List<String> inheritedEnv, Isolation isolation, Clock clock) {
        this(root, nodes, inheritedEnv, isolation, null, DEFAULT_LOG_LIMIT_BYTES, 0, ImageSettings.DEFAULTS, SupervisorProgram.Mode.auto, clock);
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
     * @param images       how long unused images are kept and a pull may take
     * @param launcher     what starts instances: the launcher binary or the shell ({@link SupervisorProgram})
     */
    public LocalProcessExecutor(Path root, List<NodeInfo> nodes, List<String> inheritedEnv, Isolation isolation, Path toolsDir, long logLimit,
                                int maxProcessesPerRun, ImageSettings images, SupervisorProgram.Mode launcher, Clock clock) {
        this(root, nodes, inheritedEnv, isolation, toolsDir, logLimit, maxProcessesPerRun, images, launcher, Cgroups.off(), clock);
    }

    /** @param cgroups where instances get cgroups of their own, with their limits ({@link Cgroups#detect}) */
    public LocalProcessExecutor(Path root, List<NodeInfo> nodes, List<String> inheritedEnv, Isolation isolation, Path toolsDir, long logLimit,
                                int maxProcessesPerRun, ImageSettings images, SupervisorProgram.Mode launcher, Cgroups cgroups, Clock clock) {
        this(root, nodes, inheritedEnv, isolation, toolsDir, logLimit, maxProcessesPerRun, clock, UidLeftovers.SHARED_PLACES, images, launcher,
                cgroups, false);
    }

    /**
     * @param sharedPlaces    the directories every user may write, cleared of what a run's uid left there before the uid
     *                        is given again: {@link UidLeftovers#SHARED_PLACES}; a test gives one of its own, whose files
     *                        it alone makes and removes
     * @param burstableMemory whether an instance may use more memory than its request, up to its group's {@code limits.memory}
     */
    LocalProcessExecutor(Path root, List<NodeInfo> nodes, List<String> inheritedEnv, Isolation isolation, Path toolsDir, long logLimit,
                         int maxProcessesPerRun, Clock clock, List<Path> sharedPlaces, ImageSettings imageSettings,
                         SupervisorProgram.Mode launcherMode, Cgroups cgroups, boolean burstableMemory) {
        this.memoryBursts = new MemoryBursts(burstableMemory);
        this.root = root.toAbsolutePath().normalize();
        this.cgroups = requireNonNull(cgroups, "cgroups is null");
        this.handles = new InstanceHandles(this.root, isolation.enabled(), cgroups);
        this.fence = new EpochFence(this.root);
        this.nodes = new LinkedHashMap<>();
        for (NodeInfo node : nodes) {
            if (this.nodes.put(node.name(), node) != null) {
                throw new IllegalArgumentException("two nodes are named " + node.name());
            }
        }
        requireNonNull(isolation, "isolation is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.logLimit = new LogLimit(logLimit);
        Path storageRoot = this.root.resolveSibling("storage");
        Trash trash;
        Trash storageTrash;
        try {
            for (Path dir : List.of(this.root, storageRoot)) {
                Files.createDirectories(dir);
                if (isolation.enabled()) {
                    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
                }
            }
            // Both on the root's file system: pins are hard links, and taking out the trash is a rename.
            this.pins = PinnedFile.prepareDirectory(this.root.resolve(".pins"));
            trash = new Trash(this.root.resolve(".trash"));
            storageTrash = new Trash(storageRoot.resolve(".trash"));
        } catch (IOException e) {
            throw new ExecutorException("cannot create " + this.root, e);
        }
        SupervisorProgram program = SupervisorProgram.of(requireNonNull(launcherMode, "launcherMode is null"), this.root);
        this.launchHelper = program.launchHelper(this.root);
        this.uids = isolation.enabled() ? new UidAllocator(this.root, storageRoot, isolation, trash) : null;
        SharedStorage storage = new SharedStorage(storageRoot, uids);
        UidLeftovers leftovers = new UidLeftovers(sharedPlaces);
        this.runFiles = new RunFiles(this.root, storage, trash, storageTrash, uids, leftovers);
        this.timers = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("slipstream-local-timer"));
        this.workers = Executors.newCachedThreadPool(DaemonThreads.named("slipstream-local-watch"));
        this.instances = new InstanceWatch(handles, uids, leftovers, fence, runLocks, timers, workers, clock, this::report);
        this.containers = new Containers(this.root, uids != null, requireNonNull(imageSettings, "imageSettings is null"), clock, workers);
        this.starter = new InstanceStart(this.root, List.copyOf(inheritedEnv), toolsDir == null ? null : toolsDir.toAbsolutePath().normalize(),
                maxProcessesPerRun > 0 ? maxProcessesPerRun : defaultMaxProcessesPerRun(), uids, storage, containers, program, launchHelper, handles,
                cgroups, new GpuFence(cgroups, this.root, nodes));
        workers.execute(runFiles::emptyTrash); // what a previous life left there
        timers.scheduleWithFixedDelay(() -> workers.execute(() -> containers.collectImages(instances.directories())), IMAGE_COLLECTION_EVERY.toMillis(),
                IMAGE_COLLECTION_EVERY.toMillis(), TimeUnit.MILLISECONDS);
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
    public Endpoint endpoint(InstanceId id, String workspace, String name, String node, int ports, Set<Integer> taken) {
        if (!nodes.containsKey(node)) {
            throw new ExecutorException("no node named " + node);
        }
        return new Endpoint("localhost", "localhost", "127.0.0.1", LoopbackPorts.free(ports, taken));
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

    /** What the kernel holds instances to here (cgroups), and what it does not. */
    @Override
    public ResourceEnforcement enforcement() {
        return new ResourceEnforcement(cgroups.enforcement().enforced().stream().map(Enum::name).toList(), cgroups.enforcement().describe());
    }

    /** See {@link Containers#refusals} and {@link MemoryBursts#refusals}. */
    @Override
    public Map<String, String> refusals(JobSpec job) {
        Map<String, String> refusals = new LinkedHashMap<>(containers.refusals(job));
        refusals.putAll(memoryBursts.refusals(job));
        return refusals;
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
        ReentrantLock lock = runLocks.forLaunch(spec.id());
        try {
            InstanceDirectory dir = directoryOf(spec.id());
            Optional<Map<String, String>> existing;
            try {
                existing = handles.read(dir);
            } catch (IOException e) {
                throw new ExecutorException("cannot read the state of instance " + spec.id() + ": " + e.getMessage(), e);
            }
            if (existing.isPresent() && Executor.restartOf(existing.get()) >= spec.restart()) {
                // Launched before (the control plane crashed between launch and recording it): adopt, never twice.
                instances.watch(spec.id(), existing.get(), dir, null);
                if (!spec.identity().isEmpty()) { // its tokens are the crashed server's: the new ones go where it reads them
                    InstanceIdentity.refresh(handles, uids, spec.id(), existing.get(), spec.identity());
                }
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
        if (instances.isWatched(spec.id()) || handles.supervisorAlive(last)) {
            throw new ExecutorException("instance " + spec.id() + " cannot restart: its last process (restart "
                    + Executor.restartOf(last) + ") is still running");
        }
        try {
            Path aside = dir.setAside(Executor.restartOf(last));
            LOG.info("instance {} restarts in place (restart {}); its last launch is kept in {}", spec.id(), spec.restart(), aside);
        } catch (IOException e) {
            throw new ExecutorException("cannot restart instance " + spec.id() + ": " + e.getMessage(), e);
        }
    }

    /** Starts the instance and watches it; under the fence's lock (launch calls it in {@code fence.guarded}). */
    private Map<String, String> start(LaunchSpec spec, NodeInfo node, InstanceDirectory dir) {
        InstanceStart.Started started = starter.start(memoryBursts.limited(spec), node, dir, fence.epoch());
        instances.watch(spec.id(), started.handle(), dir, started.supervisorEnded());
        if (started.probe() != null) {
            try {
                instances.probe(spec.id(), dir, started.probe());
            } catch (IOException e) {
                throw new ExecutorException("cannot start instance " + spec.id() + ": " + e.getMessage(), e);
            }
        }
        return started.handle();
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
                instances.lose(id, stored, missing.reason());
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
            instances.watch(id, handle, dir, null);
            if (handles.supervisorAlive(handle)) {
                // With the handle as it is now (a relative directory): the store records it in place of the old one.
                report(new InstanceReport.Running(id, handle, clock.instant()));
                instances.resumeProbe(id, dir);
            }
        });
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
            if (!instances.isWatched(id)) {
                instances.lose(id, handle, missing.reason()); // nothing can record its end: it is lost, not waited for
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
        instances.watch(id, handle, dir, null);
        if (!handles.sameBoot(handle)) {
            return; // launched before a reboot: nothing of it runs, and its pid may now be someone else's
        }
        fence.guarded(() -> {
            dir.recordEpoch("stop", fence.epoch());
            instances.stop(id, handles.processes(handle), dir, gracePeriod);
        });
    }

    @Override
    public void fence(long epoch) {
        fence.fence(epoch);
    }

    @Override
    public Activity activity(InstanceId id, Map<String, String> handle) {
        InstanceDirectory dir = directoryOf(id, handle);
        Integer owner = uids == null ? null : uids.uidOf(id.runId());
        return new Activity(dir.logs().lastOutputAt(), dir.progress(pins, owner));
    }

    @Override
    public boolean deliversIdentity() {
        return true;
    }

    @Override
    public boolean refreshIdentity(InstanceId id, Map<String, String> handle, List<io.slipstream.executor.IdentityToken> tokens) {
        return InstanceIdentity.refresh(handles, uids, id, handle, tokens);
    }

    // --- logs ---

    @Override
    public LogChunk readLog(InstanceId id, Map<String, String> handle, LogStream stream, long offset, int maxBytes) {
        return directoryOf(id, handle).logs().read(stream, offset, maxBytes);
    }

    @Override
    public LogChunk readLogTail(InstanceId id, Map<String, String> handle, LogStream stream, int maxBytes) {
        return directoryOf(id, handle).logs().tail(stream, maxBytes);
    }

    /** The instance's directory: from its handle when it has one, else where its id puts it. */
    private InstanceDirectory directoryOf(InstanceId id, Map<String, String> handle) {
        return handle.containsKey("dir") ? handles.directoryOf(id, handle) : directoryOf(id);
    }

    @Override
    public void forget(RunId runId) {
        if (instances.watchesAnyOf(runId)) {
            throw new ExecutorException("run " + runId + " still has instances running");
        }
        runFiles.remove(runId);
        containers.forget(runId);
        runLocks.forget(runId);
        workers.execute(runFiles::emptyTrash);
    }

    /** Holds every watched instance's logs to the limit. */
    private void limitLogs() {
        if (!limitingLogs.compareAndSet(false, true)) {
            return; // the last round is still going
        }
        try {
            logLimit.enforce(instances.directories());
        } catch (RuntimeException e) {
            LOG.warn("cannot hold instance logs to their limit: {}", e.toString());
        } finally {
            limitingLogs.set(false);
        }
    }

    @Override
    public void close() {
        // The cgroups of the instances still running stay, also one whose first process has not entered its own yet
        // (a server stopping right after a launch: the instance found its cgroup gone and its start failed).
        java.util.Set<String> running = new java.util.HashSet<>();
        instances.directories().forEach(dir -> running.add(handles.cgroupName(dir, 0)));
        instances.close();
        if (launchHelper != null) {
            launchHelper.close();
        }
        containers.close();
        timers.shutdownNow();
        workers.shutdownNow();
        cgroups.tidy(name -> running.contains(InstanceHandles.firstLaunchCgroupName(name)));
    }

    /** The launch helper's pid, or -1 when none runs (for tests). */
    long launchHelperPid() {
        return launchHelper == null ? -1 : launchHelper.pid();
    }

    InstanceDirectory directoryOf(InstanceId id) {
        return handles.directoryOf(id);
    }

    /** So that no run can take every pid of the machine (the server then could not start a thread). */
    static int defaultMaxProcessesPerRun() {
        return ProcFs.pidMax().stream().mapToInt(pidMax -> (int) Math.max(1024, Math.min(65_536, pidMax / 8))).findFirst().orElse(4096);
    }
}
