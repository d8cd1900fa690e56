package io.slipstream.executor.local.cgroup;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * cgroup v1: an instance's cgroup is a directory of the same name in the hierarchy of each controller used (memory,
 * cpu, cpuacct, pids, freezer, and devices and cpuset for an instance they hold; two controllers mounted together share
 * one). Killing freezes the instance first, so that nothing forks while the signals go out.
 */
final class V1Cgroups implements Cgroups {
    private final Map<String, Path> hierarchies;
    private final String parent;
    private final Enforcement enforcement;

    /** @param hierarchies controller to its hierarchy's mount point, for those this host mounts */
    V1Cgroups(Map<String, Path> hierarchies, String parent) {
        Map<String, Path> used = new LinkedHashMap<>();
        hierarchies.forEach((controller, mount) -> {
            if (CgroupMounts.V1_CONTROLLERS.contains(controller)) {
                used.put(controller, mount);
            }
        });
        this.hierarchies = Map.copyOf(used);
        this.parent = parent;
        Set<Limit> enforced = Cgroups.limitsOf(used.keySet(), false);
        this.enforcement = new Enforcement("v1", enforced, enforced.size() == Limit.values().length ? null
                : "this host does not mount the v1 controllers for them (" + String.join(", ", missing(used.keySet())) + ")");
    }

    private static List<String> missing(Set<String> mounted) {
        List<String> missing = new ArrayList<>();
        for (String controller : List.of("memory", "cpu", "cpuset", "pids", "devices", "freezer")) {
            if (!mounted.contains(controller)) {
                missing.add(controller);
            }
        }
        return missing;
    }

    @Override
    public Enforcement enforcement() {
        return enforcement;
    }

    @Override
    public DeviceFence deviceFence() {
        return enforcement.enforces(Limit.devices) ? DeviceFence.cgroup : DeviceFence.none;
    }

