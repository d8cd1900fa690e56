package io.slipstream.executor.slurm;

import io.slipstream.executor.ExecutorException;
import io.slipstream.executor.local.files.PinnedFile;
import io.slipstream.executor.local.files.Trash;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

/**
 * The executor's own directories on the shared file system ({@code slurm.sharedDirectory}), made ready at start: the
 * instances' and storage roots, the pins of progress files and the trashes.
 *
 * @param pins         where progress files are pinned before they are read
 * @param trash        where forgotten runs' instance directories go before they are deleted
 * @param storageTrash the same for their storage
 */
record SharedDirectory(Path pins, Trash trash, Trash storageTrash) {
    /**
     * Checks and makes the directories. With jobs as other accounts ({@code otherAccounts}), the shared directory must be
     * root's alone to write (the leader fence and every instance's directory are in it), and so must the directories of
     * the executor's in it, checked before anything is made, changed or emptied there (an earlier, trusted-tenants setup
     * left them to the account its jobs ran as, which may have put a link there); the roots are then passable, not
     * listable (every run's and workspace's name is in them).
     *
     * @throws ExecutorException naming slurm.sharedDirectory if a directory is not as it must be, or cannot be made
     */
    static SharedDirectory prepare(SlurmSettings settings, boolean otherAccounts) {
        Path instances = settings.instancesRoot();
        Path storage = settings.storageRoot();
        try {
            if (otherAccounts) {
                Files.createDirectories(settings.sharedDirectory());
                requireRoots(settings.sharedDirectory());
                for (Path path : List.of(instances, instances.resolve(".pins"), instances.resolve(".trash"), storage, storage.resolve(".trash"))) {
                    if (Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
                        requireRoots(path);
                    }
                }
            }
            Files.createDirectories(instances);
            Files.createDirectories(storage);
            if (otherAccounts) {
                Files.setPosixFilePermissions(instances, PosixFilePermissions.fromString("rwx--x--x"));
                Files.setPosixFilePermissions(storage, PosixFilePermissions.fromString("rwx--x--x"));
            }
            return new SharedDirectory(PinnedFile.prepareDirectory(instances.resolve(".pins")), new Trash(instances.resolve(".trash")),
                    new Trash(storage.resolve(".trash")));
        } catch (IOException e) {
            throw new ExecutorException("cannot make the shared directory " + settings.sharedDirectory() + " ready (slurm.sharedDirectory): "
                    + e.getMessage(), e);
        }
    }

    private static void requireRoots(Path directory) throws IOException {
        Object owner = Files.getAttribute(directory, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        int mode = (Integer) Files.getAttribute(directory, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        if (!Integer.valueOf(0).equals(owner) || (mode & 0022) != 0 || !Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS)) {
            throw new ExecutorException("slurm.sharedDirectory: " + directory + " must be a directory of root's, writable by root alone (is uid "
                    + owner + ", mode " + Integer.toOctalString(mode & 07777) + "): jobs run as the workspaces' accounts, and the leader fence"
                    + " and every instance's directory are in it");
        }
    }
}
