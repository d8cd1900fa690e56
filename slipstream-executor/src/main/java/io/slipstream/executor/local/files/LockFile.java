package io.slipstream.executor.local.files;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * An exclusive lock on a file of the server's, held until closed: made if missing (0600), never through a link, in a
 * directory only the server may enter (a lock anyone could open, anyone could hold). It excludes other processes only:
 * threads of one process take turns before they take it.
 */
public final class LockFile implements AutoCloseable {
    private final FileChannel channel;
    private final FileLock lock;

    private LockFile(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /** Waits until the lock on {@code file} is this process's. */
    public static LockFile lock(Path file) throws IOException {
        FileChannel channel = FileChannel.open(file, Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
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
