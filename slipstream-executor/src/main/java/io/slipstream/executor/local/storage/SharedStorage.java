package io.slipstream.executor.local.storage;

import io.slipstream.api.run.ClusterMetadata;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.local.files.Trash;
import io.slipstream.executor.local.uid.UidAllocator;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The runs' shared storage on this machine, under {@code <data>/storage/<workspace>/}: {@code workspace/} for
 * workspace-scoped storage, {@code jobs/<job>/} for job-scoped, {@code runs/<run>/} for run-scoped, with each run's
 * {@code .shared} and {@code .checkpoints} directories. Storage paths never leave their workspace: names and sub-paths
 * are checked when specs are read, and here no directory on the way may be a symbolic link (a job could have made
 * one). With isolation, a workspace's directories belong to a group of its own that all its runs' instances join
 * (setgid directories, so what one run writes the next can change); other workspaces' runs cannot enter.
 */
public final class SharedStorage {
    private static final int GROUP_DIRECTORY = 02770;
    private static final int GROUP_READ_ONLY = 02750;

    /** The server's own uid: the owner of every directory it makes. */
    private static final int SERVER_UID = serverUid();

    private final Path root;
    /** A workspace's group id, {@code null} where it has none (no isolation). */
    private final java.util.function.Function<String, Integer> groups;

    /** @param ids gives workspaces their group ids; {@code null} without isolation */
    public SharedStorage(Path root, UidAllocator ids) {
        this(root, ids == null ? workspace -> null : ids::gidFor);
    }

    /** @param groups gives a workspace its group id, or {@code null} where it has none (the Slurm executor's accounts) */
    public SharedStorage(Path root, java.util.function.Function<String, Integer> groups) {
        this.root = root;
        this.groups = groups;
    }

    private static int serverUid() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** What a run's instance gets: its storage with local paths, and the run's own shared and checkpoint directories. */
    public record Prepared(List<ClusterMetadata.Storage> storage, Path shared, Path checkpoints, Integer gid) {
    }

    public Prepared prepare(ClusterMetadata metadata) throws IOException {
        Integer gid = groups.apply(metadata.workspace());
        Path workspace = directory(root, metadata.workspace(), gid, GROUP_READ_ONLY);
        if (gid != null) {
            // Made by the gid allocator without its group: other workspaces' instances must not even look inside.
            Files.setAttribute(workspace, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
            Files.setAttribute(workspace, "unix:mode", GROUP_READ_ONLY, LinkOption.NOFOLLOW_LINKS);
        }
        Path runRoot = directory(directory(workspace, "runs", gid, GROUP_READ_ONLY), metadata.runId(), gid, GROUP_READ_ONLY);
        List<ClusterMetadata.Storage> resolved = new ArrayList<>();
        for (ClusterMetadata.Storage storage : metadata.storage()) {
            Path scopeRoot = switch (storage.scope()) {
                case "workspace" -> directory(workspace, "workspace", gid, GROUP_READ_ONLY);
                case "job" -> directory(directory(workspace, "jobs", gid, GROUP_READ_ONLY), metadata.job(), gid, GROUP_READ_ONLY);
                case "run" -> runRoot;
                default -> throw new ExecutorException("storage " + storage.name() + ": unknown scope " + storage.scope());
            };
            List<String> segments = new ArrayList<>();
            Path.of(storage.path() == null ? storage.name() : storage.path()).forEach(segment -> segments.add(segment.toString()));
            Path path = scopeRoot;
            for (String segment : segments.subList(0, segments.size() - 1)) {
                path = passage(path, segment, gid);
            }
            path = directory(path, segments.get(segments.size() - 1), gid, GROUP_DIRECTORY);
            resolved.add(new ClusterMetadata.Storage(storage.name(), storage.scope(), path.toString(), storage.mountPath()));
        }
        return new Prepared(resolved, directory(runRoot, ".shared", gid, GROUP_DIRECTORY), directory(runRoot, ".checkpoints", gid, GROUP_DIRECTORY),
                gid);
    }

    /**
     * A level of a storage path above the storage itself ({@code a} and {@code b} of {@code a/b/c}): it belongs to the
     * server and the workspace's runs may only pass through it (2750), so that no run can swap what lies below for a
     * link while the server makes it. One that the runs may write (another storage's own directory, or one made by an
     * older version) is refused: the server never resolves a path through a directory a workload can change.
     */
    private Path passage(Path parent, String name, Integer gid) throws IOException {
        Path path = directory(parent, name, gid, GROUP_READ_ONLY);
        if (gid != null) {
            int mode = (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            int owner = (Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            if ((mode & 0022) != 0 || owner != SERVER_UID) {
                throw new ExecutorException("storage path " + root.relativize(path) + " is a directory the workspace's runs can change (another "
                        + "storage's, or made by an earlier version): a storage path cannot lie inside it; choose a subPath beside it");
            }
        }
        return path;
    }

    /** One directory level: made if missing, refused if it is a link or not a directory or leads out of the root. */
    /** Synchronized: runs launched at once may make the same workspace's or job's directory, and its mode with it. */
    private synchronized Path directory(Path parent, String name, Integer gid, int mode) throws IOException {
        if (name.isEmpty() || name.equals(".") || name.equals("..") || name.contains("/")) {
            throw new ExecutorException("storage path segment '" + name + "' is not allowed");
        }
        Path path = parent.resolve(name);
        if (!path.normalize().startsWith(root)) {
            throw new ExecutorException("storage path " + path + " leaves " + root);
        }
        if (Files.isSymbolicLink(path)) {
            throw new ExecutorException("storage path " + root.relativize(path) + " is a symbolic link; storage never follows links");
        }
        if (Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            if (!Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
                throw new ExecutorException("storage path " + root.relativize(path) + " is a file, not a directory");
            }
            return path;
        }
        Files.createDirectories(parent);
        Files.createDirectory(path);
        if (gid != null) {
            Files.setAttribute(path, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
            Files.setAttribute(path, "unix:mode", mode, LinkOption.NOFOLLOW_LINKS);
        }
        return path;
    }

    /**
     * Moves a run's run-scoped storage (and its shared and checkpoint directories), in whichever workspace it is, into
     * {@code trash}, to be deleted from there.
     */
    public void forgetRun(RunId runId, Trash trash) throws IOException {
        if (!Files.isDirectory(root)) {
            return;
        }
        try (DirectoryStream<Path> workspaces = Files.newDirectoryStream(root)) {
            for (Path workspace : workspaces) {
                Path run = workspace.resolve("runs").resolve(runId.value());
                if (!workspace.equals(trash.dir()) && Files.isDirectory(run, LinkOption.NOFOLLOW_LINKS) && run.normalize().startsWith(root)) {
                    trash.take(run, "storage-" + workspace.getFileName() + "-" + runId.value());
                }
            }
        }
    }
}
