package io.slipstream.executor.local.cgroup;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * This host's cgroups as the executor uses them: one kind per server, chosen at start ({@link #detect}), that makes and
 * finds instances' cgroups under the server's own parent.
 */
public sealed interface Cgroups permits V1Cgroups, V2Cgroups, Cgroups.Unenforced {
    /** {@code instances.cgroups}: enforce where the host allows ({@code auto}), refuse to start otherwise ({@code on}), never. */
    enum Mode { auto, on, off }

    Enforcement enforcement();

    /** How the GPUs that are not an instance's own are kept from it. */
    enum DeviceFence {
        /** v1's devices controller denies their device numbers ({@link CgroupLimits#deniedDevices}). */
        cgroup,
        /**
         * v2 has no devices file (its controller is an eBPF program): the instance runs in a mount namespace of its own
         * where each of their nodes is covered by a file its uid cannot open ({@code process.DeviceCover}).
         */
        mountNamespace,
        /** Not kept from it. */
        none
    }

    /** How this host's instances are fenced from the GPUs that are not theirs. */
    default DeviceFence deviceFence() {
        return DeviceFence.none;
    }

    /**
     * Makes the cgroup {@code name} with {@code limits}; on failure nothing of it is left and the instance must not
     * start. {@code null} without cgroups.
     */
    InstanceCgroup create(String name, CgroupLimits limits) throws IOException;

    /**
     * The cgroup at {@code path} ({@code <parent>/<name>}, as {@link #pathOf} gave it: the parent of the server that made
     * it, which a moved data directory does not change), whether or not it still exists.
     */
    InstanceCgroup existing(String path);

    /** Where this server makes the cgroup {@code name}: {@code <parent>/<name>}; {@code null} without cgroups. */
    String pathOf(String name);

    /** This server's parent cgroup in each hierarchy it uses; none without cgroups. */
    default List<Path> parentDirectories() {
        return List.of();
    }

    /**
     * Removes the cgroups under this server's parent that nothing runs in any more but those {@code kept} names (of
     * instances running), and the parent once empty (the server is closing). One with processes cannot be removed, and
     * stays for the next start to find.
     */
    default void tidy(java.util.function.Predicate<String> kept) {
        CgroupFiles.removeEmpty(parentDirectories(), kept);
    }

    /** Removes this server's parent cgroup if nothing is under it (after the start's try-out). */
    default void removeParentIfEmpty() {
        parentDirectories().forEach(CgroupFiles::removeIfEmpty);
    }

    /** No cgroups: {@code instances.cgroups: off}. */
    static Cgroups off() {
        return new Unenforced(Enforcement.none("instances.cgroups is off"));
    }

    /** Without cgroups: nothing is made, nothing enforced. */
    record Unenforced(Enforcement enforcement) implements Cgroups {
        @Override
        public InstanceCgroup create(String name, CgroupLimits limits) {
            return null;
        }

        @Override
        public InstanceCgroup existing(String path) {
            return null;
        }

        @Override
        public String pathOf(String name) {
            return null;
        }
    }

    /**
     * The host's cgroups, for a server whose instances live under {@code instancesRoot}: v2 where its hierarchy has the
     * memory controller (the host's primary one), else v1 where controllers are mounted, else v2 for killing alone.
     *
     * @param root whether the server runs as root (only root may make cgroups)
     * @throws IllegalStateException with {@code on}, when nothing can be enforced
     */
    static Cgroups detect(Mode mode, boolean root, Path instancesRoot) {
        CgroupMounts mounts;
        Set<String> v2Controllers = Set.of();
        try {
            String mountinfo = CgroupFiles.read(Path.of("/proc/self/mountinfo"));
            mounts = CgroupMounts.parse(mountinfo == null ? "" : mountinfo);
            if (mounts.unified() != null) {
                String controllers = CgroupFiles.read(mounts.unified().resolve("cgroup.controllers"));
                v2Controllers = controllers == null || controllers.isBlank() ? Set.of() : Set.of(controllers.trim().split("\\s+"));
            }
        } catch (IOException | RuntimeException e) {
            mounts = new CgroupMounts(Map.of(), null);
        }
        Cgroups chosen = choose(mode, root, mounts, v2Controllers, parentName(instancesRoot));
        String problem = chosen instanceof Unenforced ? null : tryOut(chosen);
        if (problem == null) {
            return chosen;
        }
        if (mode == Mode.on) {
            throw new IllegalStateException("instances.cgroups is on, but " + problem);
        }
        return new Unenforced(Enforcement.none(problem));
    }

    /** Makes and removes a cgroup, as a launch will: what went wrong, or {@code null} (a read-only cgroup mount, say). */
    private static String tryOut(Cgroups cgroups) {
        try {
            InstanceCgroup probe = cgroups.create("start-check", CgroupLimits.NONE);
            probe.remove();
            cgroups.removeParentIfEmpty(); // made again by the first launch; a server that launches nothing leaves none
            return null;
        } catch (IOException | RuntimeException e) {
            return "cannot make a cgroup: " + e.getMessage();
        }
    }

    /** Pure: which cgroups, from what the host has. */
    static Cgroups choose(Mode mode, boolean root, CgroupMounts mounts, Set<String> v2Controllers, String parent) {
        Cgroups chosen;
        if (mode == Mode.off) {
            chosen = new Unenforced(Enforcement.none("instances.cgroups is off"));
        } else if (!root) {
            chosen = new Unenforced(Enforcement.none("the server is not root, and only root may make cgroups"));
        } else if (mounts.unified() != null && v2Controllers.contains("memory")) {
            chosen = new V2Cgroups(mounts.unified(), parent, v2Controllers);
        } else if (mounts.v1().keySet().stream().anyMatch(c -> Set.of("memory", "cpu", "pids", "freezer").contains(c))) {
            Map<String, Path> used = new LinkedHashMap<>(mounts.v1());
            chosen = new V1Cgroups(used, parent);
        } else if (mounts.unified() != null) {
            chosen = new V2Cgroups(mounts.unified(), parent, v2Controllers);
        } else {
            chosen = new Unenforced(Enforcement.none("this host mounts no cgroup file system"));
        }
        if (mode == Mode.on && chosen.enforcement().enforced().isEmpty()) {
            throw new IllegalStateException("instances.cgroups is on, but " + chosen.enforcement().why());
        }
        return chosen;
    }

    /** The server's parent cgroup: {@code slipstream-} and a digest of its instances' root, the same after a restart. */
    static String parentName(Path instancesRoot) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest(instancesRoot.toAbsolutePath().normalize().toString().getBytes(StandardCharsets.UTF_8));
            return "slipstream-" + HexFormat.of().formatHex(digest, 0, 6);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** What a set of controllers enforces ({@code kill} needs only the cgroup itself on v2, the freezer on v1). */
    static Set<Limit> limitsOf(Set<String> controllers, boolean v2) {
        EnumSet<Limit> limits = EnumSet.noneOf(Limit.class);
        if (controllers.contains("memory")) {
            limits.add(Limit.memory);
        }
        if (controllers.contains("cpu")) {
            limits.add(Limit.cpu);
        }
        if (controllers.contains("cpuset")) {
            limits.add(Limit.cpuset);
        }
        if (controllers.contains("pids")) {
            limits.add(Limit.pids);
        }
        if (v2 || controllers.contains("freezer")) {
            limits.add(Limit.kill);
        }
        if (v2 || controllers.contains("devices")) {
            limits.add(Limit.devices); // on v2 by a mount namespace (DeviceFence.mountNamespace), which needs no controller
        }
        return limits;
    }
}
