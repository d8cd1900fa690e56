package io.slipstream.executor.local;

import io.slipstream.api.run.InstanceId;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.local.cgroup.Cgroups;
import io.slipstream.executor.local.cgroup.InstanceCgroup;
import io.slipstream.executor.local.files.InstanceDirectory;
import io.slipstream.executor.local.process.InstanceProcesses;
import io.slipstream.executor.local.process.ProcFs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * An instance's handle, as the store keeps it: its directory (relative to the executor's root, so that the data
 * directory can be moved; see {@link InstanceLocation}), the pids and start times of its supervisor and main process,
 * and the boot they belong to (a pid recorded before a reboot means nothing after it). A moved directory never makes a
 * pid trusted: processes are known by pid, start time and boot alone.
 */
final class InstanceHandles {
    private final Path root;
    private final boolean pidNamespaces;
    private final Cgroups cgroups;
    private final String bootId = ProcFs.bootId();

    /**
     * @param pidNamespaces whether instances are launched in PID namespaces of their own (with a uid per run)
     * @param cgroups       where instances get cgroups of their own
     */
    InstanceHandles(Path root, boolean pidNamespaces, Cgroups cgroups) {
        this.root = root;
        this.pidNamespaces = pidNamespaces;
        this.cgroups = cgroups;
    }

    /**
     * The cgroup of the instance in {@code dir}, launched as its {@code restart}th restart in place: named after its
     * directory and restart ({@code run.attempt.rank[.rN]}), so that it is found again from the directory alone.
     */
    String cgroupName(InstanceDirectory dir, int restart) {
        return root.relativize(dir.path()).toString().replace('/', '.') + (restart > 0 ? ".r" + restart : "");
    }

    /** The name of the cgroup of the first launch of the instance whose cgroup (of any restart) is {@code cgroupName}. */
    static String firstLaunchCgroupName(String cgroupName) {
        return cgroupName.replaceFirst("\\.r[0-9]+$", "");
    }

    /** Where an instance's id puts its directory: {@code <root>/<run>/<attempt>/<rank>}. */
    InstanceDirectory directoryOf(InstanceId id) {
        return new InstanceDirectory(root.resolve(id.runId().value()).resolve(Integer.toString(id.attempt()))
                .resolve(Integer.toString(id.rank())));
    }

    /** Where the directory a stored handle names is now (see {@link InstanceLocation}). */
    InstanceLocation locate(InstanceId id, Map<String, String> handle) {
        return InstanceLocation.of(root, handle.get("dir"), directoryOf(id).path(),
                path -> Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS));
    }

    /** The directory a stored handle names, refused (with the reason) if it cannot be found. */
    InstanceDirectory directoryOf(InstanceId id, Map<String, String> handle) {
        InstanceLocation location = locate(id, handle);
        if (location instanceof InstanceLocation.Found found) {
            return new InstanceDirectory(found.dir());
        }
        throw new ExecutorException("instance " + id + ": " + ((InstanceLocation.Missing) location).reason());
    }

    /** The handle with its directory named relative to the root, as handles are written now. */
    Map<String, String> relative(Map<String, String> handle, InstanceDirectory dir) {
        Map<String, String> relative = new LinkedHashMap<>(handle);
        relative.put("dir", root.relativize(dir.path()).toString());
        return relative;
    }

    /**
     * The instance's processes: its PID namespace (whose init is the handle's pid, "init", or that pid's child, "true"),
     * or (launched without one) its process tree.
     */
    InstanceProcesses processes(Map<String, String> handle) {
        long pid = Long.parseLong(handle.get("pid"));
        long start = Long.parseLong(handle.get("pidStart"));
        String namespace = handle.getOrDefault("pidNamespace", "");
        InstanceProcesses found = namespace.equals("true") || namespace.equals("init") ? InstanceProcesses.inNamespace(pid, start, namespace.equals("init"))
                : InstanceProcesses.tree(pid, start, Long.parseLong(handle.getOrDefault("supervisorPid", "-1")));
        InstanceCgroup cgroup = cgroupOf(handle);
        return cgroup == null ? found : InstanceProcesses.inCgroup(cgroup, found);
    }

    /** The instance's cgroup, or {@code null} if it was launched without one (or this server makes none now). */
    InstanceCgroup cgroupOf(Map<String, String> handle) {
        String path = handle.get("cgroup");
        // Only a path this class makes: never one that leads out of a server's parent.
        return path == null || !path.matches("slipstream-[0-9a-f]{12}/[a-z0-9][a-z0-9.-]{0,200}") ? null : cgroups.existing(path);
    }

    boolean sameBoot(Map<String, String> handle) {
        return bootId.equals(handle.get("bootId"));
    }

    boolean supervisorAlive(Map<String, String> handle) {
        return sameBoot(handle)
                && ProcFs.isAlive(Long.parseLong(handle.get("supervisorPid")), Long.parseLong(handle.get("supervisorStart")));
    }

    /**
     * The handle of an instance launched before, from the pid file its supervisor wrote (so that it can be derived
     * even if the control plane crashed right after the launch); empty if it was never launched.
     */
    Optional<Map<String, String>> read(InstanceDirectory dir) throws IOException {
        InstanceDirectory.Pids pids = dir.pids();
        if (pids == null) {
            return Optional.empty();
        }
        Map<String, String> handle = new LinkedHashMap<>();
        handle.put("dir", root.relativize(dir.path()).toString());
        handle.put("supervisorPid", Long.toString(pids.supervisor()));
        handle.put("supervisorStart", Long.toString(ProcFs.stat(pids.supervisor()).map(ProcFs.Stat::startTime).orElse(-1L)));
        handle.put("pid", Long.toString(pids.leader()));
        handle.put("pidStart", Long.toString(ProcFs.stat(pids.leader()).map(ProcFs.Stat::startTime).orElse(-1L)));
        handle.put("bootId", bootId);
        Long epoch = dir.epochOf("launch");
        if (epoch != null && epoch > 0) {
            handle.put("epoch", Long.toString(epoch)); // the leader epoch it was launched at
        }
        if (pidNamespaces) {
            handle.put("pidNamespace", pids.leaderIsInit() ? "init" : "true");
        }
        int restart = dir.restart();
        String cgroup = cgroups.pathOf(cgroupName(dir, restart));
        if (cgroup != null) {
            handle.put("cgroup", cgroup); // with the parent it was made under: a moved data directory does not move it
        }
        if (restart > 0) {
            handle.put(io.slipstream.executor.Executor.RESTART_KEY, Integer.toString(restart));
        }
        return Optional.of(handle);
    }
}
