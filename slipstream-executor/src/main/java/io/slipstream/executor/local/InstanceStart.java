package io.slipstream.executor.local;

import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.cgroup.CgroupLimits;
import io.slipstream.executor.local.cgroup.Cgroups;
import io.slipstream.executor.local.cgroup.CpuList;
import io.slipstream.executor.local.cgroup.InstanceCgroup;
import io.slipstream.executor.local.cgroup.Limit;
import io.slipstream.executor.local.files.InstanceDirectory;
import io.slipstream.executor.local.process.DeviceCover;
import io.slipstream.executor.local.process.LaunchHelper;
import io.slipstream.executor.local.process.StartupProber;
import io.slipstream.executor.local.process.Supervisor;
import io.slipstream.executor.local.process.SupervisorProgram;
import io.slipstream.executor.local.storage.SharedStorage;
import io.slipstream.executor.local.uid.UidAllocator;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Starts one instance: the directories above and in its own (given to the run's uid last), the records of its restart
 * and of the epoch it was launched at, its run's storage, then its secret files and its environment (or, with an
 * image, its sandbox's arguments), and its supervisor, waited for until it said that it started the command. The
 * secrets and the environment are written last, and taken away again if the instance does not start.
 */
final class InstanceStart {
    /**
     * The OOM killer's bias for instances (-1000 never to 1000 first), set by root so that their uids cannot lower it:
     * under memory pressure the kernel takes a borrower first, then a guaranteed instance, and the server last (it sets
     * its own to {@link #SERVER_OOM_SCORE_ADJ}; its supervisors inherit it).
     */
    static final int GUARANTEED_OOM_SCORE_ADJ = 500;
    static final int BORROWED_OOM_SCORE_ADJ = 1000;
    static final int SERVER_OOM_SCORE_ADJ = -900;

    private final Path root;
    private final List<String> inheritedEnv;
    private final Path toolsDir;
    private final int maxProcessesPerRun;
    private final UidAllocator uids;
    private final SharedStorage storage;
    private final Containers containers;
    private final SupervisorProgram program;
    private final LaunchHelper launchHelper;
    private final InstanceHandles handles;
    private final Cgroups cgroups;
    private final GpuFence gpuFence;

    /** The instance's supervisor runs; {@code probe} is its startup probe, to be started once it is watched. */
    record Started(Map<String, String> handle, CompletableFuture<Void> supervisorEnded, StartupProber.Probe probe) {
    }

    /**
     * @param uids         the runs' uids, or {@code null} without isolation
     * @param launchHelper forks the supervisors of the launcher binary; {@code null} with the shell chain
     */
    InstanceStart(Path root, List<String> inheritedEnv, Path toolsDir, int maxProcessesPerRun, UidAllocator uids, SharedStorage storage,
                  Containers containers, SupervisorProgram program, LaunchHelper launchHelper, InstanceHandles handles, Cgroups cgroups,
                  GpuFence gpuFence) {
        this.root = root;
        this.inheritedEnv = inheritedEnv;
        this.toolsDir = toolsDir;
        this.maxProcessesPerRun = maxProcessesPerRun;
        this.uids = uids;
        this.storage = storage;
        this.containers = containers;
        this.program = program;
        this.launchHelper = launchHelper;
        this.handles = handles;
        this.cgroups = cgroups;
        this.gpuFence = gpuFence;
    }

    /** @param epoch the leader epoch it is launched at (the caller holds the fence) */
    Started start(LaunchSpec spec, NodeInfo node, InstanceDirectory dir, long epoch) {
        try {
            Integer uid = uids == null ? null : uids.uidFor(spec.id().runId());
            dir.createParents(root, uid);
            Path workingDir = dir.create(uid, spec.workingDir());
            if (spec.restart() > 0) {
                dir.recordRestart(spec.restart()); // before the pid file: every handle read of this launch names it
            }
            dir.recordEpoch("launch", epoch);
            SharedStorage.Prepared shared = spec.metadata() == null ? null : storage.prepare(spec.metadata());
            Integer gid = shared == null ? null : shared.gid();
            return startSupervisor(spec, node, dir, uid, gid, workingDir, shared, containers.networkOf(spec));
        } catch (IOException e) {
            throw new ExecutorException("cannot start instance " + spec.id() + ": " + e.getMessage(), e);
        }
    }

    private Started startSupervisor(LaunchSpec spec, NodeInfo node, InstanceDirectory dir, Integer uid, Integer gid, Path workingDir,
                                    SharedStorage.Prepared shared, Path network) throws IOException {
        try {
            Path secretsDir = spec.secretFiles().isEmpty() ? null : dir.writeSecrets(spec.secretFiles(), uid);
            if (!spec.identity().isEmpty()) {
                dir.writeIdentity(spec.identity(), uid);
            }
            Path sandboxArguments = null;
            if (spec.image() != null) {
                sandboxArguments = containers.prepareSandbox(spec, node, dir, uid, gid, workingDir, shared, secretsDir, network);
            } else {
                Map<String, String> environment = Containers.onNetwork(InstanceEnvironment.of(spec, node, dir, uid, shared, secretsDir, inheritedEnv, toolsDir),
                        network);
                if (uid != null && !spec.env().containsKey("PATH") && !spec.command().isEmpty()) {
                    // Only the server's own PATH is judged: a job's PATH is its own, and looking through it as root would
                    // tell a tenant what exists in directories it may not read.
                    Optional<String> unreachable = CommandReach.problem(spec.command().get(0), environment.get("PATH"), uid);
                    if (unreachable.isPresent()) {
                        throw new ExecutorException("cannot start instance " + spec.id() + ": " + unreachable.get());
                    }
                }
                dir.writeEnvironment(environment);
            }
            DeviceCover cover = gpuFence.cover(spec, node, uid);
            InstanceCgroup cgroup = createCgroup(spec, node, dir);
            CompletableFuture<Void> started;
            try {
                List<String> argv = Supervisor.argv(program, dir.path(), workingDir, uid, gid, maxProcessesPerRun, network, sandboxArguments,
                        spec.borrowed() ? BORROWED_OOM_SCORE_ADJ : GUARANTEED_OOM_SCORE_ADJ, cgroup == null ? List.of() : cgroup.procsFiles(),
                        cover, spec.command());
                started = Supervisor.start(launchHelper, argv, dir);
                if (dir.pids() == null) {
                    throw new IOException("the supervisor exited before starting the command: " + dir.supervisorOutput());
                }
            } catch (IOException | RuntimeException e) {
                removeCgroup(cgroup);
                throw e;
            }
            Map<String, String> handle = handles.read(dir).orElseThrow();
            StartupProber.Probe probe = null;
            if (spec.probe() != null) {
                // It runs in the instance's environment, from the same file.
                probe = new StartupProber.Probe(spec.probe().command(), spec.probe().periodSeconds(), spec.probe().failureThreshold(),
                        spec.probe().initialDelaySeconds(), workingDir.toString(), uid, gid, uid == null ? null : maxProcessesPerRun,
                        network == null ? null : network.toString(), sandboxArguments == null ? null : sandboxArguments.toString(),
                        spec.borrowed() ? BORROWED_OOM_SCORE_ADJ : GUARANTEED_OOM_SCORE_ADJ,
                        cgroup == null ? List.of() : cgroup.procsFiles().stream().map(Path::toString).toList(), cover.argument());
            }
            return new Started(handle, started, probe);
        } catch (IOException | RuntimeException e) {
            InstanceWatch.removeSecrets(spec.id(), dir);
            throw e;
        }
    }

    /**
     * The instance's cgroup, made with its limits before anything of it runs; {@code null} where this server makes none.
     * A cgroup that cannot be made fails the launch: on a server that enforces, no instance runs unconfined.
     */
    private InstanceCgroup createCgroup(LaunchSpec spec, NodeInfo node, InstanceDirectory dir) throws IOException {
        io.slipstream.api.spec.Resources resources = spec.resources();
        CgroupLimits limits = new CgroupLimits(spec.memoryLimit(), resources == null ? 0 : resources.milliCpu(),
                maxProcessesPerRun, gpuFence.deniedDevices(spec, node),
                node.cpuset() != null && cgroups.enforcement().enforces(Limit.cpuset) ? CpuList.parse(node.cpuset()) : null);
        try {
            return cgroups.create(handles.cgroupName(dir, spec.restart()), limits);
        } catch (IOException e) {
            throw new IOException("cannot make its cgroup (" + limits + "): " + e.getMessage(), e);
        }
    }

    /** A launch that failed after its cgroup was made: whatever it started goes, and the cgroup with it. */
    private static void removeCgroup(InstanceCgroup cgroup) {
        if (cgroup == null) {
            return;
        }
        try {
            for (int tries = 0; cgroup.killAll() > 0 && tries < 500; tries++) {
                Thread.sleep(10); // SIGKILLed processes take a moment to leave
            }
            cgroup.remove();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            org.slf4j.LoggerFactory.getLogger(InstanceStart.class).warn("cannot remove {}: {}", cgroup, e.toString());
        }
    }
}
