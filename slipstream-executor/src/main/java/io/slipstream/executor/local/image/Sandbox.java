package io.slipstream.executor.local.image;

import io.slipstream.api.run.ClusterMetadata;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.NodeInfo;
import io.slipstream.executor.local.files.InstanceDirectory;
import io.slipstream.executor.local.storage.SharedStorage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How an instance with an image runs: in bubblewrap, as the run's uid (in a user namespace of its own that maps only
 * that uid), with the image's root file system read-only at {@code /}, its own {@code /proc}, {@code /dev} and PID
 * namespace, and nothing of this machine's files but what is mounted at the documented paths:
 * <ul>
 *   <li>{@value #INSTANCE}: the instance's directory (its working directory and home {@code work/}, {@code report/},
 *       the metadata, hostfiles and notice), with its {@code tmp/} also at {@code /tmp};</li>
 *   <li>{@value #SHARED} and {@value #CHECKPOINTS}: the run's shared and checkpoint directories; each storage at
 *       {@value #STORAGE}{@code <name>};</li>
 *   <li>the device nodes of the instance's GPUs, where this machine has them.</li>
 * </ul>
 * The options (the environment too, which holds the run's token) travel in a file only the server can read, opened
 * by the supervisor and read by bubblewrap from a descriptor ({@code --args}): never on a command line. The command
 * follows on the command line (bubblewrap takes it only there), as for an instance without an image.
 */
public final class Sandbox {
    static final String INSTANCE = "/slipstream/instance";
    static final String SHARED = "/slipstream/shared";
    static final String CHECKPOINTS = "/slipstream/checkpoints";
    static final String STORAGE = "/slipstream/storage/";
    /** How many links a command's path may go through in an image before it counts as a loop. */
    private static final int MAX_LINKS = 40;
    private static final java.util.regex.Pattern ENV_NAME = java.util.regex.Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final List<String> GPU_CONTROL_DEVICES = List.of("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset");

    private final Path instance;
    private final Map<Path, String> mounts = new LinkedHashMap<>();

    /** @param instance the instance's directory; {@code shared} the run's storage ({@code null}: none) */
    public Sandbox(InstanceDirectory instance, SharedStorage.Prepared shared) {
        this.instance = instance.path();
        mounts.put(instance.path(), INSTANCE);
        if (shared != null) {
            mounts.put(shared.shared(), SHARED);
            mounts.put(shared.checkpoints(), CHECKPOINTS);
            for (ClusterMetadata.Storage storage : shared.storage()) {
                mounts.put(Path.of(storage.path()), STORAGE + storage.name());
            }
        }
    }

    /** Where the instance sees {@code host} (a path at or below one of its mounts). */
    public String inside(Path host) {
        for (Map.Entry<Path, String> mount : mounts.entrySet()) {
            if (host.startsWith(mount.getKey())) {
                Path relative = mount.getKey().relativize(host);
                return relative.toString().isEmpty() ? mount.getValue() : mount.getValue() + "/" + relative;
            }
        }
        throw new IllegalArgumentException(host + " is not mounted in the instance's sandbox");
    }

    /** The storage as the instance sees it, for its metadata. */
    public List<ClusterMetadata.Storage> storageInside(List<ClusterMetadata.Storage> storage) {
        return storage.stream().map(s -> new ClusterMetadata.Storage(s.name(), s.scope(), inside(Path.of(s.path())), s.mountPath())).toList();
    }

    /**
     * bubblewrap's options, NUL-separated, for {@code --args}.
     *
     * @param workingDir the working directory on this machine (in the instance's sandbox)
     * @param gpus       the instance's GPU indices on {@code node}
     */
    public byte[] arguments(Path rootfs, String hostname, Path workingDir, NodeInfo node, List<Integer> gpus, Map<String, String> env) {
        List<String> args = new ArrayList<>(List.of("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                "--die-with-parent", "--new-session", "--hostname", hostname,
                "--ro-bind", rootfs.toString(), "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/slipstream"));
        for (Map.Entry<Path, String> mount : mounts.entrySet()) {
            args.addAll(List.of("--bind", mount.getKey().toString(), mount.getValue()));
        }
        args.addAll(List.of("--bind", instance.resolve("tmp").toString(), "/tmp"));
        if (!gpus.isEmpty()) {
            List<String> devices = new ArrayList<>(GPU_CONTROL_DEVICES);
            for (int gpu : gpus) {
                String id = node.gpuId(gpu);
                devices.add(!node.gpuDevices().isEmpty() ? node.gpuDevices().get(gpu) : "/dev/nvidia" + (id.matches("[0-9]+") ? id : Integer.toString(gpu)));
            }
            for (String device : devices) {
                if (Files.exists(Path.of(device))) {
                    args.addAll(List.of("--dev-bind", device, device));
                }
            }
        }
        args.addAll(List.of("--chdir", inside(workingDir), "--clearenv"));
        env.forEach((name, value) -> {
            if (!ENV_NAME.matcher(name).matches()) {
                throw new ExecutorException("'" + name + "' is not an environment variable name");
            }
            args.addAll(List.of("--setenv", name, value));
        });
        StringBuilder text = new StringBuilder();
        for (String arg : args) {
            if (arg.indexOf('\0') >= 0) {
                throw new ExecutorException("an argument or environment value contains a NUL character");
            }
            text.append(arg).append('\0');
        }
        return text.toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Why {@code command} cannot be run in the image, or {@code null} if it can: a name without a slash must be an
     * executable file in a directory of the image's {@code path}, a path one in the image. Links are followed within
     * the image only (an absolute link is the image's own path), never to this machine's files.
     */
    public static String commandProblem(Path rootfs, String command, String path) {
        if (command.contains("/")) {
            if (!command.startsWith("/") || mounted(command)) {
                return null; // in the instance's own directories or storage (mounted over the image): found when it runs
            }
            return executable(rootfs, command) ? null : "the image has no executable file " + command;
        }
        for (String dir : path.split(":")) {
            if (dir.startsWith("/") && (mounted(dir) || executable(rootfs, dir + "/" + command))) {
                return null;
            }
        }
        return "the image has no command '" + command + "' (looked in its PATH " + path + ")";
    }

    /** Whether {@code path} is under what the sandbox mounts over the image ({@code /slipstream}, {@code /tmp}). */
    private static boolean mounted(String path) {
        return path.equals("/slipstream") || path.startsWith("/slipstream/") || path.equals("/tmp") || path.startsWith("/tmp/");
    }

    private static boolean executable(Path rootfs, String path) {
        try {
            Path found = resolve(rootfs, path);
            return found != null && Files.isRegularFile(found, LinkOption.NOFOLLOW_LINKS) && Files.isExecutable(found);
        } catch (IOException e) {
            return false;
        }
    }

    /** {@code path} resolved in the image as its kernel would, never leaving it; {@code null} if a link loops. */
    static Path resolve(Path rootfs, String path) throws IOException {
        List<String> pending = new ArrayList<>(List.of(path.split("/")));
        List<String> resolved = new ArrayList<>();
        int links = 0;
        while (!pending.isEmpty()) {
            String segment = pending.remove(0);
            if (segment.isEmpty() || segment.equals(".")) {
                continue;
            }
            if (segment.equals("..")) {
                if (!resolved.isEmpty()) {
                    resolved.remove(resolved.size() - 1);
                }
                continue;
            }
            Path current = rootfs.resolve(String.join("/", resolved)).resolve(segment);
            if (Files.isSymbolicLink(current)) {
                if (++links > MAX_LINKS) {
                    return null;
                }
                String target = Files.readSymbolicLink(current).toString();
                if (target.startsWith("/")) {
                    resolved.clear();
                }
                List<String> expanded = new ArrayList<>(List.of(target.split("/")));
                expanded.addAll(pending);
                pending = expanded;
            } else {
                resolved.add(segment);
            }
        }
        return rootfs.resolve(String.join("/", resolved));
    }
}
