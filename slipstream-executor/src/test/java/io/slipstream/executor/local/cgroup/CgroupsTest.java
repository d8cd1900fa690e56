package io.slipstream.executor.local.cgroup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which cgroups a host gets, from what it mounts, and how limits are written: pure, no host needed. */
class CgroupsTest {
    /** This kind of machine: v1 controllers, each its own hierarchy, and an empty v2 one beside them (hybrid). */
    private static final String HYBRID = String.join("\n",
            "25 1 0:22 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
            "26 25 0:23 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu",
            "27 25 0:24 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct",
            "28 25 0:25 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
            "29 25 0:26 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids",
            "30 25 0:27 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer",
            "31 25 0:28 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd",
            "32 25 0:29 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
            "33 25 0:30 / /sys/fs/cgroup/devices rw,relatime shared:9 - cgroup cgroup rw,devices",
            "34 25 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset");
    /** A current distribution: one v2 hierarchy. */
    private static final String UNIFIED = "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot";
    /** An older one: cpu and cpuacct in one hierarchy, a bind mount of memory elsewhere. */
    private static final String COMOUNTED = String.join("\n",
            "26 25 0:23 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct",
            "28 25 0:25 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
            "40 25 0:25 /slice /mnt/with\\040space rw,relatime - cgroup cgroup rw,memory");

    @Test
    void mountsAreReadFromMountinfo() {
        CgroupMounts hybrid = CgroupMounts.parse(HYBRID);
        assertThat(hybrid.v1()).containsOnlyKeys("cpu", "cpuacct", "cpuset", "memory", "pids", "freezer", "devices");
        assertThat(hybrid.v1().get("memory")).isEqualTo(Path.of("/sys/fs/cgroup/memory"));
        assertThat(hybrid.unified()).isEqualTo(Path.of("/sys/fs/cgroup/unified"));

        CgroupMounts unified = CgroupMounts.parse(UNIFIED);
        assertThat(unified.v1()).isEmpty();
        assertThat(unified.unified()).isEqualTo(Path.of("/sys/fs/cgroup"));

        CgroupMounts comounted = CgroupMounts.parse(COMOUNTED);
        assertThat(comounted.v1().get("cpu")).isEqualTo(comounted.v1().get("cpuacct")).isEqualTo(Path.of("/sys/fs/cgroup/cpu,cpuacct"));
        assertThat(comounted.v1().get("memory")).as("the first mount of a hierarchy wins").isEqualTo(Path.of("/sys/fs/cgroup/memory"));
        assertThat(CgroupMounts.parse("40 25 0:25 / /mnt/with\\040space rw - cgroup cgroup rw,pids").v1().get("pids"))
                .isEqualTo(Path.of("/mnt/with space"));
        assertThat(CgroupMounts.parse("garbage\n\n1 2 3\n").v1()).isEmpty();
    }

    @Test
    void theHostsPrimaryHierarchyIsChosen() {
        String parent = "slipstream-0123456789ab";
        Cgroups hybrid = Cgroups.choose(Cgroups.Mode.auto, true, CgroupMounts.parse(HYBRID), Set.of(), parent);
        assertThat(hybrid).isInstanceOf(V1Cgroups.class);
        assertThat(hybrid.enforcement().enforced()).containsExactlyInAnyOrder(Limit.values());
        assertThat(hybrid.enforcement().describe()).isEqualTo("cgroup v1: memory, cpu, cpuset, pids, devices, kill enforced");
        Cgroups noDevices = Cgroups.choose(Cgroups.Mode.auto, true, CgroupMounts.parse(HYBRID.replace("rw,devices", "rw,net_cls")), Set.of(), parent);
        assertThat(noDevices.enforcement().describe())
                .isEqualTo("cgroup v1: memory, cpu, cpuset, pids, kill enforced; not devices: this host does not mount the v1 controllers for them (devices)");

        Cgroups unified = Cgroups.choose(Cgroups.Mode.auto, true, CgroupMounts.parse(UNIFIED), Set.of("cpuset", "cpu", "io", "memory", "pids"), parent);
        assertThat(unified).isInstanceOf(V2Cgroups.class);
        assertThat(unified.enforcement().enforced()).containsExactlyInAnyOrder(Limit.values());
        assertThat(unified.enforcement().describe()).isEqualTo("cgroup v2: memory, cpu, cpuset, pids, devices, kill enforced");
        assertThat(unified.deviceFence()).as("v2 has no devices file: a mount namespace fences GPUs").isEqualTo(Cgroups.DeviceFence.mountNamespace);
        assertThat(hybrid.deviceFence()).isEqualTo(Cgroups.DeviceFence.cgroup);
        assertThat(noDevices.deviceFence()).isEqualTo(Cgroups.DeviceFence.none);

        Cgroups emptyV2 = Cgroups.choose(Cgroups.Mode.auto, true, new CgroupMounts(Map.of(), Path.of("/sys/fs/cgroup/unified")), Set.of(), parent);
        assertThat(emptyV2.enforcement().enforced()).as("v2 without controllers still kills through the cgroup, and fences by namespace")
                .containsExactly(Limit.devices, Limit.kill);
        assertThat(emptyV2.enforcement().describe()).contains("does not offer the memory, cpu, cpuset, pids controller(s)");

        assertThat(Cgroups.choose(Cgroups.Mode.auto, false, CgroupMounts.parse(HYBRID), Set.of(), parent).enforcement().describe())
                .isEqualTo("resource limits not enforced (memory, cpu, cpuset, pids, devices, kill): the server is not root, and only root may make cgroups");
        assertThat(Cgroups.choose(Cgroups.Mode.off, true, CgroupMounts.parse(HYBRID), Set.of(), parent).enforcement().enforced()).isEmpty();
        assertThat(Cgroups.choose(Cgroups.Mode.auto, true, new CgroupMounts(Map.of(), null), Set.of(), parent).enforcement().why())
                .isEqualTo("this host mounts no cgroup file system");
        assertThatThrownBy(() -> Cgroups.choose(Cgroups.Mode.on, false, CgroupMounts.parse(HYBRID), Set.of(), parent))
                .isInstanceOf(IllegalStateException.class).hasMessage("instances.cgroups is on, but the server is not root, and only root may make cgroups");
    }

