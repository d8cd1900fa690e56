package io.slipstream.executor.local.files;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Reading and writing the files of an instance as the server, which may be root, without being led anywhere by the
 * workload. Two kinds of directory matter:
 * <ul>
 *   <li>the instance's control directory belongs to the server and the workload cannot create, rename or replace
 *       anything in it: what is read there is read as a regular file, without following links, with a size limit;</li>
 *   <li>a directory the workload writes ({@code report/}): a name there can be swapped for a link, a FIFO or a device
 *       at any moment, so the file is first pinned by a hard link into a directory of the server's, and only that
 *       pinned inode is examined and read ({@link PinnedFile}).</li>
 * </ul>
 * Nothing here blocks: a FIFO, socket or device is refused before it is ever opened; in a directory a workload can write
 * (the Slurm executor's instance directories, on a file system its jobs share), where a FIFO may be swapped in between
 * the check and the open, a file is opened and read on a thread of its own, waited for a short while only
 * ({@link #readSharedFile}, {@link #openRegular}).
 */
public final class SafeFiles {
    /** How long opening and reading a control file is waited for, twice (a JVM pause may outlast the first wait). */
    static final Duration READ_PATIENCE = Duration.ofMillis(250);
    /** Open and read control files; a thread held up by a FIFO (an open that waits for a writer) waits for it alone. */
    private static final ExecutorService READERS = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "slipstream-control-read");
        thread.setDaemon(true);
        return thread;
    });

    private SafeFiles() {
    }

    /** What a workload's file held, and when it was last written. */
    record Content(byte[] data, java.time.Instant modified) {
    }

    /** A file that is there but is not what the server accepts (a link, a FIFO, too large...). */
    public static final class RefusedFile extends IOException {
        RefusedFile(Path file, String why) {
            super(file.getFileName() + " " + why);
        }
    }

    /**
     * The content of a regular file in a directory only the server can change, or {@code null} if there is none.
     *
     * @throws RefusedFile if it is a link, not a regular file, or larger than {@code maxBytes}
     */
    public static byte[] readControlFile(Path file, int maxBytes) throws IOException {
        if (!checked(file, maxBytes)) {
            return null;
        }
        try (InputStream in = Files.newInputStream(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            byte[] data = in.readNBytes(maxBytes + 1);
            if (data.length > maxBytes) {
                throw new RefusedFile(file, "is larger than " + maxBytes + " bytes");
            }
            return data;
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /**
     * The content of a regular file in a directory the workload can write too (the Slurm executor's instance
     * directories, on a file system its jobs share), or {@code null} if there is none. Checked without following a
     * link, then opened without following one and read, at most {@code maxBytes}, on a thread of its own: a FIFO (or a
     * device) may be swapped in after the check, and an open or a read of it may wait forever. What is opened is
     * refused unless it can seek (a FIFO or socket cannot), and one that does not open and read within twice
     * {@link #READ_PATIENCE} is refused; the thread it holds up goes on waiting alone (a read is interrupted; an open
     * of a FIFO waits for a writer).
     *
     * @throws RefusedFile if it is a link, not a regular file, larger than {@code maxBytes}, or does not open and read in time
     */
    public static byte[] readSharedFile(Path file, int maxBytes) throws IOException {
        return checked(file, maxBytes) ? readInTime(file, maxBytes) : null;
    }

    /** Whether the file is there, checked without following a link: a regular file of at most {@code maxBytes}. */
    private static boolean checked(Path file, int maxBytes) throws IOException {
        PosixFileAttributes attributes;
        try {
            attributes = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return false;
        }
        if (attributes.isSymbolicLink()) {
            throw new RefusedFile(file, "is a symbolic link");
        }
        if (!attributes.isRegularFile()) {
            throw new RefusedFile(file, "is not a regular file");
        }
        if (attributes.size() > maxBytes) {
            throw new RefusedFile(file, "is larger than " + maxBytes + " bytes");
        }
        return true;
    }

    /** Opens {@code file} without following a link and reads it, waited for twice {@link #READ_PATIENCE} at most. */
    static byte[] readInTime(Path file, int maxBytes) throws IOException {
        Future<byte[]> reading = READERS.submit(() -> readOpened(file, maxBytes));
        try {
            try {
                return reading.get(READ_PATIENCE.toNanos(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                return reading.get(READ_PATIENCE.toNanos(), TimeUnit.NANOSECONDS); // the reader may have been paused too
            }
        } catch (ExecutionException e) {
            if (e.getCause() instanceof NoSuchFileException) {
                return null;
            }
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        } catch (TimeoutException e) {
            reading.cancel(true);
            throw new RefusedFile(file, "did not open and read within " + 2 * READ_PATIENCE.toMillis() + " ms (not a regular file any more?)");
        } catch (InterruptedException e) {
            reading.cancel(true);
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while reading " + file.getFileName());
        }
    }

    /**
     * Opens a file the workload may have replaced (a log) to be read, without following a link: the open is waited for
     * twice {@link #READ_PATIENCE} at most (a FIFO's waits for a writer), and what opened is refused unless it can seek (a
     * FIFO or socket cannot), so reading it never waits on the workload.
     *
     * @throws RefusedFile if it does not open in time or is not a regular file
     */
    static FileChannel openRegular(Path file) throws IOException {
        Future<FileChannel> opening = READERS.submit(() -> FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS));
        FileChannel channel;
        try {
            try {
                channel = opening.get(READ_PATIENCE.toNanos(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                channel = opening.get(READ_PATIENCE.toNanos(), TimeUnit.NANOSECONDS);
            }
        } catch (ExecutionException e) {
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        } catch (TimeoutException e) {
            READERS.execute(() -> closeWhenOpen(opening));
            throw new RefusedFile(file, "did not open within " + 2 * READ_PATIENCE.toMillis() + " ms (not a regular file any more?)");
        } catch (InterruptedException e) {
            READERS.execute(() -> closeWhenOpen(opening));
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while opening " + file.getFileName());
        }
        try {
            channel.position(); // a FIFO or a socket has no position (ESPIPE)
            return channel;
        } catch (IOException e) {
            channel.close();
            throw new RefusedFile(file, "is not a regular file");
        }
    }

    private static void closeWhenOpen(Future<FileChannel> opening) {
        try {
            opening.get().close();
        } catch (Exception e) {
            // it never opened, or closing a file only read failed
        }
    }

    private static byte[] readOpened(Path file, int maxBytes) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            try {
                channel.position(); // a FIFO or a socket has no position (ESPIPE): nothing is read from one
            } catch (IOException e) {
                throw new RefusedFile(file, "is not a regular file");
            }
            byte[] data = Channels.newInputStream(channel).readNBytes(maxBytes + 1);
            if (data.length > maxBytes) {
                throw new RefusedFile(file, "is larger than " + maxBytes + " bytes");
            }
            return data;
        }
    }

    /**
     * The number a control file holds ({@code uid}, {@code restart}, an epoch: one line), or {@code null} if there is
     * none, or it is not a small regular file that holds a number.
     */
    public static Integer readControlNumber(Path file) {
        try {
            byte[] data = readControlFile(file, 64);
            return data == null ? null : Integer.valueOf(new String(data, StandardCharsets.US_ASCII).trim());
        } catch (IOException | NumberFormatException e) {
            return null;
        }
    }

    /**
     * The content of a file in a directory the workload writes, or {@code null} if there is none. The file is pinned
     * into {@code pinDir} (a directory of the server's on the same file system) and only the pinned inode is read.
     *
     * @param owner the uid the file must belong to, or {@code null} for any
     * @throws RefusedFile if it is not a regular file of {@code owner} with a single name, or is too large
     */
    static Content readWorkloadFile(Path file, Path pinDir, int maxBytes, Integer owner) throws IOException {
        try (PinnedFile pinned = PinnedFile.take(file, pinDir, owner)) {
            if (pinned == null) {
                return null;
            }
            return new Content(pinned.read(maxBytes), pinned.attributes().lastModifiedTime().toInstant());
        }
    }

    /**
     * Writes a file in a directory only the server can change, atomically (a temporary file renamed over it): a
     * reader never sees half of it, and a link left where the temporary file goes is replaced, never followed.
     */
    public static void writeControlFile(Path file, byte[] data, String permissions) throws IOException {
        Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
        Files.deleteIfExists(temporary);
        Set<PosixFilePermission> mode = PosixFilePermissions.fromString(permissions);
        try (SeekableByteChannel out = Files.newByteChannel(temporary, EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                PosixFilePermissions.asFileAttribute(mode))) {
            ByteBuffer buffer = ByteBuffer.wrap(data);
            while (buffer.hasRemaining()) {
                out.write(buffer);
            }
        }
        Files.setPosixFilePermissions(temporary, mode); // the umask may have taken bits away
        Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** Creates an empty marker file if missing, in a directory only the server can change; never follows a link. */
    static void touchControlFile(Path file) throws IOException {
        try {
            Files.newByteChannel(file, EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--"))).close();
        } catch (FileAlreadyExistsException e) {
            // there already
        }
    }

    /** Whether anything is there by that name, without following a link or opening it. */
    static boolean exists(Path file) {
        return Files.exists(file, LinkOption.NOFOLLOW_LINKS);
    }

    /** Sets owner and group of a path the server made, without following a link. */
    public static void chown(Path path, int uid, int gid) throws IOException {
        Files.setAttribute(path, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(path, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
    }
}
