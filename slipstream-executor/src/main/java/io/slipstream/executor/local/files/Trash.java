package io.slipstream.executor.local.files;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/**
 * Where finished runs' files go to be deleted. Taking a tree is one rename, so forgetting a run never makes the
 * control loop wait for a workload's million files; the deletion runs later on a thread of the executor's. It is
 * made with GNU {@code rm -rf --one-file-system}, which walks with {@code openat} and never follows a symbolic
 * link, even one swapped in while it runs (Java's {@code Files.walk} resolves every path anew, so a process of the
 * workspace that still sits inside a shared directory could lead a deleting root anywhere). The trash directory
 * belongs to the server (0700).
 */
public final class Trash {
    /** Deleting a tree of millions of files takes minutes; one that takes this long is on a file system that hangs. */
    private static final java.time.Duration DELETE_TIMEOUT = java.time.Duration.ofMinutes(30);

    private final Path dir;

    public Trash(Path dir) throws IOException {
        this.dir = dir;
        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    }

    public Path dir() {
        return dir;
    }

    /** Moves {@code tree} (on the same file system) into the trash under {@code name}; returns where it went. */
    public Path take(Path tree, String name) throws IOException {
        Path target = dir.resolve(name);
        for (int i = 1; Files.exists(target, LinkOption.NOFOLLOW_LINKS); i++) {
            target = dir.resolve(name + "." + i);
        }
        try {
            return Files.move(tree, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (java.nio.file.AtomicMoveNotSupportedException e) {
            delete(tree); // another file system (storage mounted apart): deleted where it is, at once
            return tree;
        }
    }

    /** What is waiting to be deleted. */
    public List<Path> entries() throws IOException {
        List<Path> entries = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
            stream.forEach(entries::add);
        }
        return entries;
    }

    /** Deletes one entry of the trash (or a tree that could not be moved into it); throws if anything of it is left. */
    public void delete(Path entry) throws IOException {
        SystemCommand.Result rm = SystemCommand.run(List.of("rm", "-rf", "--one-file-system", "--", entry.toString()), DELETE_TIMEOUT);
        if (!rm.succeeded() || Files.exists(entry, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException("cannot delete " + entry + " (rm exit code " + rm.exitCode() + "): " + rm.output());
        }
    }
}
