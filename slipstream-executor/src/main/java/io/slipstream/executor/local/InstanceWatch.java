package io.slipstream.executor.local;

import io.slipstream.api.run.EndCause;
import io.slipstream.api.run.InstanceId;
import io.slipstream.api.run.InstanceUsage;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.EpochFence;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.InstanceReport;
import io.slipstream.executor.local.cgroup.CgroupUsage;
import io.slipstream.executor.local.files.InstanceDirectory;
import io.slipstream.executor.local.process.ExitPoller;
import io.slipstream.executor.local.process.InstanceProcesses;
import io.slipstream.executor.local.process.ProcFs;
import io.slipstream.executor.local.process.StartupProber;
import io.slipstream.executor.local.process.Stopper;
import io.slipstream.executor.local.uid.UidAllocator;
import io.slipstream.executor.local.uid.UidLeftovers;
import io.slipstream.executor.local.uid.UidSweep;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The instances the executor launched or adopted, watched until they end. Each supervisor's end is heard once per
 * instance (from the launch helper, or followed by pid and start time, as after a restart); then whatever the instance
 * left is killed, its secret files are removed, and only then is its end reported. When it was its run's last
 * instance, every other process of the run's uid is killed first ({@link UidSweep}): a run is over only once nothing
 * of it runs. An instance's startup probe tries only while it is watched, and its stop ends once it is not.
 */
final class InstanceWatch {
    private static final Logger LOG = LoggerFactory.getLogger(InstanceWatch.class);

    /** The instances being watched, with their directories. */
    private final Map<InstanceId, InstanceDirectory> watched = new ConcurrentHashMap<>();
    private final InstanceHandles handles;
    private final UidAllocator uids;
    /** Removes what a run's uid left in memory (a tmpfs) once its last instance ended. */
    private final UidLeftovers leftovers;
    private final EpochFence fence;
    private final RunLocks runLocks;
    private final ExecutorService workers;
    private final Clock clock;
    private final Consumer<InstanceReport> report;
    private final ExitPoller exits;
    private final StartupProber prober;
    private final Stopper stopper;
    /** Kills what runs left under their uids; concurrent sweeps share their passes over /proc. */
    private final UidSweep sweeps = new UidSweep();
    private volatile boolean closed;

    /**
     * @param uids   the runs' uids, or {@code null} without isolation
     * @param report where instances' ends, readiness and failed probes go
     */
    InstanceWatch(InstanceHandles handles, UidAllocator uids, UidLeftovers leftovers, EpochFence fence, RunLocks runLocks,
                  ScheduledExecutorService timers, ExecutorService workers, Clock clock, Consumer<InstanceReport> report) {
        this.leftovers = leftovers;
        this.handles = handles;
        this.uids = uids;
        this.fence = fence;
        this.runLocks = runLocks;
        this.workers = workers;
        this.clock = clock;
        this.report = report;
        this.exits = new ExitPoller(timers, workers);
        this.prober = new StartupProber(timers, workers, clock, report, this::whileWatched);
        this.stopper = new Stopper(timers, workers, clock, id -> !closed && watched.containsKey(id));
    }

    boolean isWatched(InstanceId id) {
        return watched.containsKey(id);
    }

    boolean watchesAnyOf(RunId run) {
        return watched.keySet().stream().anyMatch(id -> id.runId().equals(run));
    }

    /** The directories of the instances watched now. */
    List<InstanceDirectory> directories() {
        return List.copyOf(watched.values());
    }

