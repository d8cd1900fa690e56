package io.slipstream.executor.local.files;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
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
import java.util.EnumSet;
import java.util.Set;

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
 * Nothing here blocks: a FIFO, socket or device is refused before it is ever opened.
 */
public final class SafeFiles {
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
        PosixFileAttributes attributes;
        try {
            attributes = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
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
