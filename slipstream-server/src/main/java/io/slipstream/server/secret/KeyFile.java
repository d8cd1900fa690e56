package io.slipstream.server.secret;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A file holding 32 random bytes as one line of base64, readable by the server's user only (0600). */
final class KeyFile {
    private static final Logger LOG = LoggerFactory.getLogger(KeyFile.class);
    static final int BYTES = 32;
    private static final SecureRandom RANDOM = new SecureRandom();

    private KeyFile() {
    }

    /** The key in {@code file}, or {@code null} if there is no such file. */
    static byte[] read(Path file, String what) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.US_ASCII).trim();
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the " + what + " " + file, e);
        }
        byte[] key;
        try {
            key = Base64.getDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            key = null;
        }
        if (key == null || key.length != BYTES) {
            throw new IllegalStateException(file + " is not a " + what + ": it must hold " + BYTES + " bytes as one line of base64 "
                    + "(make one with: head -c 32 /dev/urandom | base64)");
        }
        try {
            Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(file);
            if (permissions.stream().anyMatch(p -> p.name().startsWith("GROUP") || p.name().startsWith("OTHERS"))) {
                LOG.warn("the {} {} may be read by other users ({}): chmod 600 it", what, file, PosixFilePermissions.toString(permissions));
            }
        } catch (IOException | UnsupportedOperationException e) {
            // not a POSIX file system: nothing to check
        }
        return key;
    }

    /** Makes a new key file (0600, written completely before it appears) and returns its key. */
    static byte[] create(Path file, String what) {
        byte[] key = new byte[BYTES];
        RANDOM.nextBytes(key);
        Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Files.deleteIfExists(temporary);
            Files.createFile(temporary, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(temporary, Base64.getEncoder().encodeToString(key) + "\n", StandardCharsets.US_ASCII);
            Files.createLink(file, temporary); // complete when it appears, and never over an existing one
            Files.delete(temporary);
        } catch (java.nio.file.FileAlreadyExistsException e) {
            throw new IllegalStateException("the " + what + " " + file + " appeared while this server was making one: start again", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the " + what + " " + file, e);
        }
        return key;
    }
}
