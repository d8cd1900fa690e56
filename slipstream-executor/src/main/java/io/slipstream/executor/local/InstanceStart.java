package io.slipstream.executor.local;

import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.files.InstanceDirectory;
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

    /** The instance's supervisor runs; {@code probe} is its startup probe, to be started once it is watched. */
    record Started(Map<String, String> handle, CompletableFuture<Void> supervisorEnded, StartupProber.Probe probe) {
    }

    /**
     * @param uids         the runs' uids, or {@code null} without isolation
     * @param launchHelper forks the supervisors of the launcher binary; {@code null} with the shell chain
     */
    InstanceStart(Path root, List<String> inheritedEnv, Path toolsDir, int maxProcessesPerRun, UidAllocator uids, SharedStorage storage,
                  Containers containers, SupervisorProgram program, LaunchHelper launchHelper, InstanceHandles handles) {
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
            List<String> argv = Supervisor.argv(program, dir.path(), workingDir, uid, gid, maxProcessesPerRun, network, sandboxArguments,
                    spec.command());
            CompletableFuture<Void> supervisorEnded = Supervisor.start(launchHelper, argv, dir);
            if (dir.pids() == null) {
                throw new IOException("the supervisor exited before starting the command: " + dir.supervisorOutput());
            }
            Map<String, String> handle = handles.read(dir).orElseThrow();
            StartupProber.Probe probe = null;
            if (spec.probe() != null) {
                // It runs in the instance's environment, from the same file.
                probe = new StartupProber.Probe(spec.probe().command(), spec.probe().periodSeconds(), spec.probe().failureThreshold(),
                        spec.probe().initialDelaySeconds(), workingDir.toString(), uid, gid, uid == null ? null : maxProcessesPerRun,
                        network == null ? null : network.toString(), sandboxArguments == null ? null : sandboxArguments.toString());
            }
            return new Started(handle, supervisorEnded, probe);
        } catch (IOException | RuntimeException e) {
            InstanceWatch.removeSecrets(spec.id(), dir);
            throw e;
        }
    }
}
