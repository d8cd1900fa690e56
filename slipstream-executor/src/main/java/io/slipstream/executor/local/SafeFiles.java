package io.slipstream.executor.local;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
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
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reading and writing the files of an instance as the server, which may be root, without being led anywhere by the
 * workload. Two kinds of directory matter:
 * <ul>
 *   <li>the instance's control directory belongs to the server and the workload cannot create, rename or replace
 *       anything in it: what is read there is read as a regular file, without following links, with a size limit;</li>
 *   <li>a directory the workload writes ({@code report/}): a name there can be swapped for a link, a FIFO or a device
 *       at any moment, so the file is first pinned by a hard link into a directory of the server's (link(2) neither
 *       follows a symbolic link nor opens anything), and only that pinned inode is examined and read.</li>
 * </ul>
 * Nothing here blocks: a FIFO, socket or device is refused before it is ever opened.
 */
final class SafeFiles {
    private static final AtomicLong PINS = new AtomicLong();

    private SafeFiles() {
    }

    /** What a workload's file held, and when it was last written. */
    record Content(byte[] data, java.time.Instant modified) {
    }

    /** A file that is there but is not what the server accepts (a link, a FIFO, too large...). */
    static final class RefusedFile extends IOException {
        RefusedFile(Path file, String why) {
            super(file.getFileName() + " " + why);
        }
    }

    /**
     * The content of a regular file in a directory only the server can change, or {@code null} if there is none.
     *
     * @throws RefusedFile if it is a link, not a regular file, or larger than {@code maxBytes}
     */
    static byte[] readControlFile(Path file, int maxBytes) throws IOException {
        PosixFileAttributes attributes;
        try {
            attributes = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        }
        check(file, file, attributes, maxBytes, null);
        return read(file, maxBytes);
    }

    /**
     * The content of a file in a directory the workload writes, or {@code null} if there is none. The file is pinned
     * into {@code pinDir} (a directory of the server's on the same file system) and only the pinned inode is read.
     *
     * @param owner the uid the file must belong to, or {@code null} for any
     * @throws RefusedFile if it is not a regular file of {@code owner} with a single name, or is too large
     */
    static Content readWorkloadFile(Path file, Path pinDir, int maxBytes, Integer owner) throws IOException {
        Path pin = pinDir.resolve("pin-" + ProcessHandle.current().pid() + "-" + PINS.incrementAndGet());
        try {
            Files.createLink(pin, file); // link(2): a symbolic link is linked as itself, never followed
        } catch (NoSuchFileException e) {
            return null;
        } catch (FileAlreadyExistsException e) {
            throw new IOException("pin " + pin + " exists", e);
        } catch (IOException e) {
            // A directory (links to directories are not allowed), or another file system: not a report file.
            if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
                throw new RefusedFile(file, "cannot be read: " + e.getMessage());
            }
            return null;
        }
        try {
            PosixFileAttributes attributes = Files.readAttributes(pin, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            check(file, pin, attributes, maxBytes, owner);
            Object links = Files.getAttribute(pin, "unix:nlink", LinkOption.NOFOLLOW_LINKS);
            if (links instanceof Integer count && count > 2) {
                throw new RefusedFile(file, "has other names (a hard link to another file)");
            }
            byte[] data = read(pin, maxBytes);
            return data == null ? null : new Content(data, attributes.lastModifiedTime().toInstant());
        } finally {
            Files.deleteIfExists(pin);
        }
    }

    /** {@code file} names it in messages; {@code inspected} is the name it is examined under (the pin, if pinned). */
    private static void check(Path file, Path inspected, PosixFileAttributes attributes, int maxBytes, Integer owner) throws IOException {
        if (attributes.isSymbolicLink()) {
            throw new RefusedFile(file, "is a symbolic link");
        }
        if (!attributes.isRegularFile()) {
            throw new RefusedFile(file, "is not a regular file");
        }
        if (attributes.size() > maxBytes) {
            throw new RefusedFile(file, "is larger than " + maxBytes + " bytes");
        }
        if (owner != null) {
            Object uid = Files.getAttribute(inspected, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            if (!(uid instanceof Integer id) || id.intValue() != owner) {
                throw new RefusedFile(file, "does not belong to the instance's user");
            }
        }
    }

    private static byte[] read(Path file, int maxBytes) throws IOException {
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
     * Writes a file in a directory only the server can change, atomically (a temporary file renamed over it): a
     * reader never sees half of it, and a link left where the temporary file goes is replaced, never followed.
     */
    static void writeControlFile(Path file, byte[] data, String permissions) throws IOException {
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
    static void chown(Path path, int uid, int gid) throws IOException {
        Files.setAttribute(path, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(path, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
    }
}
