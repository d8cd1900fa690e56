package io.slipstream.executor.local;

import io.slipstream.executor.ExecutorException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * An instance's handle, as the store keeps it: its directory, the pids and start times of its supervisor and main
 * process, and the boot they belong to (a pid recorded before a reboot means nothing after it).
 */
final class InstanceHandles {
    private final Path root;
    private final boolean pidNamespaces;
    private final String bootId = ProcFs.bootId();

    /** @param pidNamespaces whether instances are launched in PID namespaces of their own (with a uid per run) */
    InstanceHandles(Path root, boolean pidNamespaces) {
        this.root = root;
        this.pidNamespaces = pidNamespaces;
    }

    /** The directory a stored handle names, refused if it is not under this executor's root. */
    InstanceDirectory directoryOf(Map<String, String> handle) {
        Path dir = Path.of(handle.get("dir")).toAbsolutePath().normalize();
        if (!dir.startsWith(root)) {
            throw new ExecutorException("instance directory " + dir + " is outside " + root);
        }
        return new InstanceDirectory(dir);
    }

    /** The instance's processes: its PID namespace, or (launched without one) its process tree. */
    static InstanceProcesses processes(Map<String, String> handle) {
        long pid = Long.parseLong(handle.get("pid"));
        long start = Long.parseLong(handle.get("pidStart"));
        return "true".equals(handle.get("pidNamespace")) ? new PidNamespace(pid, start) : new ProcessTree(pid, start);
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
        if (pidNamespaces) {
            handle.put("pidNamespace", "true");
        }
        return Optional.of(handle);
    }
}
