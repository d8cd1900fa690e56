package io.slipstream.executor.local;

import io.slipstream.api.run.ClusterMetadata;
import io.slipstream.api.run.RunId;
import io.slipstream.executor.ExecutorException;
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
final class SharedStorage {
    private static final int GROUP_DIRECTORY = 02770;
    private static final int GROUP_READ_ONLY = 02750;

    private final Path root;
    private final UidAllocator ids;

    /** @param ids gives workspaces their group ids; {@code null} without isolation */
    SharedStorage(Path root, UidAllocator ids) {
        this.root = root;
        this.ids = ids;
    }

    /** What a run's instance gets: its storage with local paths, and the run's own shared and checkpoint directories. */
    record Prepared(List<ClusterMetadata.Storage> storage, Path shared, Path checkpoints, Integer gid) {
    }

    /** @param uid the run's uid when instances run under uids of their own, else {@code null} */
    Prepared prepare(ClusterMetadata metadata, Integer uid) throws IOException {
        Integer gid = ids == null ? null : ids.gidFor(metadata.workspace());
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
            // The first level is made in a directory only the server writes; deeper ones in the workspace's own.
            Path path = directory(scopeRoot, segments.get(0), gid, GROUP_DIRECTORY);
            path = nested(path, segments.subList(1, segments.size()), uid, gid);
            resolved.add(new ClusterMetadata.Storage(storage.name(), storage.scope(), path.toString(), storage.mountPath()));
        }
        return new Prepared(resolved, directory(runRoot, ".shared", gid, GROUP_DIRECTORY), directory(runRoot, ".checkpoints", gid, GROUP_DIRECTORY),
                gid);
    }

    /**
     * The levels of a storage path below its first: they lie in a directory every run of the workspace may change, so
     * with isolation they are made by the run's own uid ({@code mkdir -p} under {@code setpriv}), never by the server:
     * a link another run swaps in there can then lead nowhere the run could not go anyway. Each level must end up a
     * directory, not a link.
     */
    private Path nested(Path parent, List<String> segments, Integer uid, Integer gid) throws IOException {
        if (segments.isEmpty()) {
            return parent;
        }
        if (uid == null || gid == null) {
            Path path = parent;
            for (String segment : segments) {
                path = directory(path, segment, gid, GROUP_DIRECTORY);
            }
            return path;
        }
        Path target = parent;
        for (String segment : segments) {
            if (segment.isEmpty() || segment.equals(".") || segment.equals("..") || segment.contains("/")) {
                throw new ExecutorException("storage path segment '" + segment + "' is not allowed");
            }
            target = target.resolve(segment);
        }
        if (!Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
            makeAs(uid, gid, target);
        }
        for (Path path = target; !path.equals(parent); path = path.getParent()) {
            if (Files.isSymbolicLink(path)) {
                throw new ExecutorException("storage path " + root.relativize(path) + " is a symbolic link; storage never follows links");
            }
            if (!Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
                throw new ExecutorException("storage path " + root.relativize(path) + " is a file, not a directory");
            }
        }
        return target;
    }

    private static void makeAs(int uid, int gid, Path target) throws IOException {
        SystemCommand.Result mkdir = SystemCommand.run(List.of("setpriv", "--reuid=" + uid, "--regid=" + gid, "--groups=" + gid, "--no-new-privs",
                "mkdir", "-p", "-m", "2770", "--", target.toString()));
        if (!mkdir.succeeded()) {
            throw new ExecutorException("cannot make storage directory " + target.getFileName() + ": " + mkdir.output());
        }
    }

    /** One directory level: made if missing, refused if it is a link or not a directory or leads out of the root. */
    private Path directory(Path parent, String name, Integer gid, int mode) throws IOException {
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
    void forgetRun(RunId runId, Trash trash) throws IOException {
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
