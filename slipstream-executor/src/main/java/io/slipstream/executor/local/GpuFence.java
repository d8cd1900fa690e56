package io.slipstream.executor.local;

import io.slipstream.executor.LaunchSpec;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.cgroup.CgroupLimits;
import io.slipstream.executor.local.cgroup.Cgroups;
import io.slipstream.executor.local.files.SafeFiles;
import io.slipstream.executor.local.process.DeviceCover;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Which GPUs an instance is kept from, and how: every GPU any node of this machine declares ({@code gpuDevices}) but its
 * own. Not only its node's: a machine split into nodes (one per GPU pair) gives the GPUs of the node beside it to other
 * runs, and an instance of a node without GPUs has none. On cgroup v1 its cgroup denies their device numbers; on v2 its
 * first process covers their nodes in a mount namespace of its own ({@link DeviceCover}).
 */
final class GpuFence {
    private final Cgroups cgroups;
    private final Path root;
    /** Every GPU node the machine's nodes declare, in order. */
    private final List<Path> machineGpus;
    /** The file bound over the GPUs an instance is fenced from on cgroup v2, made on first use. */
    private Path coverFile;

    /** @param root the instances' root (the server's alone), where the cover file is made */
    GpuFence(Cgroups cgroups, Path root, List<NodeInfo> nodes) {
        this.cgroups = cgroups;
        this.root = root;
        Set<Path> gpus = new LinkedHashSet<>();
        nodes.forEach(node -> node.gpuDevices().forEach(device -> gpus.add(Path.of(device))));
        this.machineGpus = List.copyOf(gpus);
    }

    /** On cgroup v1, the device numbers of the GPUs the instance may neither open nor make; none elsewhere. */
    List<String> deniedDevices(LaunchSpec spec, NodeInfo node) throws IOException {
        if (cgroups.deviceFence() != Cgroups.DeviceFence.cgroup) {
            return List.of();
        }
        List<String> denied = new ArrayList<>();
        for (Path device : others(spec, node)) {
            denied.add(CgroupLimits.deviceOf(device));
        }
        return denied;
    }

    /**
     * On cgroup v2, the GPUs to cover in the instance's mount namespace; none on v1 (its cgroup denies them), without
     * cgroups, and with an image (bubblewrap's {@code /dev} binds only its own GPUs).
     */
    DeviceCover cover(LaunchSpec spec, NodeInfo node, Integer uid) throws IOException {
        if (cgroups.deviceFence() != Cgroups.DeviceFence.mountNamespace || spec.image() != null) {
            return DeviceCover.NONE;
        }
        List<Path> others = others(spec, node);
        if (others.isEmpty()) {
            return DeviceCover.NONE;
        }
        if (uid == null) {
            // As root, it could unmount a cover: it never runs unfenced on a server that enforces.
            throw new IOException("cannot fence GPUs " + others + " from an instance without a uid of its run's own (instances.isolation)");
        }
        try {
            return new DeviceCover(coverFile(), others);
        } catch (IllegalArgumentException e) {
            throw new IOException("cannot fence GPUs " + others + ": " + e.getMessage(), e);
        }
    }

    /** The machine's GPU nodes that are not the instance's, each a device node (never a link). */
    private List<Path> others(LaunchSpec spec, NodeInfo node) throws IOException {
        Set<Path> own = new LinkedHashSet<>();
        for (int gpu : spec.gpus()) {
            if (gpu < node.gpuDevices().size()) {
                own.add(Path.of(node.gpuDevices().get(gpu)));
            }
        }
        List<Path> others = new ArrayList<>();
        for (Path device : machineGpus) {
            if (!own.contains(device)) {
                try {
                    CgroupLimits.deviceOf(device);
                } catch (IOException e) {
                    throw new IOException("cannot fence GPU " + device + ": " + e.getMessage(), e);
                }
                others.add(device);
            }
        }
        return others;
    }

    /** An empty file that only root may open, in the instances' root. */
    private synchronized Path coverFile() throws IOException {
        if (coverFile == null) {
            Path file = root.resolve(".device-cover");
            SafeFiles.writeControlFile(file, new byte[0], "---------");
            coverFile = file;
        }
        return coverFile;
    }
}
