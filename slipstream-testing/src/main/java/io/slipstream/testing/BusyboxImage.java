package io.slipstream.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/**
 * A tiny image built from files this machine has, as CI builds it: Debian's static busybox (every applet a link to it,
 * {@code nc} among them) in an OCI layout made with umoci, and copies as an OCI and a Docker archive made with skopeo.
 */
public final class BusyboxImage {
    /** Whether this machine can build and run images (root, bubblewrap, skopeo, umoci, busybox-static). */
    public static String missing() {
        try {
            boolean root = Files.readAllLines(Path.of("/proc/self/status")).stream().anyMatch(line -> line.matches("Uid:\\s+\\d+\\s+0\\s.*"));
            if (!root) {
                return "running images with a uid per run needs root";
            }
        } catch (IOException e) {
            return "cannot tell whether this is root";
        }
        List<String> missing = new ArrayList<>();
        for (String tool : List.of("/usr/bin/bwrap", "/usr/bin/skopeo", "/usr/bin/umoci", "/usr/bin/socat", "/bin/busybox")) {
            if (!Files.isExecutable(Path.of(tool))) {
                missing.add(tool);
            }
        }
        return missing.isEmpty() ? null : "this machine lacks " + String.join(", ", missing) + " (.ci/run installs them)";
    }

    /** The busybox image in {@code dir}: {@code layout/} (tag {@code latest}), {@code busybox.tar} and {@code busybox-docker.tar}. */
    public static void build(Path dir) throws Exception {
        build(dir, rootfs -> {
        });
    }

    /** What a test adds to the image's root file system before it is packed (a hostile image). */
    public interface Change {
        void apply(Path rootfs) throws Exception;
    }

    /** The busybox image with {@code change} made to its root file system. */
    public static void build(Path dir, Change change) throws Exception {
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path layout = dir.resolve("layout");
        Path bundle = dir.resolve("bundle");
        run("umoci", "init", "--layout", layout.toString());
        run("umoci", "new", "--image", layout + ":latest");
        run("umoci", "unpack", "--image", layout + ":latest", bundle.toString());
        Path bin = Files.createDirectories(bundle.resolve("rootfs").resolve("bin"));
        Files.copy(Path.of("/bin/busybox"), bin.resolve("busybox"));
        for (String applet : run("/bin/busybox", "--list").split("\n")) {
            if (!applet.isBlank() && !applet.equals("busybox")) {
                Files.createSymbolicLink(bin.resolve(applet.trim()), Path.of("busybox"));
            }
        }
        Files.writeString(Files.createDirectories(bundle.resolve("rootfs").resolve("etc")).resolve("os-release"), "ID=slipstream-test-busybox\n");
        change.apply(bundle.resolve("rootfs"));
        run("umoci", "repack", "--image", layout + ":latest", bundle.toString());
        run("umoci", "config", "--image", layout + ":latest", "--config.env", "PATH=/bin", "--config.env", "IMAGE_SAYS=hello");
        run("skopeo", "copy", "--quiet", "oci:" + layout + ":latest", "oci-archive:" + dir.resolve("busybox.tar"));
        run("skopeo", "copy", "--quiet", "oci:" + layout + ":latest", "docker-archive:" + dir.resolve("busybox-docker.tar"));
        run("chmod", "-R", "go+rX", layout.toString(), dir.resolve("busybox.tar").toString(), dir.resolve("busybox-docker.tar").toString());
        run("rm", "-rf", bundle.toString());
    }

    /**
     * Removes the private networks of runs whose server kept its data under {@code dataDir} (they outlive the server, as
     * they outlive its restart): their forwarders are killed and their namespaces deleted.
     */
    public static void removeNetworks(Path dataDir) throws Exception {
        java.util.Set<String> namespaces = new java.util.HashSet<>();
        try (var processes = Files.newDirectoryStream(Path.of("/proc"), p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path process : processes) {
                try {
                    String commandLine = Files.readString(process.resolve("cmdline")).replace('\0', ' ');
                    if (commandLine.startsWith("socat ") && commandLine.contains(dataDir.toString())) {
                        namespaces.add(Files.readSymbolicLink(process.resolve("ns").resolve("net")).toString());
                        ProcessHandle.of(Long.parseLong(process.getFileName().toString())).ifPresent(ProcessHandle::destroyForcibly);
                    }
                } catch (IOException e) {
                    // gone meanwhile
                }
            }
        }
        Path all = Path.of("/run/netns");
        if (!Files.isDirectory(all)) {
            return;
        }
        try (var names = Files.newDirectoryStream(all)) {
            for (Path namespace : names) {
                if (namespaces.contains("net:[" + Files.getAttribute(namespace, "unix:ino") + "]")) {
                    run("ip", "netns", "delete", namespace.getFileName().toString());
                }
            }
        }
    }

    public static String run(String... argv) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(new ArrayList<>(List.of(argv))).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor()).as(String.join(" ", argv) + ": " + out).isZero();
        return out;
    }

    private BusyboxImage() {
    }
}
