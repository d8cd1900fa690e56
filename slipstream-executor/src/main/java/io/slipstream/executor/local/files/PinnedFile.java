package io.slipstream.executor.local.files;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A file of a directory the workload writes, taken by a hard link into a directory of the server's (its pin directory,
 * on the same file system): link(2) neither follows a symbolic link nor opens anything, and a name the workload swaps
 * afterwards no longer matters. Only the pinned inode is examined, and it is accepted only as a regular file with no
 * other name (a hard link to a file the workload does not own) that belongs to the run's uid when one is given. It is
 * opened only once accepted, so a FIFO, socket or device is refused before it could block anything. A regular file can
 * still hold an open up: its owner may hold a lease on it (fcntl F_SETLEASE), and then every other open waits until the
 * owner lets go or the kernel's lease-break-time passes (45 s by default), and Java cannot open without waiting
 * (O_NONBLOCK). So the inode is opened on a thread of its own and waited for twice {@link #OPEN_PATIENCE} at most:
 * opening an inode already found reads nothing from the disk, so only a lease (or a file system that hangs) takes
 * longer ({@link Stalled}); the second wait is there so that a pause of the whole JVM (a collection) that outlasts the
 * first is not taken for one. Closing lets go of the pin. Every read of a workload's file goes through here: its
 * progress ({@link SafeFiles#readWorkloadFile}) and the archive an image pull left in its staging area.
 */
public final class PinnedFile implements AutoCloseable {
    /** How long an open of the pinned inode is waited for, twice. */
    static final Duration OPEN_PATIENCE = Duration.ofMillis(250);
    private static final AtomicLong PINS = new AtomicLong();
    /** Opens pinned inodes; a thread held up by a lease waits for it alone, and closes what it opened late. */
    private static final ExecutorService OPENER = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "slipstream-pinned-open");
        thread.setDaemon(true);
        return thread;
    });

    private final Path file;
    private final Path pin;
    private final PosixFileAttributes attributes;

    private PinnedFile(Path file, Path pin, PosixFileAttributes attributes) {
        this.file = file;
        this.pin = pin;
        this.attributes = attributes;
    }

    /**
     * Makes a pin directory (the server's alone) and lets go of the pins a crash left in it.
     *
     * @return the directory
     */
    public static Path prepareDirectory(Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        try (DirectoryStream<Path> stale = Files.newDirectoryStream(dir)) {
            for (Path pin : stale) {
                Files.deleteIfExists(pin);
            }
        }
        return dir;
    }

    /**
     * Pins {@code file} into {@code pinDir} and checks what it is.
     *
     * @param owner the uid the file must belong to, or {@code null} for any
     * @return the pinned file, or {@code null} if there is none by that name
     * @throws SafeFiles.RefusedFile if it is a link, not a regular file, not {@code owner}'s, or has other names
     */
    public static PinnedFile take(Path file, Path pinDir, Integer owner) throws IOException {
        Path pin = pinDir.resolve("pin-" + ProcessHandle.current().pid() + "-" + PINS.incrementAndGet());
        try {
            Files.createLink(pin, file); // link(2): a symbolic link is linked as itself, never followed
        } catch (NoSuchFileException e) {
            return null;
        } catch (FileAlreadyExistsException e) {
            throw new IOException("pin " + pin + " exists", e);
        } catch (IOException e) {
            // A directory (links to directories are not allowed), or another file system: not a workload's file.
            if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
                throw new SafeFiles.RefusedFile(file, "cannot be read: " + e.getMessage());
            }
            return null;
        }
        try {
            PosixFileAttributes attributes = Files.readAttributes(pin, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (attributes.isSymbolicLink()) {
                throw new SafeFiles.RefusedFile(file, "is a symbolic link");
            }
            if (!attributes.isRegularFile()) {
                throw new SafeFiles.RefusedFile(file, "is not a regular file");
            }
            if (owner != null) {
                Object uid = Files.getAttribute(pin, "unix:uid", LinkOption.NOFOLLOW_LINKS);
                if (!(uid instanceof Integer id) || id.intValue() != owner) {
                    throw new SafeFiles.RefusedFile(file, "does not belong to the instance's user");
                }
            }
            // Its own name and the pin; one alone if the workload removed its name since (the inode is the pin's then).
            Object links = Files.getAttribute(pin, "unix:nlink", LinkOption.NOFOLLOW_LINKS);
            if (!(links instanceof Integer count) || count > 2) {
                throw new SafeFiles.RefusedFile(file, "has other names (a hard link to another file)");
            }
            return new PinnedFile(file, pin, attributes);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(pin);
            throw e;
        }
    }

    /**
     * A file that did not open in time: its owner holds a lease on it (an open waits until the owner lets go, or the
     * kernel breaks the lease), or its file system hangs.
     */
    public static final class Stalled extends IOException {
        Stalled(Path file) {
            super(file.getFileName() + " did not open within " + 2 * OPEN_PATIENCE.toMillis() + " ms (a lease of its owner's on it?)");
        }
    }

    /** What the file was when it was pinned (its size and times are the inode's, which its owner may still change). */
    public PosixFileAttributes attributes() {
        return attributes;
    }

    /** The pin's own name, for a tool that looks at the inode without opening it ({@code stat}). */
    public Path pin() {
        return pin;
    }

    /**
     * Its content, at most {@code maxBytes}.
     *
     * @throws SafeFiles.RefusedFile if it holds more (it may have grown since it was pinned)
     * @throws Stalled if it did not open in time (its owner holds a lease on it)
     */
    byte[] read(int maxBytes) throws IOException {
        if (attributes.size() > maxBytes) {
            throw new SafeFiles.RefusedFile(file, "is larger than " + maxBytes + " bytes");
        }
        try (FileChannel channel = open()) {
            byte[] data = Channels.newInputStream(channel).readNBytes(maxBytes + 1);
            if (data.length > maxBytes) {
                throw new SafeFiles.RefusedFile(file, "is larger than " + maxBytes + " bytes");
            }
            return data;
        }
    }

    /**
     * Copies its first {@code bytes} (its size when pinned: its owner may go on appending while it is copied) into
     * {@code target}, a new file of the server's; a target left by a failed copy is removed.
     *
     * @throws IOException if it shrank meanwhile
     * @throws Stalled if it did not open in time (its owner holds a lease on it)
     */
    public void copyTo(Path target, long bytes) throws IOException {
        try (FileChannel from = open();
             FileChannel to = FileChannel.open(target, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (long done = 0; done < bytes; ) {
                long moved = from.transferTo(done, bytes - done, to);
                if (moved <= 0) {
                    throw new IOException(file.getFileName() + " shrank while it was copied");
                }
                done += moved;
            }
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(target);
            throw e;
        }
    }

    /**
     * The pinned inode, opened to be read, waited for twice {@link #OPEN_PATIENCE} at most. An open that takes longer
     * goes on alone, and closes what it opens once the lease is gone.
     */
    private FileChannel open() throws IOException {
        CompletableFuture<FileChannel> opening = CompletableFuture.supplyAsync(() -> {
            try {
                return FileChannel.open(pin, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, OPENER);
        try {
            try {
                return opening.get(OPEN_PATIENCE.toNanos(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                return opening.get(OPEN_PATIENCE.toNanos(), TimeUnit.NANOSECONDS); // the opener may have been paused too
            }
        } catch (ExecutionException e) {
            throw e.getCause() instanceof UncheckedIOException unchecked ? unchecked.getCause() : new IOException(e.getCause());
        } catch (TimeoutException e) {
            opening.thenAccept(PinnedFile::closeQuietly);
            throw new Stalled(file);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            opening.thenAccept(PinnedFile::closeQuietly);
            throw new InterruptedIOException("interrupted while opening " + file.getFileName());
        }
    }

    private static void closeQuietly(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // closing a file only read
        }
    }

    /** Lets go of the pin (the workload's own name, if it still has one, stays). */
    @Override
    public void close() throws IOException {
        Files.deleteIfExists(pin);
    }
}
