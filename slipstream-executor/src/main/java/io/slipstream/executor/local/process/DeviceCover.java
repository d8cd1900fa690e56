package io.slipstream.executor.local.process;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * GPUs fenced by a mount namespace (cgroup v2, whose devices controller is an eBPF program): the instance's first
 * process, as root, makes a mount namespace of its own and binds {@code cover} (an empty file that only root may open)
 * over each of {@code devices}, the nodes of the node's GPUs that are not the instance's, before it becomes the run's
 * uid. From then on that path opens the cover, never the device; the uid may neither unmount the cover (only root
 * may, and in a user namespace of its own the mounts it inherited are locked together) nor make a device node of its
 * own ({@code mknod} of a device needs root outside any user namespace). Its {@code /proc} is its PID namespace's own
 * (the machine's would show processes of its uid in other mount namespaces, whose {@code /proc/PID/root} reaches the
 * nodes uncovered: a sibling instance's, or the bubblewrap of an image instance of its run). What an image's sandbox
 * sees is bubblewrap's {@code /dev}, which binds only the instance's own GPUs. A node the host makes again (a driver
 * reload) is not covered in instances that run meanwhile.
 */
public record DeviceCover(Path cover, List<Path> devices) {
    /** None: nothing to cover, no mount namespace. */
    public static final DeviceCover NONE = new DeviceCover(null, List.of());

    /**
     * The supervisor's step ($0: {@link #argument()}), as root in the new mount namespace: covers each device, then
     * becomes the rest; nothing runs if a cover fails.
     */
    static final String COVER = "cover=; set -f; IFS=:; for node in $0; do if [ -z \"$cover\" ]; then cover=$node;"
            + " else mount --bind -- \"$cover\" \"$node\" || exit 2; fi; done; unset IFS cover node; set +f; exec \"$@\"";

    public DeviceCover {
        devices = List.copyOf(devices);
        if (!devices.isEmpty() && (cover == null || !cover.isAbsolute())) {
            throw new IllegalArgumentException("devices to cover need an absolute cover file, not " + cover);
        }
        List<Path> all = new ArrayList<>(devices);
        if (cover != null) {
            all.add(cover);
        }
        for (Path path : all) {
            if (!path.isAbsolute() || path.toString().contains(":") || path.toString().contains("\n")) {
                throw new IllegalArgumentException("cannot cover through a path that is relative or holds a colon or a newline: " + path);
            }
        }
    }

    public boolean isEmpty() {
        return devices.isEmpty();
    }

    /** The cover and the devices, separated by colons; "" for none. */
    public String argument() {
        if (devices.isEmpty()) {
            return "";
        }
        List<String> parts = new ArrayList<>();
        parts.add(cover.toString());
        devices.forEach(device -> parts.add(device.toString()));
        return String.join(":", parts);
    }
}
