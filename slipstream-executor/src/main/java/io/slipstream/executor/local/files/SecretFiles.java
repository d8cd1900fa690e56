package io.slipstream.executor.local.files;

import io.slipstream.executor.LaunchSpec;
import io.slipstream.api.spec.SecretValue;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The files of an instance's Secrets: {@code <instance dir>/secrets/<secret>/<key>}, written before the instance starts,
 * each readable by the instance's run only (with isolation 0440, the server's, in the run's group; directories 0550),
 * and removed when it ends. Nothing here follows a link: files are created new ({@code CREATE_NEW},
 * {@code NOFOLLOW_LINKS}) and removal works relative to open directories, so a link the workload plants leads nowhere.
 */
final class SecretFiles {
    static final String DIR = "secrets";
    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;

    private SecretFiles() {
    }

    /**
     * Writes every secret's files under {@code <instanceDir>/secrets} (replacing what an interrupted start left there)
     * and returns that directory.
     *
     * @param uid the run's uid, which then owns them, or {@code null} (they belong to the server's user, as the instance)
     */
    static Path write(Path instanceDir, List<LaunchSpec.SecretFiles> secrets, Integer uid) throws IOException {
        Path root = instanceDir.resolve(DIR);
        remove(instanceDir);
        Files.createDirectory(root, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        for (LaunchSpec.SecretFiles secret : secrets) {
            Path dir = child(root, secret.name());
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            for (Map.Entry<String, SecretValue> file : secret.files().entrySet()) {
                Path path = child(dir, file.getKey());
                Set<OpenOption> options = Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, NOFOLLOW);
                try (SeekableByteChannel channel = Files.newByteChannel(path, options,
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(uid == null ? "r--------" : "r--r-----")))) {
                    ByteBuffer bytes = ByteBuffer.wrap(file.getValue().reveal().getBytes(StandardCharsets.UTF_8));
                    while (bytes.hasRemaining()) {
                        channel.write(bytes);
                    }
                }
                own(path, uid);
            }
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(uid == null ? "r-x------" : "r-xr-x---"));
            own(dir, uid);
        }
        Files.setPosixFilePermissions(root, PosixFilePermissions.fromString(uid == null ? "r-x------" : "r-xr-x---"));
        own(root, uid);
        return root;
    }

    /** Removes {@code <instanceDir>/secrets} with everything in it; what is not there is fine. */
    static void remove(Path instanceDir) throws IOException {
        removeDirectory(instanceDir, DIR);
    }

    /** Removes {@code <instanceDir>/<name>} with everything in it, following no link; what is not there is fine. */
    static void removeDirectory(Path instanceDir, String name) throws IOException {
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(instanceDir)) {
            if (!(stream instanceof SecureDirectoryStream<Path> secure)) {
                throw new IOException("this platform cannot remove files without following links");
            }
            removeTree(secure, Path.of(name));
        } catch (NoSuchFileException e) {
            // no instance directory: nothing to remove
        }
    }

    private static void removeTree(SecureDirectoryStream<Path> parent, Path name) throws IOException {
        BasicFileAttributes attributes;
        try {
            attributes = parent.getFileAttributeView(name, BasicFileAttributeView.class, NOFOLLOW).readAttributes();
        } catch (NoSuchFileException e) {
            return;
        }
        if (!attributes.isDirectory()) {
            parent.deleteFile(name); // a file or a link: the link itself goes, never what it points to
            return;
        }
        // Its owner may need write permission to empty it (a server that is not root); opened without following links.
        parent.getFileAttributeView(name, PosixFileAttributeView.class, NOFOLLOW).setPermissions(PosixFilePermissions.fromString("rwx------"));
        try (SecureDirectoryStream<Path> children = parent.newDirectoryStream(name, NOFOLLOW)) {
            for (Path child : children) {
                removeTree(children, child.getFileName());
            }
        }
        parent.deleteDirectory(name);
    }

    private static Path child(Path dir, String name) {
        Path child = dir.resolve(name);
        if (!child.getParent().equals(dir) || name.equals(".") || name.equals("..")) {
            throw new IllegalArgumentException("'" + name + "' is not a file name");
        }
        return child;
    }

    /**
     * Readable by the run through its group (the gid of the run's uid's number), but the server's: the workload can
     * neither change the files nor rearrange the directories, so removing them never meets what it planted.
     */
    static void own(Path path, Integer uid) throws IOException {
        if (uid != null) {
            Files.setAttribute(path, "unix:gid", uid, NOFOLLOW);
        }
    }
}