    /**
     * Watches an instance's supervisor (once per instance) and reports when the instance ends.
     *
     * @param supervisorEnded completes when the launch helper saw the supervisor end; {@code null}: follow it by pid
     */
    void watch(InstanceId id, Map<String, String> handle, InstanceDirectory dir, CompletableFuture<Void> supervisorEnded) {
        if (closed || watched.putIfAbsent(id, dir) != null) {
            return;
        }
        CompletableFuture<?> ended;
        Supplier<CompletableFuture<Void>> byPid = () -> exits.onExit(Long.parseLong(handle.get("supervisorPid")),
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

    /** Probes a watched instance until it is ready, failed its probe, or is gone; kept in its directory for a restart. */
    void probe(InstanceId id, InstanceDirectory dir, StartupProber.Probe probe) throws IOException {
        StartupProber.save(dir, probe);
        prober.start(id, dir, probe, probe.initialDelaySeconds());
    }

    /** After a restart: an instance that was ready is reported ready again; one that was being probed is probed again. */
    void resumeProbe(InstanceId id, InstanceDirectory dir) {
        StartupProber.Probe probe = StartupProber.load(dir);
        if (probe == null) {
            return;
        }
        if (dir.ready()) {
            report.accept(new InstanceReport.Ready(id, clock.instant()));
        } else {
            prober.start(id, dir, probe, 0);
        }
    }

    /** Stops a watched instance ({@link Stopper}); once it is not watched any more, it is gone. */
    void stop(InstanceId id, InstanceProcesses processes, InstanceDirectory dir, Duration gracePeriod) {
        stopper.stop(id, processes, dir, gracePeriod);
    }

    /**
     * An instance whose directory cannot be found cannot record how it ends: it is reported lost (its run then restarts
     * or fails, as for any lost instance), after whatever still runs of it is killed, on a worker thread, so that it
     * does not run on beside its replacement. Its processes are known by pid, start time and boot, never by directory.
     */
    void lose(InstanceId id, Map<String, String> handle, String reason) {
        LOG.warn("instance {} is lost: {}", id, reason);
        workers.execute(() -> {
            try {
                if (handles.sameBoot(handle)) {
                    handles.processes(handle).killUntilGone();
                    CgroupEnd.usageAndRemove(id, handles.cgroupOf(handle));
                }
            } catch (RuntimeException e) {
                LOG.warn("cannot kill what is left of lost instance {}: {}", id, e.toString());
            }
            report.accept(new InstanceReport.Lost(id, reason, clock.instant()));
        });
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
            handles.processes(handle).killUntilGone(); // whatever the main process left behind goes with it
        }
        CgroupUsage usage = handles.sameBoot(handle) ? CgroupEnd.usageAndRemove(id, handles.cgroupOf(handle)) : CgroupUsage.UNKNOWN;
        endWatching(id, handles.sameBoot(handle));
        removeSecrets(id, dir);
        if (exitCode == null) {
            report.accept(new InstanceReport.Lost(id, "the instance's supervisor ended without recording an exit code", clock.instant()));
        } else {
            // What the kernel counted goes with every end (null where nothing was: no cgroup, or another boot's).
            InstanceUsage measured = InstanceUsage.of(usage.memoryPeakBytes(), usage.cpuNanos());
            EndCause cause = usage.oomKilled() && exitCode != 0 ? EndCause.OOMKilled : null;
            report.accept(new InstanceReport.Exited(id, exitCode, dir.terminationRequested(), cause, null, measured, clock.instant()));
        }
    }

    /** An instance's secrets (and its environment, which may hold some) stay on disk while it runs, no longer. */
    static void removeSecrets(InstanceId id, InstanceDirectory dir) {
        try {
            dir.removeSecrets();
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
        ReentrantLock lock = runLocks.of(id.runId());
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
        leftovers.removeFromMemory(uid); // nothing of the run runs: its files in a tmpfs would hold memory past every limit
    }

    /** Runs {@code start} under the run's lock if the instance is still watched; {@code null} if it is not. */
    private <T> T whileWatched(InstanceId id, Supplier<T> start) {
        ReentrantLock lock = runLocks.of(id.runId());
        lock.lock();
        try {
            return !closed && watched.containsKey(id) ? start.get() : null;
        } finally {
            lock.unlock();
        }
    }

    /** Watches nothing from now on: the executor is closing. */
    void close() {
        closed = true;
    }
}
