package io.slipstream.executor.slurm;

import static java.util.Objects.requireNonNull;

import io.slipstream.api.run.Endpoint;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.RunId;
import io.slipstream.api.spec.JobSpec;
import io.slipstream.executor.Activity;
import io.slipstream.executor.EpochFence;
import io.slipstream.executor.Executor;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.IdentityToken;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.LogChunk;
import io.slipstream.executor.LogStream;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.ResourceEnforcement;
import io.slipstream.executor.local.files.InstanceDirectory;
import io.slipstream.executor.local.files.Trash;
import io.slipstream.executor.local.storage.SharedStorage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs each instance as a Slurm batch job pinned to the node Slipstream chose, in a partition reserved for Slipstream
 * (docs/slurm.md). Slipstream decides what runs where and when; Slurm starts, fences and ends the processes.
 *
 * <p>The nodes are the partition's, as {@code sinfo} describes them ({@link SlurmNodes}). Each launch is one job
 * ({@link JobSubmission}: {@code --nodelist}, the instance's CPUs, memory and {@code --gres=gpu:N}) whose script is the
 * executor's fixed wrapper ({@link InstanceScript}); everything of the instance is in its directory on the shared file
 * system, laid out as the local executor lays out its own ({@link InstanceDirectory}), with its logs ({@code sbatch -o
 * -e}). A job is named after its instance ({@link JobName}), which finds it again after a restart of the server
 * ({@link InstanceLaunch#submitted}); its state is followed with {@code squeue} and its end read from what its wrapper
 * recorded ({@link JobWatch}). Every launch and stop runs under the leader epoch's fence, kept on the shared file
 * system ({@link EpochFence}): a replica that lost its lease submits and cancels nothing.
 */
final class SlurmExecutor implements Executor {
    private static final Logger LOG = LoggerFactory.getLogger(SlurmExecutor.class);
    private static final int WORKERS = 8;

    private final SlurmSettings settings;
    private final Clock clock;
    private final SlurmCommands commands;
    private final SlurmNodes nodes;
    private final SlurmHandles handles;
    private final EpochFence fence;
    private final SharedStorage storage;
    private final Trash trash;
    private final Trash storageTrash;
    private final Path pins;
    private final InstanceLaunch launcher;
    private final JobWatch watch;
    private final SlurmConfig config;
    private final SlurmAccounts accounts;
    /** squeue's arguments that read every job of the partition that may be an instance's. */
    private final List<String> queue;
    private final ScheduledExecutorService timer;
    private final ExecutorService workers;
    /** Empties the trash, one pass at a time, never on the workers that run stops' scancel. */
    private final ExecutorService trashEmptier = Executors.newSingleThreadExecutor(daemon("slurm-executor-trash"));
    /** Whether a pass of the trash is queued and not begun: asks meanwhile join it. */
    private final java.util.concurrent.atomic.AtomicBoolean trashQueued = new java.util.concurrent.atomic.AtomicBoolean();
    private final Map<InstanceId, ReentrantLock> launchLocks = new ConcurrentHashMap<>();

    /**
     * Reads the partition's nodes and the cluster's configuration, and starts following jobs.
     *
     * @param stateDir a directory of the server's for the executor's own files (the wrapper script sbatch reads)
     * @throws ExecutorException if Slurm does not answer, the partition has no node, or the settings do not allow it to
     *                           start ({@link SlurmSettings#startRefusal})
     */
    SlurmExecutor(SlurmSettings settings, Path stateDir, Clock clock) {
        this.settings = requireNonNull(settings, "settings is null");
        SlurmSettings.Refusal refusal = settings.startRefusal(SlurmSettings.runningAsRoot());
        if (refusal != null) {
            throw new ExecutorException(refusal.toString());
        }
        this.accounts = SlurmAccounts.resolve(settings, name -> SlurmAccounts.lookUp(name, settings.commandTimeout()));
        this.clock = requireNonNull(clock, "clock is null");
        this.commands = new SlurmCommands(settings.commands(), settings.slurmConf(), settings.commandTimeout());
        this.nodes = new SlurmNodes(commands, settings);
        nodes.refresh();
        this.config = readConfig(commands);
        this.handles = new SlurmHandles(settings.instancesRoot());
        SharedDirectory shared = SharedDirectory.prepare(settings, accounts.others());
        this.pins = shared.pins();
        this.trash = shared.trash();
        this.storageTrash = shared.storageTrash();
        this.fence = new EpochFence(settings.sharedDirectory());
        this.queue = queueArguments(settings, accounts);
        this.storage = new SharedStorage(settings.storageRoot(), accounts::groupOf);
        this.launcher = new InstanceLaunch(settings, commands, handles, storage, InstanceScript.install(stateDir), accounts, queue);
        this.timer = Executors.newSingleThreadScheduledExecutor(daemon("slurm-executor-timer"));
        this.workers = workers();
        this.watch = new JobWatch(commands, settings, queue, fence, clock, timer, workers);
        long refresh = settings.nodeRefresh().toMillis();
        timer.scheduleWithFixedDelay(() -> workers.execute(nodes::refreshQuietly), refresh, refresh, TimeUnit.MILLISECONDS);
        emptyTrashSoon(); // what a previous life left there
    }

    /**
     * squeue's arguments that read every job of the partition an instance's may be: the server's own account's jobs
     * ({@code --me}), or those of the accounts jobs run as.
     */
    static List<String> queueArguments(SlurmSettings settings, SlurmAccounts accounts) {
        List<String> arguments = new java.util.ArrayList<>(List.of("--noheader"));
        arguments.add(accounts.others() ? "--user=" + String.join(",", accounts.names(System.getProperty("user.name"))) : "--me");
        arguments.addAll(List.of("--states=all", "--partition=" + settings.partition())); // the format is each reading's (JobState.read)
        return List.copyOf(arguments);
    }

    private static SlurmConfig readConfig(SlurmCommands commands) {
        try {
            return SlurmConfig.parse(commands.run("scontrol", "show", "config"));
        } catch (ExecutorException e) {
            LOG.warn("cannot read Slurm's configuration (what it enforces is not known): {}", e.getMessage());
            return null;
        }
    }

    /**
     * Threads for stops' Slurm commands and node refreshes (the trash has a thread of its own): a few, so that a thousand instances preempted at once
     * do not run a thousand scancel at once (the rest wait their turn).
     */
    private static ExecutorService workers() {
        java.util.concurrent.ThreadPoolExecutor pool = new java.util.concurrent.ThreadPoolExecutor(WORKERS, WORKERS, 30, TimeUnit.SECONDS,
                new java.util.concurrent.LinkedBlockingQueue<>(), daemon("slurm-executor-work"));
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return runnable -> {
            Thread thread = new Thread(runnable, name);
            thread.setDaemon(true);
            return thread;
        };
    }

    @Override
    public List<NodeInfo> nodes() {
        return nodes.placeable();
    }

    /**
     * The node's host name and address, and ports from {@code slurm.ports} that no instance on its address holds; on this
     * machine (nodes emulated here), also free now.
     */
    @Override
    public Endpoint endpoint(InstanceId id, String workspace, String name, String node, int ports, Set<Integer> taken) {
        SlurmNode slurmNode = requireNode(node);
        String hostname = slurmNode.hostname() != null ? slurmNode.hostname() : slurmNode.name();
        String ip = nodes.ipOf(node);
        return new Endpoint(hostname, hostname, ip, NodePorts.free(ip, ports, taken, settings.firstPort(), settings.lastPort()));
    }

    /**
     * Nodes at one address (emulated on one machine) share its ports; a node of its own address has its own. Nodes whose
     * address is not known share one domain, as every node did before: they may be one machine.
     */
    @Override
    public String portDomain(String node) {
        String ip = nodes.ipOf(node);
        return ip != null ? ip : "";
    }

    /** Slurm's queue or nodes cannot be read: what it last said. */
    @Override
    public String problem() {
        String queue = watch.problem();
        return queue != null ? queue : nodes.problem();
    }

    @Override
    public Containment containment() {
        return config == null ? Containment.PROCESS_TREE : config.containment();
    }

    @Override
    public ResourceEnforcement enforcement() {
        return config == null ? null : config.enforcement();
    }

    /** A new job in place of one that ended, on the same node: Slurm gives it the GPUs the ended one had (Slipstream holds no other free). */
    @Override
    public boolean restartsInPlace() {
        return true;
    }

    @Override
    public Map<String, String> refusals(JobSpec job) {
        return SlurmRefusals.of(job);
    }

    @Override
    public void fence(long epoch) {
        fence.fence(epoch);
    }

    @Override
    public void setListener(Consumer<InstanceReport> listener) {
        watch.setListener(requireNonNull(listener, "listener is null"));
    }

    // --- launch ---

    @Override
    public Map<String, String> launch(LaunchSpec spec) {
        SlurmNode node = requireNode(spec.node());
        if (spec.image() != null) {
            throw new ExecutorException("instance " + spec.id() + " names an image: the Slurm executor runs no container image");
        }
        int gpus = node.info().capacity().gpu();
        for (int gpu : spec.gpus()) {
            if (gpu < 0 || gpu >= gpus) {
                throw new ExecutorException("node " + node.name() + " has no GPU " + gpu + ": its gpu GRES has " + gpus);
            }
        }
        SlurmAccounts.Account account = launcher.accountOf(spec);
        ReentrantLock lock = launchLocks.computeIfAbsent(spec.id(), id -> new ReentrantLock());
        lock.lock();
        try {
            InstanceDirectory dir = handles.directoryOf(spec.id(), account);
            Optional<Map<String, String>> existing = submitted(spec.id(), dir);
            if (existing.isPresent() && !spec.node().equals(existing.get().get(SlurmHandles.NODE))) {
                // The directory (which the workload can write) records a launch on another node than the one asked.
                throw new ExecutorException("instance " + spec.id() + " cannot start on node " + spec.node() + ": its directory records a launch on"
                        + " node \"" + SlurmHandles.printable(existing.get().get(SlurmHandles.NODE)) + "\"");
            }
            if (existing.isPresent() && Executor.restartOf(existing.get()) >= spec.restart()) {
                // Launched before (the control plane crashed between launch and recording it): followed, never submitted twice.
                watch.watch(spec.id(), existing.get(), dir, false);
                if (!spec.identity().isEmpty()) {
                    refreshIdentity(spec.id(), existing.get(), spec.identity()); // its tokens are the crashed server's
                }
                return existing.get();
            }
            if (existing.isPresent()) {
                setAside(spec, existing.get(), dir);
            }
            return fence.guarded(() -> {
                Map<String, String> handle = launcher.submit(spec, node, dir, account, fence.epoch());
                watch.watch(spec.id(), handle, dir, false);
                return handle;
            });
        } finally {
            lock.unlock();
        }
    }

    /** The partition's node of that name (read again once when it is not known: it may be new). */
    private SlurmNode requireNode(String name) {
        SlurmNode node = nodes.get(name);
        if (node == null) {
            nodes.refreshQuietly();
            node = nodes.get(name);
        }
        if (node == null) {
            throw new ExecutorException("no node named " + name + " in Slurm's partition " + settings.partition());
        }
        return node;
    }

    private Optional<Map<String, String>> submitted(InstanceId id, InstanceDirectory dir) {
        try {
            return launcher.submitted(dir, id);
        } catch (IOException e) {
            throw new ExecutorException("cannot read the state of instance " + id + ": " + e.getMessage(), e);
        }
    }

    /**
     * A restart in place: the last launch must be over (its end reported, its job gone), and its directory goes aside,
     * so that nothing it left (exit code, notice, readiness) is read as the new launch's.
     */
    private void setAside(LaunchSpec spec, Map<String, String> last, InstanceDirectory dir) {
        if (watch.isWatched(spec.id()) || jobIsLive(last.get(SlurmHandles.JOB), JobName.of(settings.jobNamePrefix(), spec.id(),
                Executor.restartOf(last)).toString())) {
            throw new ExecutorException("instance " + spec.id() + " cannot restart: its last launch (restart " + Executor.restartOf(last)
                    + ", Slurm job " + last.get(SlurmHandles.JOB) + ") is still running");
        }
        try {
            Path aside = dir.setAside(Executor.restartOf(last));
            LOG.info("instance {} restarts in place (restart {}); its last launch is kept in {}", spec.id(), spec.restart(), aside);
        } catch (IOException e) {
            throw new ExecutorException("cannot restart instance " + spec.id() + ": " + e.getMessage(), e);
        }
    }

    /** Whether the job of that id and name may still run (a job of another name is not the launch's). */
    private boolean jobIsLive(String job, String name) {
        JobState state = JobState.read(commands, queue).get(job);
        return state != null && state.named(name) && state.live();
    }

    @Override
    public Optional<Map<String, String>> find(InstanceId id) {
        return submitted(id, handles.directoryOf(id));
    }

    // --- following ---

    @Override
    public void adopt(Map<InstanceId, Map<String, String>> adopted) {
        fence.check(); // a replica that lost its lease follows (and so stops) nothing
        adopted.forEach((id, handle) -> {
            InstanceDirectory dir = handles.directoryOf(id, handle);
            String job = handle.get(SlurmHandles.JOB);
            if (!SlurmHandles.isJobId(job)) {
                watch.lose(id, "its handle names no Slurm job (launched by another executor?)");
            } else if (!Files.isDirectory(dir.path(), LinkOption.NOFOLLOW_LINKS)) {
                watch.lose(id, "its instance directory " + dir.path() + " is not on the shared file system (removed, or another"
                        + " slurm.sharedDirectory)");
            } else {
                watch.watch(id, handle, dir, true);
            }
        });
    }

    // --- stopping ---

    /** Returns at once: the Slurm commands go out from the executor's own threads. */
    @Override
    public void terminate(InstanceId id, Map<String, String> handle, Duration gracePeriod, String reason) {
        fence.check(); // the notice alone makes an instance save its work and leave
        InstanceDirectory dir = handles.directoryOf(id, handle);
        if (!SlurmHandles.isJobId(handle.get(SlurmHandles.JOB))) {
            LOG.warn("instance {}: not stopping it: its handle names no Slurm job id", id);
            if (!watch.isWatched(id)) {
                watch.lose(id, "its handle names no Slurm job");
            }
            return;
        }
        if (!Files.isDirectory(dir.path(), LinkOption.NOFOLLOW_LINKS)) {
            if (!watch.isWatched(id)) {
                watch.lose(id, "nothing of it can be found to stop (its instance directory " + dir.path() + " is gone)");
            }
            return;
        }
        WatchedJob job = watch.get(id);
        if (job != null && !job.job.equals(handle.get(SlurmHandles.JOB))) {
            LOG.info("instance {}: not stopping Slurm job {} of an earlier launch; job {} is its launch now", id, handle.get(SlurmHandles.JOB), job.job);
            return;
        }
        if (job == null) {
            job = watch.watch(id, handle, dir, false); // its end is reported once its job is gone
        }
        if (InstanceScript.exitCode(dir.path()) == null) {
            dir.markTerminationRequested();
            if (!gracePeriod.isZero()) {
                dir.writeNotice(reason, clock.instant().plus(gracePeriod));
            }
        }
        dir.recordEpoch("stop", fence.epoch());
        watch.stop(job, gracePeriod);
    }

    // --- what an instance shows ---

    @Override
    public Activity activity(InstanceId id, Map<String, String> handle) {
        InstanceDirectory dir = handles.directoryOf(id, handle);
        return new Activity(dir.logs().lastOutputAt(), dir.progress(pins, null));
    }

    @Override
    public boolean deliversIdentity() {
        return true;
    }

    /** Rewrites the token files where the instance reads them (the shared file system); none once its job ended. */
    @Override
    public boolean refreshIdentity(InstanceId id, Map<String, String> handle, List<IdentityToken> tokens) {
        WatchedJob job = watch.get(id);
        if (job == null || !job.job.equals(handle.get(SlurmHandles.JOB))) {
            return false;
        }
        try {
            return job.dir.refreshIdentity(tokens, SlurmHandles.uidOf(job.handle));
        } catch (IOException e) {
            throw new ExecutorException("cannot write the identity tokens of instance " + id + ": " + e.getMessage(), e);
        }
    }

    @Override
    public LogChunk readLog(InstanceId id, Map<String, String> handle, LogStream stream, long offset, int maxBytes) {
        return handles.directoryOf(id, handle).logs().read(stream, offset, maxBytes);
    }

    @Override
    public LogChunk readLogTail(InstanceId id, Map<String, String> handle, LogStream stream, int maxBytes) {
        return handles.directoryOf(id, handle).logs().tail(stream, maxBytes);
    }

    // --- forgetting ---

    @Override
    public void forget(RunId runId) {
        if (watch.watchesAnyOf(runId)) {
            throw new ExecutorException("run " + runId + " still has instances running");
        }
        Path dir = handles.root().resolve(runId.value()).normalize();
        if (!dir.startsWith(handles.root()) || dir.equals(handles.root())) {
            throw new ExecutorException("run directory " + dir + " is outside " + handles.root());
        }
        try {
            if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                trash.take(dir, runId.value());
            }
            storage.forgetRun(runId, storageTrash);
        } catch (IOException e) {
            throw new ExecutorException("cannot remove the files of run " + runId + ": " + e.getMessage(), e);
        }
        launchLocks.keySet().removeIf(id -> id.runId().equals(runId));
        emptyTrashSoon();
    }

    /** Empties the trash on its own thread; an ask while a pass waits to begin is that pass's. */
    private void emptyTrashSoon() {
        if (trashQueued.compareAndSet(false, true)) {
            try {
                trashEmptier.execute(() -> {
                    trashQueued.set(false);
                    emptyTrash();
                });
            } catch (java.util.concurrent.RejectedExecutionException e) {
                trashQueued.set(false); // closed: a restarted server empties it
            }
        }
    }

    /** Deletes what waits in the trash; what cannot go now is tried again next time. */
    private void emptyTrash() {
        for (Trash bin : List.of(storageTrash, trash)) {
            try {
                for (Path entry : bin.entries()) {
                    bin.delete(entry);
                }
            } catch (IOException e) {
                LOG.warn("cannot empty {} yet: {}", bin.dir(), e.getMessage());
            }
        }
    }

    /** Stops following; the jobs run on (a restarted server adopts them). */
    @Override
    public void close() {
        watch.close();
        timer.shutdownNow();
        workers.shutdownNow();
        trashEmptier.shutdownNow();
    }
}
