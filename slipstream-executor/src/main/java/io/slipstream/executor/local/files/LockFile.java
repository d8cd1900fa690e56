package io.slipstream.executor.local.files;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * An exclusive lock on a file of the server's, held until closed: made if missing, never through a link, in a directory
 * only the server may change, and the server's alone (0600) whatever mode it had: a lock anyone could open, anyone
 * could hold (a shared lock on a descriptor opened only to read keeps every exclusive one waiting), and servers before
 * this class made some of theirs 0644 in a directory every uid may enter (the uid ranges' claims). It excludes other
 * processes only: threads of one process take turns before they take it.
 */
public final class LockFile implements AutoCloseable {
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

    private final FileChannel channel;
    private final FileLock lock;

    private LockFile(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /** Waits until the lock on {@code file} is this process's. */
    public static LockFile lock(Path file) throws IOException {
        FileChannel channel = FileChannel.open(file, Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
                PosixFilePermissions.asFileAttribute(OWNER_ONLY));
        try {
            // Opened without following a link, in a directory only the server changes: the name is this file.
            Files.setPosixFilePermissions(file, OWNER_ONLY);
            return new LockFile(channel, channel.lock());
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    @Override
    public void close() throws IOException {
        try {
            lock.release();
        } finally {
            channel.close();
        }
    }
}