    @Override
    public InstanceCgroup create(String name, CgroupLimits limits) throws IOException {
        Instance cgroup = new Instance(pathOf(name));
        Path pidsParent = hierarchies.get("pids") == null ? null : hierarchies.get("pids").resolve(parent);
        boolean newParent = pidsParent != null && !CgroupFiles.exists(pidsParent);
        try {
            for (Path dir : cgroup.directories(limits)) {
                CgroupFiles.makeCgroup(dir);
            }
            Path memory = cgroup.of("memory");
            if (memory != null) {
                CgroupFiles.write(memory.resolve("memory.limit_in_bytes"), limits.v1Memory());
                Path withSwap = memory.resolve("memory.memsw.limit_in_bytes");
                if (limits.memoryBytes() > 0 && CgroupFiles.exists(withSwap)) {
                    CgroupFiles.write(withSwap, limits.v1Memory()); // no swapping past the limit either
                }
            }
            Path cpu = cgroup.of("cpu");
            if (cpu != null) {
                CgroupFiles.write(cpu.resolve("cpu.cfs_period_us"), Long.toString(CgroupLimits.CPU_PERIOD_MICROS));
                CgroupFiles.write(cpu.resolve("cpu.cfs_quota_us"), limits.v1CpuQuota());
            }
            Path cpuset = cgroup.of("cpuset");
            if (cpuset == null && limits.cores() != null) {
                throw new IOException("this host has no cpuset controller to pin cores " + limits.cores() + " with");
            }
            if (cpuset != null && cgroup.directories(limits).contains(cpuset)) {
                pin(cpuset, limits.cores());
            }
            Path pids = cgroup.of("pids");
            if (newParent) {
                // All instances together keep pids for the server and the host (made with the parent: once per start).
                CgroupFiles.write(pidsParent.resolve("pids.max"), CgroupLimits.parentPidsMax(CgroupFiles.hostTasks()));
            }
            if (pids != null) {
                CgroupFiles.write(pids.resolve("pids.max"), limits.pidsMax());
            }
            Path devices = cgroup.of("devices");
            if (devices == null && !limits.deniedDevices().isEmpty()) {
                throw new IOException("this host has no devices controller to fence " + limits.deniedDevices() + " with");
            }
            for (String device : limits.deniedDevices()) {
                CgroupFiles.write(devices.resolve("devices.deny"), device + " rwm"); // neither opened nor made with mknod
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

    /**
     * A v1 cpuset cgroup holds no process until it has cores and memory nodes, and a new one has neither: the server's
     * parent takes the hierarchy root's (once), the instance its {@code cores} (all of the parent's without a pin, where
     * the hierarchy is shared with a controller the instance needs) and the parent's memory nodes.
     */
    private static void pin(Path dir, CpuList cores) throws IOException {
        Path parentDir = dir.getParent();
        for (String file : List.of("cpuset.cpus", "cpuset.mems")) {
            if (CgroupFiles.read(parentDir.resolve(file)).isBlank()) {
                CgroupFiles.write(parentDir.resolve(file), CgroupFiles.read(parentDir.getParent().resolve(file)).strip());
            }
        }
        CgroupFiles.write(dir.resolve("cpuset.mems"), CgroupFiles.read(parentDir.resolve("cpuset.mems")).strip());
        CgroupFiles.write(dir.resolve("cpuset.cpus"), cores != null ? cores.toString() : CgroupFiles.read(parentDir.resolve("cpuset.cpus")).strip());
    }

    @Override
    public List<Path> parentDirectories() {
        return hierarchies.values().stream().distinct().map(mount -> mount.resolve(parent)).toList();
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

        Instance(String path) {
            this.path = path;
        }

        @Override
        public String name() {
            return path;
        }

        /** Its directory in {@code controller}'s hierarchy, or {@code null} if the host does not mount it. */
        Path of(String controller) {
            Path mount = hierarchies.get(controller);
            return mount == null ? null : mount.resolve(path);
        }

        /** A directory every instance's cgroup has (not devices, made only for an instance it fences), to list its processes. */
        Path listing() {
            for (String controller : List.of("freezer", "memory", "pids", "cpu", "cpuacct")) {
                if (of(controller) != null) {
                    return of(controller);
                }
            }
            return directories().get(0);
        }

        /**
         * Those an instance held to {@code limits} needs: devices only for one it fences, cpuset only for one it pins
         * (a cgroup in each hierarchy costs the kernel work), unless mounted together with another controller.
         */
        List<Path> directories(CgroupLimits limits) {
            Set<Path> dirs = new LinkedHashSet<>();
            hierarchies.keySet().stream().sorted().forEach(controller -> {
                boolean optional = controller.equals("devices") && limits.deniedDevices().isEmpty()
                        || controller.equals("cpuset") && limits.cores() == null;
                if (!optional) {
                    dirs.add(of(controller));
                }
            });
            return List.copyOf(dirs);
        }

        /** One per hierarchy (controllers mounted together share one). */
        List<Path> directories() {
            Set<Path> dirs = new LinkedHashSet<>();
            for (String controller : hierarchies.keySet()) {
                dirs.add(of(controller));
            }
            return List.copyOf(dirs);
        }

        @Override
        public List<Path> procsFiles() {
            return directories().stream().map(dir -> dir.resolve("cgroup.procs")).filter(CgroupFiles::exists).toList();
        }

        @Override
        public int killAll() throws IOException {
            Path freezer = of("freezer");
            Path any = freezer != null ? freezer : listing();
            List<Long> pids = CgroupFiles.processes(any);
            if (pids.isEmpty()) {
                return 0;
            }
            if (freezer == null) {
                Signals.kill(pids);
                return pids.size();
            }
            CgroupFiles.write(freezer.resolve("freezer.state"), "FROZEN");
            try {
                Signals.awaitState(freezer.resolve("freezer.state"), "FROZEN");
                pids = CgroupFiles.processes(freezer); // frozen now: none forks, none is added
                Signals.kill(pids);
            } finally {
                CgroupFiles.write(freezer.resolve("freezer.state"), "THAWED"); // a frozen process dies only once thawed
            }
            return pids.size();
        }

        @Override
        public int signalAll() throws IOException {
            List<Long> pids = CgroupFiles.processes(listing());
            Signals.kill(pids);
            return pids.size();
        }

        @Override
        public CgroupUsage usage() throws IOException {
            Path memory = of("memory");
            Path cpuacct = of("cpuacct");
            long oomKills = memory == null ? -1 : CgroupFiles.keyed(memory.resolve("memory.oom_control"), "oom_kill");
            long peak = memory == null ? -1 : CgroupFiles.number(memory.resolve("memory.max_usage_in_bytes"));
            long cpuNanos = cpuacct == null ? -1 : CgroupFiles.number(cpuacct.resolve("cpuacct.usage"));
            return new CgroupUsage(oomKills, peak, cpuNanos);
        }

        @Override
        public boolean remove() throws IOException {
            boolean all = true;
            for (Path dir : directories()) {
                // devices and cpuset: made only for an instance they hold
                all &= CgroupFiles.removeCgroup(dir) || dir.equals(of("devices")) || dir.equals(of("cpuset"));
                if (!path.startsWith(parent + "/")) {
                    CgroupFiles.removeIfEmpty(dir.getParent());
                }
            }
            return all;
        }

        @Override
        public String toString() {
            return "cgroup v1 " + path;
        }
    }
}
