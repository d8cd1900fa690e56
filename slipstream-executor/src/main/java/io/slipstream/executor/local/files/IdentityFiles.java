package io.slipstream.executor.local.files;

import io.slipstream.executor.IdentityToken;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Set;

/**
 * An instance's identity tokens: {@code <instance dir>/identity/token-<n>.jwt}, readable by the instance's run only
 * (with isolation 0440, the server's, in the run's group) and removed when it ends. The directory is the server's and
 * the workload can write nothing in it, nor in the instance directory above it, so it can plant no link or FIFO where a
 * token is written; files are still created new without following links ({@code CREATE_NEW}, {@code NOFOLLOW_LINKS}).
 * A refresh writes each token to a new file and renames it over the old one: a reader sees the old token or the new
 * one, never half of one, and a reader that holds the old file open keeps reading it whole.
 */
final class IdentityFiles {
    static final String DIR = "identity";
    private static final LinkOption NOFOLLOW = LinkOption.NOFOLLOW_LINKS;
    private static final Set<OpenOption> NEW_FILE = Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, NOFOLLOW);

    private IdentityFiles() {
    }

    /**
     * Writes the tokens under {@code <instanceDir>/identity} (replacing what an interrupted start left there) and
     * returns that directory.
     *
     * @param uid the run's uid, whose group may read them, or {@code null} (they belong to the server's user, as the instance)
     */
    static synchronized Path write(Path instanceDir, List<IdentityToken> tokens, Integer uid) throws IOException {
        Path root = instanceDir.resolve(DIR);
        SecretFiles.removeDirectory(instanceDir, DIR);
        // The owner (the server) keeps write permission: it renames refreshed tokens into place while the instance runs.
        Files.createDirectory(root, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        for (IdentityToken token : tokens) {
            replace(root, token, uid);
        }
        Files.setPosixFilePermissions(root, PosixFilePermissions.fromString(uid == null ? "rwx------" : "rwxr-x---"));
        SecretFiles.own(root, uid);
        return root;
    }

    /**
     * Replaces the tokens of a running instance; {@code false} if its directory of tokens is gone (the instance ended
     * and they were removed) or is not the directory the server made.
     */
    static synchronized boolean refresh(Path instanceDir, List<IdentityToken> tokens, Integer uid) throws IOException {
        Path root = instanceDir.resolve(DIR);
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(root, BasicFileAttributes.class, NOFOLLOW);
        } catch (NoSuchFileException e) {
            return false;
        }
        if (!attributes.isDirectory()) {
            return false; // never written through whatever stands there instead
        }
        for (IdentityToken token : tokens) {
            replace(root, token, uid);
        }
        return true;
    }

    /** Removes the tokens (the instance ended); what is not there is fine. */
    static synchronized void remove(Path instanceDir) throws IOException {
        SecretFiles.removeDirectory(instanceDir, DIR);
    }

    /** Writes the token to {@code .<file>.new} and renames that over {@code <file>}. */
    private static void replace(Path root, IdentityToken token, Integer uid) throws IOException {
        Path target = root.resolve(token.file());
        Path fresh = root.resolve("." + token.file() + ".new");
        Files.deleteIfExists(fresh); // left by a refresh that was cut short; deleting a link removes the link itself
        try (SeekableByteChannel channel = Files.newByteChannel(fresh, NEW_FILE,
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(uid == null ? "r--------" : "r--r-----")))) {
            ByteBuffer bytes = ByteBuffer.wrap(token.token().reveal().getBytes(StandardCharsets.UTF_8));
            while (bytes.hasRemaining()) {
                channel.write(bytes);
            }
        }
        SecretFiles.own(fresh, uid);
        Files.move(fresh, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