    @Test
    void aDeviceIsNamedByItsNumbersAndNeverThroughALink(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        assertThat(CgroupLimits.deviceOf(Path.of("/dev/null"))).isEqualTo("c 1:3");
        assertThat(CgroupLimits.deviceOf(Path.of("/dev/full"))).isEqualTo("c 1:7");
        Path link = java.nio.file.Files.createSymbolicLink(dir.resolve("null"), Path.of("/dev/null"));
        assertThatThrownBy(() -> CgroupLimits.deviceOf(link)).hasMessageContaining("is not a device node");
        assertThatThrownBy(() -> CgroupLimits.deviceOf(dir)).hasMessageContaining("is not a device node");
        assertThatThrownBy(() -> CgroupLimits.deviceOf(dir.resolve("missing"))).isInstanceOf(java.nio.file.NoSuchFileException.class);
    }

    @Test
    void eachServerHasAParentOfItsOwnThatARestartFindsAgain() {
        String one = Cgroups.parentName(Path.of("/var/lib/slipstream/instances"));
        assertThat(one).matches("slipstream-[0-9a-f]{12}").isEqualTo(Cgroups.parentName(Path.of("/var/lib/slipstream/./instances")));
        assertThat(Cgroups.parentName(Path.of("/srv/other/instances"))).isNotEqualTo(one);
    }

    @Test
    void limitsAreWrittenAsTheKernelWantsThem() {
        CgroupLimits half = new CgroupLimits(512L << 20, 500, 4096);
        assertThat(half.v1Memory()).isEqualTo("536870912");
        assertThat(half.v1CpuQuota()).isEqualTo("50000");
        assertThat(half.v2Cpu()).isEqualTo("50000 100000");
        assertThat(half.v2Memory()).isEqualTo("536870912");
        assertThat(half.pidsMax()).isEqualTo("4096");

        assertThat(new CgroupLimits(0, 0, 0).v1Memory()).isEqualTo("-1");
        assertThat(new CgroupLimits(0, 0, 0).v1CpuQuota()).isEqualTo("-1");
        assertThat(new CgroupLimits(0, 0, 0).v2Cpu()).isEqualTo("max 100000");
        assertThat(new CgroupLimits(0, 0, 0).v2Memory()).isEqualTo("max");
        assertThat(new CgroupLimits(0, 0, 0).pidsMax()).isEqualTo("max");
        assertThat(new CgroupLimits(0, 1, 0).v1CpuQuota()).as("the least quota the kernel takes").isEqualTo("1000");
        assertThat(new CgroupLimits(0, 64_000, 0).v2Cpu()).isEqualTo("6400000 100000");
        assertThatThrownBy(() -> new CgroupLimits(-1, 0, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new CgroupLimits(0, 0, 0, java.util.List.of("a"))).hasMessage("not a device: a");
        assertThatThrownBy(() -> new CgroupLimits(0, 0, 0, java.util.List.of("c 1:3 rwm\na"))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theServersInstancesTogetherLeaveTheHostAQuarterOfItsPids() {
        assertThat(CgroupLimits.parentPidsMax(32_768)).isEqualTo("24576");
        assertThat(CgroupLimits.parentPidsMax(4_194_304)).isEqualTo("3145728");
        assertThat(CgroupLimits.parentPidsMax(4_096)).as("at least 2,048 kept").isEqualTo("2048");
        assertThat(CgroupLimits.parentPidsMax(1_000)).isEqualTo("1");
        assertThat(CgroupLimits.parentPidsMax(-1)).as("unknown").isEqualTo("max");
    }
}
