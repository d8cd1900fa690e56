package io.slipstream.executor.local.cgroup;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * cgroup v2: an instance's cgroup is one directory under the server's parent, whose {@code cgroup.subtree_control}
 * (and the root's) hands it the memory, cpu and pids controllers. {@code memory.oom.group} makes an OOM kill end the
 * whole instance, as on Kubernetes; {@code cgroup.kill} (Linux 5.14) kills everything in it at once.
 */
final class V2Cgroups implements Cgroups {
    private static final List<String> CONTROLLERS = List.of("memory", "cpu", "pids");

    private final Path mount;
    private final String parent;
    private final Set<String> controllers;
    private final Enforcement enforcement;

    /** @param controllers those the hierarchy's root offers ({@code cgroup.controllers}) */
    V2Cgroups(Path mount, String parent, Set<String> controllers) {
        this.mount = mount;
        this.parent = parent;
        this.controllers = Set.copyOf(controllers);
        Set<Limit> enforced = Cgroups.limitsOf(controllers, true);
        List<String> missing = java.util.stream.Stream.of("memory", "cpu", "cpuset", "pids").filter(c -> !controllers.contains(c)).toList();
        this.enforcement = new Enforcement("v2", enforced, missing.isEmpty() ? null
                : "the v2 hierarchy does not offer the " + String.join(", ", missing) + " controller(s) (bound to v1?)");
    }

    @Override
    public Enforcement enforcement() {
        return enforcement;
    }

    /** v2's device controller is an eBPF program: a mount namespace fences GPUs instead. */
    @Override
    public DeviceFence deviceFence() {
        return DeviceFence.mountNamespace;
    }

    @Override
    public InstanceCgroup create(String name, CgroupLimits limits) throws IOException {
        if (!limits.deniedDevices().isEmpty()) {
            throw new IOException("cgroup v2 has no devices file to deny " + limits.deniedDevices() + " in (its instances are fenced by a mount namespace)");
        }
        Path parentDir = mount.resolve(parent);
        boolean newParent = !CgroupFiles.exists(parentDir);
        CgroupFiles.makeCgroup(parentDir);
        if (limits.cores() != null && !controllers.contains("cpuset")) {
            throw new IOException("the v2 hierarchy does not offer the cpuset controller to pin cores " + limits.cores() + " with");
        }
        for (Path level : List.of(mount, parentDir)) {
            for (String controller : CONTROLLERS) {
                if (controllers.contains(controller)) {
                    CgroupFiles.write(level.resolve("cgroup.subtree_control"), "+" + controller);
                }
            }
            if (limits.cores() != null) {
                CgroupFiles.write(level.resolve("cgroup.subtree_control"), "+cpuset"); // once an instance is pinned
            }
        }
        if (newParent && controllers.contains("pids")) {
            // All instances together keep pids for the server and the host (made with the parent: once per start).
            CgroupFiles.write(parentDir.resolve("pids.max"), CgroupLimits.parentPidsMax(CgroupFiles.hostTasks()));
        }
        Instance cgroup = new Instance(pathOf(name));
        CgroupFiles.makeCgroup(cgroup.dir);
        try {
            if (controllers.contains("memory")) {
                CgroupFiles.write(cgroup.dir.resolve("memory.max"), limits.v2Memory());
                if (limits.memoryBytes() > 0 && CgroupFiles.exists(cgroup.dir.resolve("memory.swap.max"))) {
                    CgroupFiles.write(cgroup.dir.resolve("memory.swap.max"), "0"); // no swapping past the limit
                }
                if (CgroupFiles.exists(cgroup.dir.resolve("memory.oom.group"))) {
                    CgroupFiles.write(cgroup.dir.resolve("memory.oom.group"), "1");
                }
            }
            if (controllers.contains("cpu")) {
                CgroupFiles.write(cgroup.dir.resolve("cpu.max"), limits.v2Cpu());
            }
            if (controllers.contains("pids")) {
                CgroupFiles.write(cgroup.dir.resolve("pids.max"), limits.pidsMax());
            }
            if (limits.cores() != null) {
                CgroupFiles.write(cgroup.dir.resolve("cpuset.cpus"), limits.cores().toString());
            }
            return cgroup;
        } catch (IOException | RuntimeException e) {
            try {
                cgroup.remove();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    @Override
    public List<Path> parentDirectories() {
        return List.of(mount.resolve(parent));
    }

    @Override
    public InstanceCgroup existing(String path) {
        return new Instance(path);
    }

    @Override
    public String pathOf(String name) {
        return parent + "/" + name;
    }

    private final class Instance implements InstanceCgroup {
        private final String path;
        private final Path dir;

        Instance(String path) {
            this.path = path;
            this.dir = mount.resolve(path);
        }

        @Override
        public String name() {
            return path;
        }

        @Override
        public List<Path> procsFiles() {
            return List.of(dir.resolve("cgroup.procs"));
        }

        @Override
        public int killAll() throws IOException {
            List<Long> pids = CgroupFiles.processes(dir);
            if (pids.isEmpty()) {
                return 0;
            }
            Path kill = dir.resolve("cgroup.kill");
            if (CgroupFiles.exists(kill)) {
                CgroupFiles.write(kill, "1");
                return pids.size();
            }
            CgroupFiles.write(dir.resolve("cgroup.freeze"), "1");
            try {
                Signals.awaitState(dir.resolve("cgroup.events"), "frozen 1");
                pids = CgroupFiles.processes(dir);
                Signals.kill(pids);
            } finally {
                CgroupFiles.write(dir.resolve("cgroup.freeze"), "0");
            }
            return pids.size();
        }

        @Override
        public int signalAll() throws IOException {
            return killAll(); // cgroup.kill is atomic, and as cheap
        }

        @Override
        public CgroupUsage usage() throws IOException {
            long oomKills = CgroupFiles.keyed(dir.resolve("memory.events"), "oom_kill");
            long peak = CgroupFiles.number(dir.resolve("memory.peak"));
            long micros = CgroupFiles.keyed(dir.resolve("cpu.stat"), "usage_usec");
            return new CgroupUsage(oomKills, peak, micros < 0 ? -1 : micros * 1000);
        }

        @Override
        public boolean remove() throws IOException {
            boolean removed = CgroupFiles.removeCgroup(dir);
            if (!path.startsWith(parent + "/")) {
                CgroupFiles.removeIfEmpty(dir.getParent());
            }
            return removed;
        }

        @Override
        public String toString() {
            return "cgroup v2 " + path;
        }
    }
}
